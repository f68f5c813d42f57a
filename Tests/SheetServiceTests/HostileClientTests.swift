import Foundation
import MicroHTTP
import SheetService
import TestSupport
import Testing

/// What one user's token can make the server hold: long-polls, streams past their token, catalogs and
/// event floods are all bounded (SECURITY.md's limits table).
@Suite struct HostileClientTests {
    static let decisionPath = "/v1/users/u1/decision?" + Fixtures.homeAccountsIOS

    /// `sheetd_long_polls_waiting` from /metrics.
    private func longPollsWaiting(_ live: LiveService) throws -> Int {
        let text = try live.get("/metrics").text
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("sheetd_long_polls_waiting ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }

    private func waitUntil(seconds: Double = 5, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try !condition() {
            guard Date() < deadline else { throw TestError("condition not met within \(seconds) s") }
            usleep(10_000)
        }
    }

    /// Sends a long-poll (`Prefer: wait=60` on the current ETag) for `user` and returns its connection
    /// without reading the answer.
    private func parkLongPoll(_ live: LiveService, user: String, etag: String) throws -> RawConnection {
        let connection = try RawConnection(port: live.server.port)
        try connection.send(
            "GET /v1/users/\(user)/decision?\(Fixtures.homeAccountsIOS) HTTP/1.1\r\nHost: x\r\n"
                + "Authorization: Bearer \(LiveService.adminToken)\r\nIf-None-Match: \(etag)\r\nPrefer: wait=60\r\n\r\n")
        return connection
    }

    /// Long-polls whose clients closed are noticed at once: none stays parked for the rest of its wait
    /// (they used to hold their connection and their place for the whole 60 s).
    @Test func closedLongPollsAreNotParked() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let etag = try #require(try live.get(Self.decisionPath).header("ETag"))
        var connections: [RawConnection] = []
        for i in 0..<200 { connections.append(try parkLongPoll(live, user: "lp\(i % 25)", etag: etag)) }
        try waitUntil { try longPollsWaiting(live) == 200 }
        let closed = Date()
        connections.removeAll()  // closes every socket
        try waitUntil(seconds: 2) { try longPollsWaiting(live) == 0 }
        #expect(Date().timeIntervalSince(closed) < 1.5)
    }

    /// A user has at most 8 long-polls waiting; the ninth is 429 with Retry-After, and a place frees as
    /// soon as one of the eight's clients goes away.
    @Test func longPollsPerUserAreLimited() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let etag = try #require(try live.get(Self.decisionPath).header("ETag"))
        var held: [RawConnection] = []
        for _ in 0..<8 { held.append(try parkLongPoll(live, user: "u1", etag: etag)) }
        try waitUntil { try longPollsWaiting(live) == 8 }
        let ninth = try live.get(Self.decisionPath, headers: ["If-None-Match": etag, "Prefer": "wait=60"])
        #expect(ninth.status == 429)
        #expect(ninth.header("Retry-After") != nil)
        #expect(ninth.text.contains("long-polls"))
        // Another user is not affected, and a conditional GET without a wait neither.
        #expect(try live.get("/v1/users/u2/decision?" + Fixtures.homeAccountsIOS).status == 200)
        #expect(try live.get(Self.decisionPath, headers: ["If-None-Match": etag]).status == 304)
        held.removeFirst()
        try waitUntil { try longPollsWaiting(live) == 7 }
        let again = try parkLongPoll(live, user: "u1", etag: etag)
        try waitUntil { try longPollsWaiting(live) == 8 }
        _ = again
    }

    /// A stream ends when its token stops being accepted (exp plus the leeway, 0 here): a last
    /// `token-expired` event, then the body ends, while the decision route answers 401 to that token.
    @Test func aStreamEndsWhenItsTokenExpires() throws {
        let live = try LiveService(tokenLeewaySeconds: 0)
        try Fixtures.install(live)
        let token = live.userToken("u1", ttl: 2)
        let stream = try EventStreamClient(
            port: live.server.port, target: "/v1/users/u1/decision/stream?" + Fixtures.homeAccountsIOS,
            headers: [("Authorization", "Bearer \(token)")])
        #expect(stream.head.status == 200)
        let started = Date()
        var events: [EventStreamClient.Event] = []
        while let event = try stream.next(timeoutMilliseconds: 6000) { events.append(event) }
        #expect(events.contains { $0.event == "decision" })
        #expect(events.last?.event == "token-expired")
        #expect(events.last?.data?.contains("fresh token") == true)
        #expect(stream.ended)
        #expect(Date().timeIntervalSince(started) < 4.5)
        let afterwards = try live.get(Self.decisionPath, token: token)
        #expect(afterwards.status == 401, "\(afterwards.status) \(afterwards.text)")
        try waitUntil { live.service.openStreamCount == 0 }
    }

    /// The admin token does not expire: its streams stay open.
    @Test func adminStreamsDoNotExpire() throws {
        let live = try LiveService(tokenLeewaySeconds: 0)
        try Fixtures.install(live)
        let stream = try EventStreamClient(
            port: live.server.port, target: "/v1/users/u1/decision/stream?" + Fixtures.homeAccountsIOS,
            headers: [("Authorization", "Bearer \(LiveService.adminToken)")])
        let events = stream.drain(quietMilliseconds: 2500)
        #expect(events.contains { $0.event == "decision" })
        #expect(!events.contains { $0.event == "token-expired" })
        #expect(!stream.ended)
    }

    /// The catalog's size limits: a sheet that would make a screen hold more than its cap, or the
    /// catalog more than its own, is 409 `limit-exceeded` naming the limit; replacing a sheet is fine.
    @Test func catalogSizeIsLimited() throws {
        let live = try LiveService(catalogLimits: CatalogLimits(sheets: 5, sheetsPerScreen: 3))
        for i in 0..<3 {
            #expect(try live.put("/v1/sheets/h\(i)", #"{"kind":"informational","screen":"home"}"#).status == 201)
        }
        let perScreen = try live.put("/v1/sheets/h3", #"{"kind":"informational","screen":"home"}"#)
        #expect(perScreen.status == 409)
        #expect(perScreen.json["limit"] as? String == "sheets-per-screen")
        #expect(perScreen.json["maximum"] as? Int == 3)
        #expect(perScreen.text.contains("SHEETD_MAX_SHEETS_PER_SCREEN"))
        #expect(try live.put("/v1/sheets/h0", #"{"kind":"informational","screen":"home","title":"New"}"#).status == 200)
        // Moving a sheet off a full screen makes room on it.
        #expect(try live.put("/v1/sheets/h0", #"{"kind":"informational","screen":"other"}"#).status == 200)
        #expect(try live.put("/v1/sheets/h3", #"{"kind":"informational","screen":"home"}"#).status == 201)
        #expect(try live.put("/v1/sheets/o1", #"{"kind":"informational","screen":"other"}"#).status == 201)
        let total = try live.put("/v1/sheets/o2", #"{"kind":"informational","screen":"other"}"#)
        #expect(total.status == 409)
        #expect(total.json["limit"] as? String == "sheets")
        #expect(total.json["maximum"] as? Int == 5)
        #expect(try live.get("/v1/sheets/o2").status == 404)
    }

    /// `GET /v1/sheets` pages: `limit` sheets ordered by id, `next` to pass as `after`, null on the last page.
    @Test func theCatalogListPages() throws {
        let live = try LiveService()
        let ids = (0..<7).map { "s\($0)" }
        for id in ids.reversed() {
            #expect(try live.put("/v1/sheets/\(id)", #"{"kind":"informational","screen":"home"}"#).status == 201)
        }
        var seen: [String] = []
        var after: String?
        var pages = 0
        repeat {
            let page = try live.get("/v1/sheets?limit=3" + (after.map { "&after=\($0)" } ?? ""), token: live.userToken("u1"))
            #expect(page.status == 200)
            let sheets = try #require(page.json["sheets"] as? [[String: Any]])
            #expect(sheets.count <= 3)
            seen += sheets.compactMap { $0["id"] as? String }
            after = page.json["next"] as? String
            #expect(page.json.keys.contains("next"))
            pages += 1
        } while after != nil && pages < 10
        #expect(seen == ids)
        #expect(pages == 3)
        // Without a limit: the first 100.
        let all = try live.get("/v1/sheets")
        #expect((all.json["sheets"] as? [Any])?.count == 7)
        #expect(all.json["next"] is NSNull)
        for bad in ["limit=0", "limit=501", "limit=x", "after=a%20b", "page=2"] {
            let r = try live.get("/v1/sheets?\(bad)")
            #expect(r.status == 400, "\(bad): \(r.text)")
        }
    }

    /// Events per user are rate limited: past the bucket, 429 with Retry-After, and nothing stored;
    /// other users are not affected.
    @Test func eventsPerUserAreRateLimited() throws {
        let live = try LiveService(eventsPerUserPerMinute: 5)
        try Fixtures.install(live)
        for i in 0..<5 {
            let r = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count": \#(i + 1)}"#)
            #expect(r.status == 200, "\(r.text)")
        }
        let refused = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count": 9}"#)
        #expect(refused.status == 429)
        let retryAfter = try #require(refused.header("Retry-After").flatMap(Int.init))
        #expect((1...12).contains(retryAfter))
        #expect(try live.post("/v1/users/u1/dismissals", #"{"sheetId":"offers","method":"swipe"}"#).status == 429)
        let state = try live.get("/v1/users/u1/state").json
        let containers = try #require(state["containers"] as? [[String: Any]])
        #expect(containers.first?["count"] as? Int == 5)
        #expect(try live.put("/v1/users/u2/containers/offers-home/count", #"{"count": 1}"#).status == 200)
    }

    /// An event id is at most 64 characters (a UUID fits): a longer one is 400 naming eventId.
    @Test func eventIdsAreShort() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let longest = String(repeating: "e", count: 64)
        #expect(try live.put("/v1/users/u1/containers/offers-home/count", #"{"count": 1, "eventId": "\#(longest)"}"#).status == 200)
        let tooLong = try live.put("/v1/users/u1/containers/offers-home/count", #"{"count": 1, "eventId": "\#(longest)x"}"#)
        #expect(tooLong.status == 400)
        #expect(tooLong.text.contains("eventId"))
        #expect(tooLong.text.contains("64"))
    }
}

import Foundation
import MicroHTTP
import SheetService
import TestSupport
import Testing

/// Pushed decisions over real HTTP: the Server-Sent Events stream and the `Prefer: wait` long-poll.
@Suite struct StreamTests {
    static let path = "/v1/users/u1/decision/stream?" + Fixtures.homeAccountsIOS
    static let decisionPath = "/v1/users/u1/decision?" + Fixtures.homeAccountsIOS

    private func open(
        _ live: LiveService, token: String? = nil, headers: [(String, String)] = [],
        path: String = StreamTests.path
    ) throws -> EventStreamClient {
        let bearer = token ?? live.userToken("u1")
        return try EventStreamClient(port: live.server.port, target: path, headers: [("Authorization", "Bearer \(bearer)")] + headers)
    }

    private func setCount(_ live: LiveService, _ count: Int, user: String = "u1") throws {
        let r = try live.put("/v1/users/\(user)/containers/offers-home/count", #"{"count": \#(count)}"#)
        #expect(r.status == 200, "\(r.text)")
    }

    /// The first message carries a retry hint, then the decision: id is the ETag and data is byte for
    /// byte what GET /decision answers for the same context (unencoded: a gzip-encoded answer has its
    /// own tag, the same one with `-gzip`).
    @Test func firstEventEqualsTheDecision() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        try setCount(live, 2)
        let stream = try open(live)
        #expect(stream.head.status == 200)
        #expect(stream.head.header("Content-Type") == "text/event-stream")
        #expect(stream.head.header("Cache-Control") == "no-cache")
        let hint = try #require(try stream.next())
        #expect(hint.fields["retry"] != nil)
        let first = try #require(try stream.next())
        let get = try live.get(Self.decisionPath, headers: ["Accept-Encoding": "identity"])
        #expect(first.event == "decision")
        #expect(first.id == get.header("ETag"))
        #expect(first.data == get.text)
    }

    /// A write that changes the decision gives exactly one event with the new body; a write that leaves
    /// it equal gives none.
    @Test func aChangeGivesOneEventAndAnEqualDecisionNone() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        try setCount(live, 2)
        let stream = try open(live)
        _ = try stream.next()
        let first = try #require(try stream.next())
        try setCount(live, 3)  // a new count, the same sheet: is the body different? compare with GET
        let afterThree = try live.get(Self.decisionPath)
        var events = stream.drain(quietMilliseconds: 400).filter { $0.event == "decision" }
        if afterThree.header("ETag") == first.id {
            #expect(events.isEmpty)
        } else {
            #expect(events.count == 1)
            #expect(events.first?.data == afterThree.text)
        }
        try setCount(live, 0)
        let afterZero = try live.get(Self.decisionPath)
        #expect(afterZero.header("ETag") != first.id)
        events = stream.drain(quietMilliseconds: 400).filter { $0.event == "decision" }
        #expect(events.count == 1)
        #expect(events.first?.id == afterZero.header("ETag"))
        #expect(events.first?.data == afterZero.text)
        // The same count again: nothing changes, nothing is sent.
        try setCount(live, 0)
        #expect(stream.drain(quietMilliseconds: 400).filter { $0.event == "decision" }.isEmpty)
    }

    /// Another user's writes send nothing on this stream.
    @Test func otherUsersWritesAreNotSent() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let stream = try open(live)
        _ = stream.drain(quietMilliseconds: 300)
        try setCount(live, 4, user: "u2")
        #expect(stream.drain(quietMilliseconds: 400).filter { $0.event == "decision" }.isEmpty)
    }

    /// A catalog change that changes the decision is pushed.
    @Test func catalogChangesArePushed() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        try setCount(live, 2)
        let stream = try open(live)
        _ = stream.drain(quietMilliseconds: 300)
        #expect(try live.request("DELETE", "/v1/sheets/offers").status == 204)
        let events = stream.drain(quietMilliseconds: 500).filter { $0.event == "decision" }
        let get = try live.get(Self.decisionPath)
        #expect(events.count == 1)
        #expect(events.last?.data == get.text)
    }

    /// Erasing the user is pushed too.
    @Test func userEraseIsPushed() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        try setCount(live, 2)
        let stream = try open(live)
        _ = stream.drain(quietMilliseconds: 300)
        #expect(try live.request("DELETE", "/v1/users/u1").status == 204)
        let events = stream.drain(quietMilliseconds: 500).filter { $0.event == "decision" }
        #expect(events.count == 1)
        #expect(events.last?.data == (try live.get(Self.decisionPath)).text)
    }

    /// A reconnecting client whose Last-Event-ID is the current ETag gets no first event; a stale one does.
    @Test func lastEventIdSkipsTheFirstEventWhenUpToDate() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let etag = try #require(try live.get(Self.decisionPath).header("ETag"))
        let upToDate = try open(live, headers: [("Last-Event-ID", etag)])
        let events = upToDate.drain(quietMilliseconds: 400)
        #expect(events.count == 1)  // the retry hint alone
        #expect(events.first?.fields["retry"] != nil)
        let stale = try open(live, headers: [("Last-Event-ID", "\"0000\"")])
        #expect(stale.drain(quietMilliseconds: 400).filter { $0.event == "decision" }.count == 1)
    }

    /// An idle stream gets heartbeat comments.
    @Test func idleStreamsGetHeartbeats() throws {
        let live = try LiveService(streamHeartbeatSeconds: 1)
        try Fixtures.install(live)
        let stream = try open(live)
        _ = try stream.next()
        _ = try stream.next()
        let beat = try #require(try stream.next(timeoutMilliseconds: 3000))
        #expect(beat.comment == "heartbeat")
    }

    /// Heartbeats go out a slice of the streams at a time: every slice comes round, so each of many
    /// idle streams still gets one within one and a half intervals.
    @Test func everyIdleStreamGetsItsHeartbeat() throws {
        let live = try LiveService(streamHeartbeatSeconds: 1)
        try Fixtures.install(live)
        let users = (1...40).map { "hb\($0)" }
        let streams = try users.map { user in
            try open(live, token: live.userToken(user), path: "/v1/users/\(user)/decision/stream?" + Fixtures.homeAccountsIOS)
        }
        for stream in streams {
            _ = try stream.next()
            _ = try stream.next()
        }
        for (user, stream) in zip(users, streams) {
            let beat = try #require(try stream.next(timeoutMilliseconds: 3000), "no heartbeat for \(user)")
            #expect(beat.comment == "heartbeat")
        }
    }

    /// The stream takes the decision's authorization: no token, a bad token, another user's token.
    @Test func authorizationIsTheDecisions() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        #expect(try fetch(live.server.port, "GET", Self.path).status == 401)
        #expect(try fetch(live.server.port, "GET", Self.path, headers: [("Authorization", "Bearer nope")]).status == 401)
        let other = try open(live, token: live.userToken("u2"))
        #expect(other.head.status == 403)
        let admin = try open(live, token: LiveService.adminToken)
        #expect(admin.head.status == 200)
        let badQuery = try open(live, path: "/v1/users/u1/decision/stream?screen=home")
        #expect(badQuery.head.status == 400)
    }

    /// At most 8 streams per user (429 with Retry-After), at most SHEETD_MAX_STREAMS per process (503).
    @Test func limits() throws {
        let live = try LiveService(maxStreams: 10)
        try Fixtures.install(live)
        var held: [EventStreamClient] = []
        for _ in 0..<8 { held.append(try open(live)) }
        #expect(held.allSatisfy { $0.head.status == 200 })
        let ninth = try open(live)
        #expect(ninth.head.status == 429)
        #expect(ninth.head.header("Retry-After") != nil)
        held.append(try open(live, token: live.userToken("u2"), path: "/v1/users/u2/decision/stream?" + Fixtures.homeAccountsIOS))
        held.append(try open(live, token: live.userToken("u3"), path: "/v1/users/u3/decision/stream?" + Fixtures.homeAccountsIOS))
        let eleventh = try open(live, token: live.userToken("u4"), path: "/v1/users/u4/decision/stream?" + Fixtures.homeAccountsIOS)
        #expect(eleventh.head.status == 503)
        #expect(eleventh.head.header("Retry-After") != nil)
        // Closing streams frees their places.
        held.removeAll()
        try waitUntil { live.service.openStreamCount == 0 }
        #expect(try open(live).head.status == 200)
    }

    /// Disconnects free everything at once: the registries are empty as soon as the clients close, with
    /// nothing written to their streams.
    @Test func disconnectsFreeEverything() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        var clients: [EventStreamClient] = []
        for i in 0..<20 {
            let user = "d\(i)"
            clients.append(try open(live, token: live.userToken(user), path: "/v1/users/\(user)/decision/stream?" + Fixtures.homeAccountsIOS))
        }
        for client in clients { _ = try client.next() }
        #expect(live.service.openStreamCount == 20)
        clients.removeAll()
        // Noticed without any write to them (the default heartbeat is 15 s away).
        try waitUntil { live.service.openStreamCount == 0 }
        #expect(live.server.openStreamCount == 0)
    }

    /// A reader too slow to take its events is closed, and others are not delayed.
    @Test func slowReadersAreClosed() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let slow = try open(live)  // never read from again
        let fast = try open(live, token: live.userToken("u9"), path: "/v1/users/u9/decision/stream?" + Fixtures.homeAccountsIOS)
        _ = fast.drain(quietMilliseconds: 200)
        // Each change of u1's count pushes a ~2 KB event that the slow client never reads.
        var closedAfter: Int?
        for round in 0..<8000 where closedAfter == nil {
            try setCount(live, round % 2 + 1)
            if round % 50 == 49, live.service.openStreamCount == 1 { closedAfter = round }
        }
        #expect(closedAfter != nil, "the slow stream was not closed")
        print("slow stream closed after \(closedAfter ?? -1) events")
        try setCount(live, 3, user: "u9")
        #expect(fast.drain(quietMilliseconds: 400).contains { $0.event == "decision" })
        _ = slow
    }

    /// Long-poll: a change answers 200 with the new body; no change answers 304 after the wait; both say
    /// Preference-Applied.
    @Test func longPollAnswersOnChangeOr304() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let etag = try #require(try live.get(Self.decisionPath).header("ETag"))
        let started = Date()
        let quiet = try live.get(Self.decisionPath, headers: ["If-None-Match": etag, "Prefer": "wait=1"])
        #expect(quiet.status == 304)
        #expect(quiet.header("Preference-Applied") == "wait=1")
        #expect(Date().timeIntervalSince(started) >= 0.9)

        let port = live.server.port
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            _ = try? fetch(
                port, "PUT", "/v1/users/u1/containers/offers-home/count",
                headers: [("Authorization", "Bearer \(LiveService.adminToken)"), ("Content-Type", "application/json")],
                body: Array(#"{"count": 2}"#.utf8))
        }
        let changed = try live.get(Self.decisionPath, headers: ["If-None-Match": etag, "Prefer": "wait=5"])
        #expect(changed.status == 200)
        #expect(changed.header("Preference-Applied") == "wait=5")
        #expect(changed.header("ETag") != etag)
        #expect(changed.text == (try live.get(Self.decisionPath)).text)
        // A stale If-None-Match answers at once, without waiting.
        let stale = try live.get(Self.decisionPath, headers: ["If-None-Match": etag, "Prefer": "wait=5"])
        #expect(stale.status == 200)
        #expect(stale.header("Preference-Applied") == nil)
    }

    /// SIGTERM: open streams get a final `shutdown` event and end, and the process exits 0 well within
    /// the drain timeout.
    @Test func sigtermSendsShutdownAndExitsZero() throws {
        let sheetd = try LaunchedSheetd(["--drain-timeout", "5"])
        let process = sheetd.process, port = sheetd.port
        let streams = try (0..<3).map { _ in
            try EventStreamClient(
                port: port, target: "/v1/users/s/decision/stream?screen=home&platform=android",
                headers: [("Authorization", "Bearer admin")])
        }
        for stream in streams { _ = try stream.next() }
        let started = Date()
        kill(process.processIdentifier, SIGTERM)
        for stream in streams {
            let rest = stream.drain(quietMilliseconds: 3000)
            #expect(rest.last?.event == "shutdown")
            #expect(stream.ended)
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(Date().timeIntervalSince(started) < 3)
    }

    private func waitUntil(_ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(5)
        while !condition() {
            guard Date() < deadline else { throw TestError("condition not met within 5 s") }
            usleep(20_000)
        }
    }
}

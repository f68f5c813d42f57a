import Foundation
import MicroHTTP
import TestSupport
import Testing

@testable import SheetService

/// Issue 43's `/v1/me` form of every user route over real HTTP, on SQLite and (when the test
/// PostgreSQL is there) PostgreSQL: the user is the user token's subject; the answers, ETags and
/// caches are the `/v1/users/{userId}` route's; the admin token is refused with 403.
@Suite struct MeRoutesTests {
    static let query = "?" + Fixtures.homeAccountsIOS

    /// Every /v1/me route with a body that works for it, and its /v1/users form.
    static let routes: [(method: String, me: String, explicit: String, body: String?)] = [
        ("GET", "/v1/me/decision" + query, "/v1/users/alice/decision" + query, nil),
        ("PUT", "/v1/me/containers/offers-home/count", "/v1/users/alice/containers/offers-home/count", #"{"count":2}"#),
        ("POST", "/v1/me/dismissals", "/v1/users/alice/dismissals", #"{"sheetId":"offers","method":"swipe"}"#),
        ("POST", "/v1/me/presentations", "/v1/users/alice/presentations", #"{"sheetId":"offer-detail","mode":"push"}"#),
        ("PUT", "/v1/me/sheets/offers/content-height", "/v1/users/alice/sheets/offers/content-height", #"{"height":300,"platform":"ios"}"#),
        ("POST", "/v1/me/impressions", "/v1/users/alice/impressions", #"{"sheetId":"offers"}"#),
        ("POST", "/v1/me/conversions", "/v1/users/alice/conversions", #"{"sheetId":"offers"}"#),
        ("GET", "/v1/me/state", "/v1/users/alice/state", nil),
        ("GET", "/v1/me/attributes", "/v1/users/alice/attributes", nil),
        ("GET", "/v1/me/decision/stream" + query, "/v1/users/alice/decision/stream" + query, nil),
        ("DELETE", "/v1/me", "/v1/users/alice", nil),
    ]

    /// Each route answers for the token's user exactly what its /v1/users form answers.
    @Test(arguments: LiveService.backends) func sameAnswersAsTheExplicitRoutes(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        try Fixtures.install(live)
        let alice = live.userToken("alice")
        // Events through /v1/me land on alice: the explicit state shows them, and both forms agree.
        for route in Self.routes where route.body != nil {
            let me = try live.request(route.method, route.me, token: alice, json: route.body)
            #expect(me.status == 200, "\(route.me): \(me.text)")
            let explicit = try live.request(route.method, route.explicit, token: alice, json: route.body)
            #expect(explicit.status == 200, "\(route.explicit): \(explicit.text)")
        }
        let state = try live.get("/v1/users/alice/state", token: alice)
        #expect(state.text.contains(#""count":2"#))
        #expect((state.json["impressions"] as? [[String: Any]])?.first?["total"] as? Int == 2)
        #expect(try live.get("/v1/me/state", token: alice).text == state.text)
        #expect(try live.get("/v1/me/attributes", token: alice).text == live.get("/v1/users/alice/attributes", token: alice).text)
        // An event id is the user's, whichever form carried it: the second is a replay.
        let first = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers","eventId":"i-1"}"#, token: alice)
        let replay = try live.post("/v1/me/impressions", #"{"sheetId":"offers","eventId":"i-1"}"#, token: alice)
        #expect(replay.header("Idempotent-Replayed") == "true")
        #expect(replay.text == first.text)
        // Another user's token: their own user, not alice.
        let bob = try live.get("/v1/me/state", token: live.userToken("bob"))
        #expect(bob.status == 200)
        #expect(bob.json["userId"] as? String == "bob")
        #expect((bob.json["impressions"] as? [[String: Any]])?.isEmpty == true)
        // DELETE /v1/me erases the token's user only.
        _ = try live.post("/v1/users/bob/impressions", #"{"sheetId":"offers"}"#)
        let erased = try live.request("DELETE", "/v1/me", token: alice)
        #expect(erased.status == 204)
        #expect((try live.get("/v1/users/alice/state").json["impressions"] as? [[String: Any]])?.isEmpty == true)
        #expect((try live.get("/v1/users/bob/state").json["impressions"] as? [[String: Any]])?.count == 1)
    }

    /// The decision: the same body and ETag, a 304 across the forms, one cache (a hit), the same
    /// long-poll and stream.
    @Test func decisionSharesTagsAndCache() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let alice = live.userToken("alice")
        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":2}"#)
        let explicit = try live.get("/v1/users/alice/decision" + Self.query, token: alice)
        #expect(explicit.status == 200)
        let before = live.service.decisions.hitsAndMisses
        let me = try live.get("/v1/me/decision" + Self.query, token: alice)
        let after = live.service.decisions.hitsAndMisses
        #expect(me.status == 200)
        #expect(me.text == explicit.text)
        #expect(me.header("ETag") == explicit.header("ETag"))
        #expect(me.header("Cache-Control") == explicit.header("Cache-Control"))
        #expect(me.header("Vary") == explicit.header("Vary"))
        #expect(after.hits == before.hits + 1 && after.misses == before.misses, "the /v1/me answer comes from the same cache")
        let etag = try #require(me.header("ETag"))
        #expect(try live.get("/v1/me/decision" + Self.query, token: alice, headers: ["If-None-Match": etag]).status == 304)
        // The minimal form and gzip are the same representations.
        for headers in [["Prefer": "return=minimal"], ["Accept-Encoding": "gzip"]] {
            let a = try live.get("/v1/me/decision" + Self.query, token: alice, headers: headers)
            let b = try live.get("/v1/users/alice/decision" + Self.query, token: alice, headers: headers)
            #expect(a.header("ETag") == b.header("ETag") && a.body == b.body, "\(headers)")
        }
        // A long-poll on /v1/me wakes on an event reported through /v1/users.
        let port = live.server.port
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.3) {
            _ = try? fetch(
                port, "POST", "/v1/users/alice/dismissals",
                headers: [("Authorization", "Bearer \(LiveService.adminToken)"), ("Content-Type", "application/json")],
                body: Array(#"{"sheetId":"offers","method":"swipe"}"#.utf8))
        }
        let woken = try live.get("/v1/me/decision" + Self.query, token: alice, headers: ["If-None-Match": etag, "Prefer": "wait=10"])
        #expect(woken.status == 200)
        #expect(woken.header("Preference-Applied") == "wait=10")
        #expect(woken.header("ETag") != etag)
        #expect(woken.text == (try live.get("/v1/users/alice/decision" + Self.query, token: alice).text))
        // The stream: its first decision is the /v1/me GET's, byte for byte.
        let stream = try EventStreamClient(
            port: live.server.port, target: "/v1/me/decision/stream" + Self.query, headers: [("Authorization", "Bearer \(alice)")])
        #expect(stream.head.status == 200)
        _ = try stream.next()
        let first = try #require(try stream.next())
        let get = try live.get("/v1/me/decision" + Self.query, token: alice, headers: ["Accept-Encoding": "identity"])
        #expect(first.event == "decision")
        #expect(first.id == get.header("ETag"))
        #expect(first.data == get.text)
    }

    /// A user token only: the admin token is a 403 that says why, no token a 401; the admin-only
    /// write of attributes has no /v1/me form.
    @Test func userTokenOnly() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        for route in Self.routes {
            let admin = try live.request(route.method, route.me, token: LiveService.adminToken, json: route.body)
            #expect(admin.status == 403, "\(route.method) \(route.me): \(admin.text)")
            #expect(admin.header("Content-Type") == "application/problem+json")
            #expect(admin.json["type"] as? String == "urn:sheetd:problem:forbidden")
            let detail = admin.json["detail"] as? String ?? ""
            #expect(detail.contains("the admin token has no user") && detail.contains("/v1/users/{userId}"), "\(detail)")
            let anonymous = try live.request(route.method, route.me, token: nil, json: route.body)
            #expect(anonymous.status == 401, "\(route.me)")
        }
        #expect(try live.get("/v1/users/alice/state").json["userId"] as? String == "alice", "the admin's explicit routes are unchanged")
        let put = try live.put("/v1/me/attributes", #"{"segments":["beta"]}"#, token: live.userToken("alice"))
        #expect(put.status == 405)
    }
}

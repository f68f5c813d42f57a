import Foundation
import SheetPolicy
import Testing

/// Issue 43's `occurredAt` over real HTTP, on SQLite and (when the test PostgreSQL is there)
/// PostgreSQL: an event reported late counts from when it happened (cooldowns, caps, the stats'
/// hours), within 24 h before the server's clock and the token leeway after it; outside, 400 and
/// nothing stored; a replayed event id stays a replay whatever its time.
@Suite(.serialized) struct OccurredAtTests {
    /// 2026-12-01T08:30:00Z
    static let start: Int64 = 1_796_112_000 + 1800
    static let offersWithCooldown =
        #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10,"cooldownSeconds":600}"#
    static let decision = "/v1/users/alice/decision?\(Fixtures.homeAccountsIOS)"

    static func time(_ clock: TestClock, _ seconds: Int) -> String { clock.now().adding(seconds: seconds).rfc3339 }

    static func lastDismissal(_ live: LiveService, _ sheetId: String) throws -> String? {
        let items = try live.get("/v1/users/alice/state").json["lastDismissals"] as? [[String: Any]]
        return items?.first { $0["sheetId"] as? String == sheetId }?["at"] as? String
    }

    @Test(arguments: LiveService.backends) func lateDismissalStartsItsCooldownWhenItHappened(_ postgres: Bool) throws {
        let clock = TestClock(Self.start)
        let live = try LiveService(postgres: postgres, clock: clock.now)
        try Fixtures.install(live)
        #expect(try live.put("/v1/sheets/offers", Self.offersWithCooldown).status == 200)
        let alice = live.userToken("alice")
        #expect(try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":2}"#, token: alice).status == 200)
        // Swiped away at 08:28, reported at 08:30 (the app was offline).
        let first = try live.post(
            "/v1/users/alice/dismissals", #"{"sheetId":"offers","method":"swipe","eventId":"d-1","occurredAt":"2026-12-01T08:28:00Z"}"#,
            token: alice)
        #expect(first.status == 200)
        #expect(first.json["latched"] as? Bool == true)
        #expect(try Self.lastDismissal(live, "offers") == "2026-12-01T08:28:00Z")
        // A new count releases the latch; the cooldown, from 08:28, holds the sheet until 08:38 (not 08:40).
        #expect(try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":3}"#, token: alice).status == 200)
        let held = try live.get(Self.decision, token: alice)
        #expect(held.json["reason"] as? String == "cooling-down")
        #expect(held.text.contains("dismissed at 2026-12-01T08:28:00Z, its cooldown of 600 s ends at 2026-12-01T08:38:00Z"), "\(held.text)")
        clock.advance(seconds: 479)
        #expect(try live.get(Self.decision, token: alice).json["reason"] as? String == "cooling-down")
        clock.advance(seconds: 1)
        #expect(try live.get(Self.decision, token: alice).json["reason"] as? String == "cards-available")

        // The same event id with another time is a replay: the first outcome, nothing moved.
        let replay = try live.post(
            "/v1/users/alice/dismissals", #"{"sheetId":"offers","method":"swipe","eventId":"d-1","occurredAt":"2026-12-01T08:37:00Z"}"#,
            token: alice)
        #expect(replay.status == 200)
        #expect(replay.header("Idempotent-Replayed") == "true")
        #expect(replay.text == first.text)
        #expect(try Self.lastDismissal(live, "offers") == "2026-12-01T08:28:00Z")
        #expect(try live.get(Self.decision, token: alice).json["reason"] as? String == "cards-available")

        // A dismissal now (08:38), then one reported late that happened before it: the latest stays.
        #expect(try live.post("/v1/users/alice/dismissals", #"{"sheetId":"offers","method":"programmatic"}"#, token: alice).status == 200)
        #expect(try Self.lastDismissal(live, "offers") == "2026-12-01T08:38:00Z")
        let earlier = try live.post(
            "/v1/users/alice/dismissals", #"{"sheetId":"offers","method":"programmatic","occurredAt":"2026-12-01T08:33:00Z"}"#, token: alice)
        #expect(earlier.status == 200)
        #expect(try Self.lastDismissal(live, "offers") == "2026-12-01T08:38:00Z", "a late dismissal never moves the latest one back")
    }

    /// Late impressions count in the caps' windows where they happened.
    @Test(arguments: LiveService.backends) func lateImpressionsCountWhereTheyHappened(_ postgres: Bool) throws {
        let clock = TestClock(Self.start)
        let live = try LiveService(postgres: postgres, clock: clock.now)
        try Fixtures.install(live)
        let capped =
            #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10,"frequency":{"max":2,"periodSeconds":3600}}"#
        #expect(try live.put("/v1/sheets/offers", capped).status == 200)
        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":2}"#)
        // Shown at 08:20 and (reported later) at 07:40, closed by the app at 08:21.
        for (body, path) in [
            (#"{"sheetId":"offers","occurredAt":"2026-12-01T08:20:00Z"}"#, "impressions"),
            (#"{"sheetId":"offers","occurredAt":"2026-12-01T07:40:00Z"}"#, "impressions"),
            (#"{"sheetId":"offers","method":"programmatic","occurredAt":"2026-12-01T08:21:00Z"}"#, "dismissals"),
        ] {
            let r = try live.post("/v1/users/alice/\(path)", body)
            #expect(r.status == 200, "\(r.text)")
        }
        let state = try live.get("/v1/users/alice/state").json["impressions"] as? [[String: Any]]
        #expect(state?.first?["recent"] as? [String] == ["2026-12-01T07:40:00Z", "2026-12-01T08:20:00Z"], "kept in time order")
        // Two in the hour before 08:30: capped until 07:40 + 1 h (08:40), not until 09:30.
        let r = try live.get(Self.decision)
        #expect(r.json["reason"] as? String == "frequency-capped")
        #expect(r.text.contains("shown again from 2026-12-01T08:40:00Z"), "\(r.text)")
        clock.advance(seconds: 600)
        #expect(try live.get(Self.decision).json["reason"] as? String == "cards-available")
    }

    /// The stats' hour rollups bucket each event by when it happened.
    @Test(arguments: LiveService.backends) func rollupsBucketByOccurredAt(_ postgres: Bool) throws {
        let clock = TestClock(Self.start)
        let live = try LiveService(postgres: postgres, clock: clock.now)
        try Fixtures.install(live)
        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":2}"#)
        for (path, body) in [
            ("impressions", #"{"sheetId":"offers","occurredAt":"2026-12-01T07:50:00Z"}"#),
            ("dismissals", #"{"sheetId":"offers","method":"swipe","occurredAt":"2026-12-01T07:59:00.250Z"}"#),
            ("presentations", #"{"sheetId":"offer-detail","mode":"push","parentSheetId":"offers","occurredAt":"2026-12-01T07:55:00Z"}"#),
            ("impressions", #"{"sheetId":"reminders"}"#),  // now: 08:30
        ] {
            let r = try live.post("/v1/users/alice/\(path)", body)
            #expect(r.status == 200, "\(path): \(r.text)")
        }
        // The latch release of a late count report is dated by it too.
        let release = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":5,"occurredAt":"2026-12-01T07:59:59.999Z"}"#)
        #expect(release.json["changed"] as? Bool == true)

        let fromEight = try live.get("/v1/sheets/offers/stats?since=2026-12-01T08:00:00Z").json
        #expect(fromEight["impressions"] as? Int == 0)
        #expect(fromEight["uniqueUsers"] as? Int == 0)
        #expect((fromEight["dismissals"] as? [String: Any])?["swipe"] as? Int == 0)
        #expect(fromEight["latchReleases"] as? Int == 0)
        #expect(fromEight["openedFrom"] as? Int == 0)
        let fromSeven = try live.get("/v1/sheets/offers/stats?since=2026-12-01T07:00:00Z").json
        #expect(fromSeven["impressions"] as? Int == 1)
        #expect(fromSeven["uniqueUsers"] as? Int == 1)
        #expect((fromSeven["dismissals"] as? [String: Any])?["swipe"] as? Int == 1)
        #expect(fromSeven["latchReleases"] as? Int == 1)
        #expect(fromSeven["openedFrom"] as? Int == 1)
        // Without occurredAt: the server's clock.
        #expect(try live.get("/v1/sheets/reminders/stats?since=2026-12-01T08:00:00Z").json["impressions"] as? Int == 1)
    }

    /// On every event route: out of the window or malformed is a 400 naming `occurredAt` (and the
    /// window), storing nothing (the event id stays unused); the window's edges are accepted.
    @Test(arguments: LiveService.backends) func outOfWindowIsRefusedAndStoresNothing(_ postgres: Bool) throws {
        let clock = TestClock(Self.start)
        let live = try LiveService(tokenLeewaySeconds: 60, postgres: postgres, clock: clock.now)
        try Fixtures.install(live)
        let alice = live.userToken("alice")
        let routes: [(method: String, path: String, body: String)] = [
            ("PUT", "/v1/users/alice/containers/offers-home/count", #""count":4"#),
            ("POST", "/v1/users/alice/dismissals", #""sheetId":"offers","method":"swipe""#),
            ("POST", "/v1/users/alice/presentations", #""sheetId":"offer-detail","mode":"push""#),
            ("PUT", "/v1/users/alice/sheets/offers/content-height", #""height":300,"platform":"ios""#),
            ("POST", "/v1/users/alice/impressions", #""sheetId":"offers""#),
            ("POST", "/v1/users/alice/conversions", #""sheetId":"offers","goal":"signup""#),
        ]
        let tooOld = Self.time(clock, -86_401), tooNew = Self.time(clock, 61), anHourAhead = Self.time(clock, 3600)
        let refused = [
            (tooOld, "too old"), (Self.time(clock, -25 * 3600), "too old"), (tooNew, "in the future"), (anHourAhead, "in the future"),
        ]
        let malformed = ["yesterday", "2026-12-01T08:29:00", "2026-12-01 08:29:00Z", "2026-12-01T08:29:00.0001Z", "2026-02-30T08:00:00Z"]
        let before = try live.get("/v1/users/alice/state").text
        let statsBefore = try live.get("/v1/sheets/offers/stats").text
        for (i, route) in routes.enumerated() {
            for (time, why) in refused {
                let r = try live.request(
                    route.method, route.path, token: alice, json: #"{\#(route.body),"eventId":"e-\#(i)","occurredAt":"\#(time)"}"#)
                #expect(r.status == 400, "\(route.path) \(time): \(r.text)")
                #expect(r.header("Content-Type") == "application/problem+json")
                let params = r.json["invalid-params"] as? [[String: Any]]
                #expect(params?.map { $0["name"] as? String } == ["occurredAt"])
                let reason = params?.first?["reason"] as? String ?? ""
                #expect(reason.contains("within 24 h before the server's time and 60 s after it"), "\(reason)")
                #expect(reason.contains("from 2026-11-30T08:30:00Z to 2026-12-01T08:31:00Z"), "\(reason)")
                #expect(reason.hasSuffix("\(time) is \(why)"), "\(reason)")
            }
            for text in malformed + [""] {
                let r = try live.request(
                    route.method, route.path, token: alice, json: #"{\#(route.body),"eventId":"e-\#(i)","occurredAt":"\#(text)"}"#)
                #expect(r.status == 400, "\(route.path) \(text): \(r.text)")
                #expect((r.json["invalid-params"] as? [[String: Any]])?.map { $0["name"] as? String } == ["occurredAt"])
            }
            for body in [#"{\#(route.body),"occurredAt":1796113800}"#, #"{\#(route.body),"occurredAt":{}}"#] {
                #expect(try live.request(route.method, route.path, token: alice, json: body).status == 400)
            }
        }
        #expect(try live.get("/v1/users/alice/state").text == before, "a refused event stores nothing")
        #expect(try live.get("/v1/sheets/offers/stats").text == statsBefore)
        // The refused events' ids were not used: with a time inside the window they apply (no replay),
        // at the window's edges, at the ends of the leeway and of the day.
        let edges = [
            Self.time(clock, -86_400), Self.time(clock, 60), "2026-12-01T09:30:59.5+01:00", "2026-11-30T08:30:00.000Z", "2026-12-01T08:29:00Z",
            "2026-12-01T08:29:00z",
        ]
        for (i, route) in routes.enumerated() {
            let json = #"{\#(route.body),"eventId":"e-\#(i)","occurredAt":"\#(edges[i % edges.count])"}"#
            let r = try live.request(route.method, route.path, token: alice, json: json)
            #expect(r.status == 200, "\(route.path): \(r.text)")
            #expect(r.header("Idempotent-Replayed") == nil)
            // null is no occurredAt: the server's clock.
            let null = try live.request(route.method, route.path, token: alice, json: #"{\#(route.body),"occurredAt":null}"#)
            #expect(null.status == 200, "\(route.path): \(null.text)")
        }
        #expect(try live.get("/v1/users/alice/state").text != before)
    }

    /// Counts apply in `seq` order whatever their `occurredAt`; a replayed count is a replay.
    @Test func countsFollowSeqNotTime() throws {
        let clock = TestClock(Self.start)
        let live = try LiveService(clock: clock.now)
        try Fixtures.install(live)
        let path = "/v1/users/alice/containers/offers-home/count"
        var r = try live.put(path, #"{"count":5,"seq":9,"eventId":"c-9","occurredAt":"2026-12-01T08:00:00Z"}"#)
        #expect(r.json["applied"] as? Bool == true)
        r = try live.put(path, #"{"count":1,"seq":8,"occurredAt":"2026-12-01T08:29:00Z"}"#)
        #expect(r.json["applied"] as? Bool == false, "a lower seq is not applied, even if it happened later")
        #expect(r.json["count"] as? Int == 5)
        r = try live.put(path, #"{"count":7,"seq":9,"eventId":"c-9","occurredAt":"2026-12-01T08:10:00Z"}"#)
        #expect(r.header("Idempotent-Replayed") == "true")
        #expect(r.json["count"] as? Int == 5)
    }
}

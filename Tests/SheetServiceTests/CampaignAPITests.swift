import Foundation
import MicroHTTP
import SheetPolicy
import SheetService
import SheetStore
import Synchronization
import Testing

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let ms: Mutex<Int64>
    init(_ rfc3339Seconds: Int64) { ms = Mutex(rfc3339Seconds * 1000) }
    func advance(seconds: Int64) { ms.withLock { $0 += seconds * 1000 } }
    var now: @Sendable () -> Timestamp { { [self] in Timestamp(millisecondsSince1970: ms.withLock { $0 }) } }
}

/// Issue 15's routes over real HTTP, on SQLite and (when the test PostgreSQL is there) PostgreSQL:
/// impressions, attributes, settings, stats and the per-sheet counters on /metrics.
@Suite(.serialized) struct CampaignAPITests {
    /// 2026-12-01T08:00:00Z
    static let start: Int64 = 1_796_112_000

    static func invalidNames(_ r: LiveService.Response) -> [String] {
        ((r.json["invalid-params"] as? [[String: Any]]) ?? []).compactMap { $0["name"] as? String }
    }

    @Test(arguments: LiveService.backends) func impressionsCountAndReplay(_ postgres: Bool) throws {
        let clock = TestClock(Self.start)
        let live = try LiveService(postgres: postgres, clock: clock.now)
        try Fixtures.install(live)
        let alice = live.userToken("alice")
        var r = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers","eventId":"i-1"}"#, token: alice)
        #expect(r.status == 200)
        #expect(r.text == #"{"sheetId":"offers","impressions":1}"#)
        clock.advance(seconds: 60)
        r = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers","eventId":"i-1"}"#, token: alice)
        #expect(r.status == 200)
        #expect(r.header("Idempotent-Replayed") == "true")
        #expect(r.text == #"{"sheetId":"offers","impressions":1}"#, "a replay answers the first outcome")
        r = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers"}"#, token: alice)
        #expect(r.text == #"{"sheetId":"offers","impressions":2}"#)
        r = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers"}"#)  // the admin token
        #expect(r.json["impressions"] as? Int == 3)

        // The state view: totals, the kept times (no rule counts impressions: only the latest), segments.
        r = try live.get("/v1/users/alice/state", token: alice)
        let impressions = r.json["impressions"] as? [[String: Any]]
        #expect(impressions?.count == 1)
        #expect(impressions?.first?["sheetId"] as? String == "offers")
        #expect(impressions?.first?["total"] as? Int == 3)
        // Two impressions at 08:01 (the clock did not move): no cap counts them, so only the newest is
        // kept (`Catalog.impressionsKeptPerSheet`), for the "on screen" rule.
        #expect(impressions?.first?["recent"] as? [String] == ["2026-12-01T08:01:00Z"])
        #expect(r.json["lastDismissals"] as? [Any] != nil)
        #expect(r.json["segments"] as? [String] == [])

        // Errors: unknown sheet, another user's token, invalid bodies.
        r = try live.post("/v1/users/alice/impressions", #"{"sheetId":"nope"}"#, token: alice)
        #expect(r.status == 404)
        #expect(r.json["type"] as? String == "urn:sheetd:problem:not-found")
        r = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers"}"#, token: live.userToken("bob"))
        #expect(r.status == 403)
        r = try live.post("/v1/users/alice/impressions", #"{"eventId":"x","extra":1}"#, token: alice)
        #expect(r.status == 400)
        #expect(Self.invalidNames(r) == ["sheetId", "extra"])
        r = try live.post("/v1/users/alice/impressions", #"{"sheetId":"bad id"}"#, token: alice)
        #expect(Self.invalidNames(r) == ["sheetId"])
        r = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers"}"#, token: nil)
        #expect(r.status == 401)
        #expect(try live.get("/v1/users/alice/state").json["impressions"].map { ($0 as? [[String: Any]])?.first?["total"] as? Int } == 3)
    }

    /// The impression log is pruned past the longest rule period and bounded per user (409).
    @Test func impressionLogIsBounded() throws {
        let clock = TestClock(Self.start)
        let live = try LiveService(stateLimits: UserStateLimits(impressions: 2), clock: clock.now)
        try Fixtures.install(live)
        // A global cap makes impressions count for an hour.
        #expect(try live.put("/v1/settings", #"{"globalCap":{"max":5,"periodSeconds":3600}}"#).status == 200)
        #expect(try live.post("/v1/users/u/impressions", #"{"sheetId":"offers"}"#).status == 200)
        #expect(try live.post("/v1/users/u/impressions", #"{"sheetId":"reminders"}"#).status == 200)
        var r = try live.post("/v1/users/u/impressions", #"{"sheetId":"offers","eventId":"third"}"#)
        #expect(r.status == 409)
        #expect(r.json["limit"] as? String == "impressions-per-user")
        #expect(r.json["maximum"] as? Int == 2)
        clock.advance(seconds: 3601)
        r = try live.post("/v1/users/u/impressions", #"{"sheetId":"offers","eventId":"third"}"#)
        #expect(r.status == 200, "the older times were pruned, and the refused event id was not recorded")
        #expect(r.json["impressions"] as? Int == 2)
        let recent = (try live.get("/v1/users/u/state").json["impressions"] as? [[String: Any]])?.map { $0["recent"] as? [String] }
        #expect(recent == [["2026-12-01T09:00:01Z"], ["2026-12-01T08:00:00Z"]])
    }

    @Test(arguments: LiveService.backends) func attributesAreTheOperatorsTruth(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        try Fixtures.install(live)
        let alice = live.userToken("alice")
        var r = try live.put("/v1/users/alice/attributes", #"{"segments":["staff"]}"#, token: alice)
        #expect(r.status == 403, "a user must not put themselves into staff")
        r = try live.put("/v1/users/alice/attributes", #"{"segments":["vip","beta","vip","Beta"]}"#)
        #expect(r.status == 200)
        #expect(r.text == #"{"userId":"alice","segments":["Beta","beta","vip"]}"#)
        r = try live.get("/v1/users/alice/attributes", token: alice)
        #expect(r.status == 200)
        #expect(r.text == #"{"userId":"alice","segments":["Beta","beta","vip"]}"#)
        #expect(try live.get("/v1/users/alice/attributes", token: live.userToken("bob")).status == 403)
        #expect(try live.get("/v1/users/alice/state", token: alice).json["segments"] as? [String] == ["Beta", "beta", "vip"])
        #expect(try live.get("/v1/users/nobody/attributes").text == #"{"userId":"nobody","segments":[]}"#)

        // Validation: every element named.
        r = try live.put("/v1/users/alice/attributes", #"{"segments":["ok", 3, "no spaces", ""]}"#)
        #expect(r.status == 400)
        #expect(Self.invalidNames(r) == ["segments[1]", "segments[2]", "segments[3]"])
        r = try live.put("/v1/users/alice/attributes", #"{"segments":"staff"}"#)
        #expect(Self.invalidNames(r) == ["segments"])
        r = try live.put("/v1/users/alice/attributes", #"{"tags":[]}"#)
        #expect(Self.invalidNames(r) == ["segments", "tags"])
        let many = (0...64).map { "\"s\($0)\"" }.joined(separator: ",")
        r = try live.put("/v1/users/alice/attributes", #"{"segments":[\#(many)]}"#)
        #expect(r.status == 400)
        #expect((r.json["invalid-params"] as? [[String: Any]])?.first?["reason"] as? String == "must have at most 64 items")
        #expect(try live.get("/v1/users/alice/attributes").json["segments"] as? [String] == ["Beta", "beta", "vip"], "refused: unchanged")

        // An empty list clears; erase removes everything.
        #expect(try live.put("/v1/users/alice/attributes", #"{"segments":[]}"#).json["segments"] as? [String] == [])
        _ = try live.put("/v1/users/alice/attributes", #"{"segments":["x"]}"#)
        _ = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers"}"#)
        #expect(try live.request("DELETE", "/v1/users/alice").status == 204)
        r = try live.get("/v1/users/alice/state")
        #expect(r.json["segments"] as? [String] == [])
        #expect((r.json["impressions"] as? [Any])?.isEmpty == true)
    }

    @Test(arguments: LiveService.backends) func settingsRoundTripAndReachTheCatalog(_ postgres: Bool) throws {
        let live = try LiveService(postgres: postgres)
        let alice = live.userToken("alice")
        var r = try live.get("/v1/settings", token: alice)
        #expect(r.status == 200)
        #expect(r.text == #"{"globalCap":null,"minIntervalSeconds":null}"#)
        #expect(try live.put("/v1/settings", #"{"minIntervalSeconds":60}"#, token: alice).status == 403)
        #expect(try live.get("/v1/settings", token: nil).status == 401)
        r = try live.put("/v1/settings", #"{"globalCap":{"max":3,"periodSeconds":86400},"minIntervalSeconds":600}"#)
        #expect(r.status == 200)
        #expect(r.text == #"{"globalCap":{"max":3,"periodSeconds":86400},"minIntervalSeconds":600}"#)
        #expect(try live.get("/v1/settings", token: alice).text == r.text)
        #expect(live.service.catalog.settings == CampaignSettings(globalCap: FrequencyCap(max: 3, periodSeconds: 86_400), minIntervalSeconds: 600))
        #expect(live.service.catalog.longestImpressionPeriod == 86_400)

        // Validation, each member named; nothing changes.
        r = try live.put("/v1/settings", #"{"globalCap":{"max":0},"minIntervalSeconds":0,"other":true}"#)
        #expect(r.status == 400)
        #expect(Self.invalidNames(r) == ["globalCap.max", "globalCap.periodSeconds", "minIntervalSeconds", "other"])
        r = try live.put("/v1/settings", #"{"globalCap":5,"minIntervalSeconds":"60"}"#)
        #expect(Self.invalidNames(r) == ["globalCap", "minIntervalSeconds"])
        r = try live.put("/v1/settings", #"{"globalCap":{"max":1,"periodSeconds":1,"x":1}}"#)
        #expect(Self.invalidNames(r) == ["globalCap.x"])
        #expect(try live.get("/v1/settings").json["minIntervalSeconds"] as? Int == 600)

        // A new service on the same database starts with the stored settings.
        let restarted = try SheetService(
            store: live.sheetStore, tokens: live.tokens, metrics: .init(), openAPIDocument: [])
        #expect(restarted.catalog.settings == live.service.catalog.settings)

        // null (or absent) turns a rule off.
        r = try live.put("/v1/settings", #"{"globalCap":null}"#)
        #expect(r.text == #"{"globalCap":null,"minIntervalSeconds":null}"#)
        #expect(live.service.catalog.settings == .off)
    }

    @Test(arguments: LiveService.backends) func statsCountWhatHappened(_ postgres: Bool) throws {
        let clock = TestClock(Self.start)
        let live = try LiveService(postgres: postgres, clock: clock.now)
        try Fixtures.install(live)
        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":2}"#)
        _ = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers"}"#)
        _ = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers","eventId":"dup"}"#)
        _ = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers","eventId":"dup"}"#)  // replay: not counted
        _ = try live.post("/v1/users/alice/presentations", #"{"sheetId":"offer-detail","mode":"push","parentSheetId":"offers"}"#)
        _ = try live.post("/v1/users/alice/dismissals", #"{"sheetId":"offer-detail","method":"closeButton"}"#)
        _ = try live.post("/v1/users/alice/dismissals", #"{"sheetId":"offers","method":"swipe"}"#)
        clock.advance(seconds: 3600)  // 09:00
        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":3}"#)  // releases the latch
        _ = try live.post("/v1/users/bob/impressions", #"{"sheetId":"offers"}"#)
        _ = try live.post("/v1/users/bob/dismissals", #"{"sheetId":"offers","method":"action"}"#)
        _ = try live.post("/v1/users/bob/dismissals", #"{"sheetId":"nope","method":"action"}"#)  // 404: not counted

        var r = try live.get("/v1/sheets/offers/stats")
        #expect(r.status == 200)
        #expect(r.json["sheetId"] as? String == "offers")
        #expect(r.json["since"] is NSNull)
        #expect(r.json["impressions"] as? Int == 3)
        #expect(r.json["uniqueUsers"] as? Int == 2)
        #expect(r.json["latchReleases"] as? Int == 1)
        #expect(r.json["openedFrom"] as? Int == 1)
        let dismissals = r.json["dismissals"] as? [String: Int]
        #expect(dismissals == ["swipe": 1, "scrim": 0, "closeButton": 0, "cancelButton": 0, "action": 1, "programmatic": 0])
        r = try live.get("/v1/sheets/offers/stats?since=2026-12-01T08:30:00Z")
        #expect(r.json["since"] as? String == "2026-12-01T08:30:00Z")
        #expect(r.json["impressions"] as? Int == 1)
        #expect(r.json["uniqueUsers"] as? Int == 1)
        #expect(r.json["latchReleases"] as? Int == 1)
        #expect(r.json["openedFrom"] as? Int == 0)
        #expect((r.json["dismissals"] as? [String: Int])?["swipe"] == 0)
        r = try live.get("/v1/sheets/offers/stats?since=2026-12-01T10:00:00%2B02:00")  // 08:00Z: inclusive
        #expect(r.json["impressions"] as? Int == 3)
        r = try live.get("/v1/sheets/offer-detail/stats")
        #expect((r.json["dismissals"] as? [String: Int])?["closeButton"] == 1)
        #expect(r.json["impressions"] as? Int == 0)

        // Errors.
        r = try live.get("/v1/sheets/nope/stats")
        #expect(r.status == 404)
        r = try live.get("/v1/sheets/offers/stats?since=yesterday")
        #expect(r.status == 400)
        #expect(Self.invalidNames(r) == ["since"])
        // More than three fraction digits (found by the fuzz driver: it used to trap the process).
        r = try live.get("/v1/sheets/offers/stats?since=2026-12-01T08:00:00.0000Z")
        #expect(r.status == 200)
        // A finer fraction rounds up to the millisecond, exact against the log's millisecond times (the
        // fuzz driver sent one: `format: date-time` allows any fraction). Bob's impression is at 09:00:00.000.
        r = try live.get("/v1/sheets/offers/stats?since=2026-12-01T08:59:59.9990001Z")
        #expect(r.status == 200)
        #expect(r.json["since"] as? String == "2026-12-01T08:59:59.9990001Z")
        #expect(r.json["impressions"] as? Int == 1)
        r = try live.get("/v1/sheets/offers/stats?since=2026-12-01T09:00:00.000001Z")
        #expect(r.json["impressions"] as? Int == 0)
        r = try live.get("/v1/sheets/offers/stats?since=0652-10-19T12%3A20%3A42.456191Z")
        #expect(r.json["impressions"] as? Int == 3)
        r = try live.get("/v1/sheets/offers/stats?since=2026-02-30T00:00:00Z&until=x")
        #expect(Self.invalidNames(r) == ["until", "since"])
        #expect(try live.get("/v1/sheets/offers/stats", token: live.userToken("alice")).status == 403)

        // Erasing a user leaves the totals, drops them from unique users.
        _ = try live.request("DELETE", "/v1/users/bob")
        r = try live.get("/v1/sheets/offers/stats")
        #expect(r.json["impressions"] as? Int == 3)
        #expect(r.json["uniqueUsers"] as? Int == 1)
    }

    @Test func perSheetCountersOnMetrics() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        _ = try live.post("/v1/users/a/impressions", #"{"sheetId":"offers"}"#)
        _ = try live.post("/v1/users/b/impressions", #"{"sheetId":"offers","eventId":"e"}"#)
        _ = try live.post("/v1/users/b/impressions", #"{"sheetId":"offers","eventId":"e"}"#)
        _ = try live.post("/v1/users/a/dismissals", #"{"sheetId":"offers","method":"scrim"}"#)
        _ = try live.post("/v1/users/a/dismissals", #"{"sheetId":"reminders","method":"swipe"}"#)
        var metrics = try live.get("/metrics", token: nil).text
        #expect(metrics.contains("# TYPE sheetd_sheet_impressions_total counter\n"))
        #expect(metrics.contains("sheetd_sheet_impressions_total{sheet=\"offers\"} 2\n"))
        #expect(metrics.contains("sheetd_sheet_dismissals_total{sheet=\"offers\",method=\"scrim\"} 1\n"))
        #expect(metrics.contains("sheetd_sheet_dismissals_total{sheet=\"reminders\",method=\"swipe\"} 1\n"))
        #expect(!metrics.contains("sheet=\"filters\""), "series appear on the first count")
        #expect(try live.request("DELETE", "/v1/sheets/offers").status == 204)
        metrics = try live.get("/metrics", token: nil).text
        #expect(!metrics.contains("sheet=\"offers\""), "a deleted sheet's series go away")
        #expect(metrics.contains("sheet=\"reminders\""))
    }
}

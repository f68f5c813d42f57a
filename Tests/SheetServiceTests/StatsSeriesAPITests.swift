import Foundation
import SheetService
import Testing

/// `GET /v1/sheets/{sheetId}/stats/series` (issue 46) over real HTTP, on SQLite and (when the test
/// PostgreSQL is there) PostgreSQL: hour and day buckets from the rollups that add up to
/// `GET /v1/sheets/{sheetId}/stats` over the same hours, and a 400 naming each bad parameter.
@Suite(.serialized) struct StatsSeriesAPITests {
    /// The counters of a stats answer or of a bucket, to add and compare.
    struct Counters: Equatable {
        var impressions = 0, uniqueUsers = 0, latchReleases = 0, openedFrom = 0
        var dismissals: [String: Int] = [:]
        init() {}
        init(_ json: [String: Any]) {
            impressions = json["impressions"] as? Int ?? -1
            uniqueUsers = json["uniqueUsers"] as? Int ?? -1
            latchReleases = json["latchReleases"] as? Int ?? -1
            openedFrom = json["openedFrom"] as? Int ?? -1
            dismissals = json["dismissals"] as? [String: Int] ?? [:]
        }
        static func + (a: Self, b: Self) -> Self {
            var s = a
            s.impressions += b.impressions; s.uniqueUsers += b.uniqueUsers; s.latchReleases += b.latchReleases; s.openedFrom += b.openedFrom
            s.dismissals.merge(b.dismissals, uniquingKeysWith: +)
            return s
        }
    }

    static func buckets(_ r: LiveService.Response) -> [[String: Any]] { r.json["buckets"] as? [[String: Any]] ?? [] }
    static func total(_ r: LiveService.Response) -> Counters { buckets(r).map(Counters.init).reduce(Counters(), +) }

    @Test(arguments: LiveService.backends) func seriesAddUpToTheStats(_ postgres: Bool) throws {
        let clock = TestClock(CampaignAPITests.start)  // 2026-12-01T08:00:00Z
        let live = try LiveService(postgres: postgres, clock: clock.now)
        try Fixtures.install(live)
        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":2}"#)
        _ = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers"}"#)
        _ = try live.post("/v1/users/alice/dismissals", #"{"sheetId":"offers","method":"swipe"}"#)
        clock.advance(seconds: 3600)  // 09:00
        _ = try live.post("/v1/users/bob/impressions", #"{"sheetId":"offers"}"#)
        _ = try live.post("/v1/users/bob/dismissals", #"{"sheetId":"offers","method":"action"}"#)
        clock.advance(seconds: 23 * 3600)  // 2026-12-02T08:00: alice's latest impression moves to day 2
        _ = try live.put("/v1/users/alice/containers/offers-home/count", #"{"count":3}"#)  // releases the latch
        _ = try live.post("/v1/users/alice/impressions", #"{"sheetId":"offers"}"#)
        _ = try live.post("/v1/users/carol/impressions", #"{"sheetId":"offers"}"#)
        _ = try live.post("/v1/users/carol/presentations", #"{"sheetId":"offer-detail","mode":"push","parentSheetId":"offers"}"#)

        // Days from the first's midnight, to the end of the current hour (no until).
        var r = try live.get("/v1/sheets/offers/stats/series?since=2026-12-01T00:00:00Z&bucket=day")
        #expect(r.status == 200, "\(r.text)")
        #expect(r.json["sheetId"] as? String == "offers" && r.json["bucket"] as? String == "day")
        #expect(r.json["since"] as? String == "2026-12-01T00:00:00Z" && r.json["until"] is NSNull)
        #expect(r.json["countedFrom"] as? String == "2026-12-01T00:00:00Z")
        #expect(r.json["countedUntil"] as? String == "2026-12-02T09:00:00Z")
        #expect(Self.buckets(r).map { $0["start"] as? String } == ["2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z"])
        #expect(Self.buckets(r).map { $0["impressions"] as? Int } == [2, 2])
        #expect(Self.buckets(r).map { $0["uniqueUsers"] as? Int } == [1, 2])
        #expect(Self.buckets(r).map { $0["latchReleases"] as? Int } == [0, 1])
        #expect(
            (Self.buckets(r).first?["dismissals"] as? [String: Int]) == [
                "swipe": 1, "scrim": 0, "closeButton": 0, "cancelButton": 0, "action": 1, "programmatic": 0,
            ])
        var stats = try live.get("/v1/sheets/offers/stats?since=2026-12-01T00:00:00Z")
        #expect(Self.total(r) == Counters(stats.json))
        #expect(Counters(stats.json).impressions == 4 && Counters(stats.json).uniqueUsers == 3 && Counters(stats.json).openedFrom == 1)

        // Hours from a time inside one (counted from the next boundary): every hour, empty ones at 0.
        r = try live.get("/v1/sheets/offers/stats/series?since=2026-12-01T07:30:00Z&bucket=hour")
        #expect(r.json["countedFrom"] as? String == "2026-12-01T08:00:00Z")
        #expect(Self.buckets(r).count == 25)
        #expect(Self.buckets(r).map { $0["impressions"] as? Int ?? -1 }.filter { $0 != 0 } == [1, 1, 2])
        stats = try live.get("/v1/sheets/offers/stats?since=2026-12-01T07:30:00Z")
        #expect(Self.total(r) == Counters(stats.json))
        // The hour is the default bucket; until counts the whole hours before it.
        r = try live.get("/v1/sheets/offers/stats/series?since=2026-12-01T08:00:00Z&until=2026-12-01T09:59:59Z")
        #expect(r.json["bucket"] as? String == "hour" && r.json["countedUntil"] as? String == "2026-12-01T09:00:00Z")
        #expect(Self.buckets(r).map { $0["impressions"] as? Int } == [1])
        // No whole hour in the range: no bucket.
        r = try live.get("/v1/sheets/offers/stats/series?since=2026-12-01T08:10:00Z&until=2026-12-01T08:50:00Z")
        #expect(r.status == 200 && Self.buckets(r).isEmpty)
        // A day series over a year and a half is fine; the same in hours is too many buckets.
        r = try live.get("/v1/sheets/offers/stats/series?since=2025-12-01T00:00:00Z&until=2026-12-03T00:00:00Z&bucket=day")
        #expect(r.status == 200 && Self.buckets(r).count == 367)
        #expect(Self.total(r) == Counters(try live.get("/v1/sheets/offers/stats").json))

        // Errors: each bad parameter named, problem+json.
        for (query, names) in [
            ("", ["since"]),
            ("since=yesterday", ["since"]),
            ("since=2026-12-01T00:00:00Z&until=soon", ["until"]),
            ("since=2026-12-01T00:00:00Z&bucket=week", ["bucket"]),
            ("since=2026-12-01T00:00:00Z&bucket=", ["bucket"]),
            ("since=2026-12-01T00:00:00Z&until=2026-12-01T00:00:00Z", ["until"]),
            ("since=2026-12-02T00:00:00Z&until=2026-12-01T00:00:00Z", ["until"]),
            ("since=1969-12-31T00:00:00Z&until=1970-01-02T00:00:00Z", ["since"]),
            ("since=2025-12-01T00:00:00Z&until=2026-12-01T00:00:00Z&bucket=hour", ["since"]),
            ("since=2026-12-01T00:00:00Z&limit=3", ["limit"]),
        ] {
            r = try live.get("/v1/sheets/offers/stats/series?\(query)")
            #expect(r.status == 400, "\(query)")
            #expect(r.header("Content-Type") == "application/problem+json", "\(query)")
            #expect(CampaignAPITests.invalidNames(r) == names, "\(query): \(r.text)")
        }
        r = try live.get("/v1/sheets/offers/stats/series?since=2025-12-01T00:00:00Z&until=2026-12-01T00:00:00Z")
        #expect((r.json["detail"] as? String)?.contains("8760 hour buckets, more than 1000") == true, "\(r.text)")
        #expect(try live.get("/v1/sheets/nope/stats/series?since=2026-12-01T00:00:00Z").status == 404)
        #expect(try live.get("/v1/sheets/offers/stats/series?since=2026-12-01T00:00:00Z", token: live.userToken("alice")).status == 403)
    }
}

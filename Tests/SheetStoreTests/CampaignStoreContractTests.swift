import Dispatch
import Foundation
import SQLiteStore
import SheetPolicy
import SheetStore
import TestSupport
import Testing

/// The campaign half of the store contract (issue 15): campaign facts and segments in the user's
/// state, the settings row and the stats' totals (the rollups: `RollupContractTests`); checked on
/// every backend.
@Suite struct CampaignStoreContractTests {
    static func t(_ ms: Int64) -> Timestamp { Timestamp(millisecondsSince1970: ms) }

    static let campaignState: UserState = {
        var state = sampleState
        state.campaign = CampaignState(
            impressions: [
                "offer-cards": [t(1_700_000_000_000), t(1_700_000_000_000), t(1_700_000_050_123)],
                "tips": [t(-5)],
                "kept-empty": [],
            ],
            impressionTotals: ["offer-cards": 17, "tips": 1, "gone-sheet": 4],
            lastDismissals: ["offer-cards": t(1_700_000_060_000), "tips": t(0)],
            segments: ["beta", "staff", "zürich,team"])
        return state
    }()

    /// Impression logs (duplicates and an empty log included), totals, last dismissals and segments
    /// come back exactly; a second update writes the differences; a reopened store reads the same.
    @Test(arguments: Backend.available) func campaignStateRoundTrips(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        let store = try database.open()
        _ = try store.update(userId: "u1", eventId: nil) { state in
            state = Self.campaignState; return []
        }
        #expect(try store.userState(userId: "u1") == Self.campaignState)

        var expected = Self.campaignState
        expected.campaign.recordImpression(of: "offer-cards", at: Self.t(1_700_000_100_000), keepSeconds: 60)
        expected.campaign.impressions["tips"] = nil
        expected.campaign.impressionTotals["gone-sheet"] = nil
        expected.campaign.lastDismissals["tips"] = Self.t(42)
        expected.campaign.lastDismissals["offer-cards"] = nil
        expected.campaign.segments = ["alpha"]
        #expect(expected.campaign.impressions["offer-cards"] == [Self.t(1_700_000_050_123), Self.t(1_700_000_100_000)])
        _ = try store.update(userId: "u1", eventId: nil) { state in
            #expect(state == Self.campaignState, "the body sees the stored state")
            state = expected; return []
        }
        #expect(try store.userState(userId: "u1") == expected)
        store.close()
        let reopened = try database.open()
        defer { reopened.close() }
        #expect(try reopened.userState(userId: "u1") == expected)
        _ = try reopened.update(userId: "u1", eventId: nil) { state in
            state.campaign = CampaignState(); return []
        }
        #expect(try reopened.userState(userId: "u1") == sampleState)
    }

    /// Many users reporting impressions of the same sheets at once (every writer, batches that share
    /// totals rows): nothing lost, nothing double counted, no deadlock.
    @Test(arguments: Backend.available) func concurrentActivityKeepsExactTotals(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            let failures = ConcurrentCounter()
            runOnThreads(8) { thread in
                for i in 0..<25 {
                    let group = DispatchGroup()
                    group.enter()
                    // Two sheets in opposite orders on alternate threads.
                    let sheets = thread % 2 == 0 ? ["a", "b"] : ["b", "a"]
                    store.submit(
                        userId: "user-\(thread)-\(i % 5)", eventId: nil,
                        { state, activity in
                            for sheet in sheets {
                                state.campaign.recordImpression(of: sheet, at: Self.t(Int64(i)), keepSeconds: 3600)
                                activity.append(SheetActivity(sheetId: sheet, kind: .impression, at: Self.t(Int64(i))))
                            }
                            return []
                        },
                        completion: { result in
                            if case .failure = result { failures.add() }
                            group.leave()
                        })
                    group.wait()
                }
            }
            #expect(failures.value == 0)
            for sheet in ["a", "b"] {
                #expect(try store.sheetStats(sheetId: sheet, since: nil) == SheetStats(impressions: 200, uniqueUsers: 40))
            }
            #expect(try store.userState(userId: "user-3-4").campaign.impressionTotals == ["a": 5, "b": 5])
        }
    }

    /// The settings read as off until written, then exactly as written (also after a reopen).
    @Test(arguments: Backend.available) func settingsRoundTrip(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        let store = try database.open()
        #expect(try store.settings() == .off)
        let settings = CampaignSettings(globalCap: FrequencyCap(max: 3, periodSeconds: 86_400), minIntervalSeconds: 600)
        try store.putSettings(settings)
        #expect(try store.settings() == settings)
        try store.putSettings(CampaignSettings(globalCap: nil, minIntervalSeconds: 1))
        #expect(try store.settings() == CampaignSettings(globalCap: nil, minIntervalSeconds: 1))
        try store.putSettings(settings)
        store.close()
        let reopened = try database.open()
        defer { reopened.close() }
        #expect(try reopened.settings() == settings)
        try reopened.putSettings(.off)
        #expect(try reopened.settings() == .off)
    }
}

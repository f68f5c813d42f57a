import Dispatch
import Foundation
import SheetPolicy
import SheetStore
import TestSupport
import Testing

/// The campaign half of the store contract (issue 15): campaign facts and segments in the user's
/// state, the settings row, the activity log with its totals; checked on every backend.
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

    /// Erasing a user removes their campaign facts and segments, and their activity rows (unique
    /// users drop), while the per-sheet totals (no user id) stay.
    @Test(arguments: Backend.available) func eraseRemovesCampaignFactsAndActivity(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            for user in ["u1", "u2"] {
                _ = try store.update(userId: user, eventId: nil) { state, activity in
                    state = Self.campaignState
                    activity.append(SheetActivity(sheetId: "offer-cards", kind: .impression, at: Self.t(1000)))
                    return []
                }
            }
            #expect(try store.sheetStats(sheetId: "offer-cards", since: nil) == SheetStats(impressions: 2, uniqueUsers: 2))
            try store.deleteUser(userId: "u1")
            #expect(try store.userState(userId: "u1") == UserState())
            #expect(try store.userState(userId: "u2") == Self.campaignState)
            #expect(try store.sheetStats(sheetId: "offer-cards", since: nil) == SheetStats(impressions: 2, uniqueUsers: 1))
            #expect(try store.sheetStats(sheetId: "offer-cards", since: Self.t(0)) == SheetStats(impressions: 1, uniqueUsers: 1))
        }
    }

    /// Activity commits with the update that emitted it: counted per kind and method, from `since`
    /// on (inclusive) or in total; a throwing body and a replay emit nothing.
    @Test(arguments: Backend.available) func activityCommitsWithTheUpdate(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            #expect(try store.sheetStats(sheetId: "s", since: nil) == SheetStats())
            _ = try store.update(userId: "u1", eventId: "e1") { state, activity in
                state.latches["s"] = 1
                activity += [
                    SheetActivity(sheetId: "s", kind: .impression, at: Self.t(1000)),
                    SheetActivity(sheetId: "s", kind: .impression, at: Self.t(2000)),
                    SheetActivity(sheetId: "s", kind: .dismissal, method: "swipe", at: Self.t(2000)),
                    SheetActivity(sheetId: "s", kind: .dismissal, method: "closeButton", at: Self.t(3000)),
                    SheetActivity(sheetId: "s", kind: .latchRelease, at: Self.t(3000)),
                    SheetActivity(sheetId: "s", kind: .opened, at: Self.t(4000)),
                    SheetActivity(sheetId: "other", kind: .impression, at: Self.t(4000)),
                ]
                return [1]
            }
            let replay = try store.update(userId: "u1", eventId: "e1") { _, activity in
                activity.append(SheetActivity(sheetId: "s", kind: .impression, at: Self.t(9000)))
                return [2]
            }
            #expect(replay.replayed)
            #expect(throws: BodyFailed()) {
                try store.update(userId: "u2", eventId: nil) { _, activity in
                    activity.append(SheetActivity(sheetId: "s", kind: .impression, at: Self.t(9000)))
                    throw BodyFailed()
                }
            }
            _ = try store.update(userId: "u2", eventId: nil) { _, activity in
                activity.append(SheetActivity(sheetId: "s", kind: .dismissal, method: "swipe", at: Self.t(5000)))
                return []
            }
            let all = SheetStats(
                impressions: 2, uniqueUsers: 1, dismissals: ["swipe": 2, "closeButton": 1], latchReleases: 1, openedFrom: 1)
            #expect(try store.sheetStats(sheetId: "s", since: nil) == all)
            #expect(try store.sheetStats(sheetId: "s", since: Self.t(1000)) == all)
            #expect(
                try store.sheetStats(sheetId: "s", since: Self.t(2000))
                    == SheetStats(impressions: 1, uniqueUsers: 1, dismissals: ["swipe": 2, "closeButton": 1], latchReleases: 1, openedFrom: 1))
            #expect(try store.sheetStats(sheetId: "s", since: Self.t(4001)) == SheetStats(dismissals: ["swipe": 1]))
            #expect(try store.sheetStats(sheetId: "other", since: nil) == SheetStats(impressions: 1, uniqueUsers: 1))
        }
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

import Dispatch
import Foundation
import SQLiteStore
import SheetPolicy
import SheetStore
import Synchronization
import Testing

/// The stats' hour rollups and the retention (issue 25), on every backend: counters per sheet and
/// hour written with the events, unique users that follow the users' latest impressions, `since`
/// rounded up to an hour, pruning that folds old hours into the totals, event ids capped per user,
/// and erasure in parts.
@Suite struct RollupContractTests {
    static let hour: Int64 = 3_600_000
    static func t(_ ms: Int64) -> Timestamp { Timestamp(millisecondsSince1970: ms) }
    static func h(_ hours: Int64, plus ms: Int64 = 0) -> Timestamp { t(hours * hour + ms) }

    /// Activity commits with the update that emitted it, counted per kind and method: from the first
    /// whole hour at or after `since`, or in total; a throwing body and a replay emit nothing.
    @Test(arguments: Backend.available) func activityCommitsWithTheUpdate(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            #expect(try store.sheetStats(sheetId: "s", since: nil) == SheetStats())
            _ = try store.update(userId: "u1", eventId: "e1") { state, activity in
                state.latches["s"] = 1
                for at in [Self.h(1), Self.h(2, plus: 5)] {
                    state.campaign.recordImpression(of: "s", at: at, keepSeconds: nil)
                    activity.append(SheetActivity(sheetId: "s", kind: .impression, at: at))
                }
                state.campaign.recordImpression(of: "other", at: Self.h(4), keepSeconds: nil)
                activity += [
                    SheetActivity(sheetId: "s", kind: .dismissal, method: "swipe", at: Self.h(2)),
                    SheetActivity(sheetId: "s", kind: .dismissal, method: "closeButton", at: Self.h(3)),
                    SheetActivity(sheetId: "s", kind: .latchRelease, at: Self.h(3, plus: 1)),
                    SheetActivity(sheetId: "s", kind: .opened, at: Self.h(4)),
                    SheetActivity(sheetId: "other", kind: .impression, at: Self.h(4)),
                ]
                return [1]
            }
            let replay = try store.update(userId: "u1", eventId: "e1") { state, activity in
                state.campaign.recordImpression(of: "s", at: Self.h(9), keepSeconds: nil)
                activity.append(SheetActivity(sheetId: "s", kind: .impression, at: Self.h(9)))
                return [2]
            }
            #expect(replay.replayed)
            #expect(throws: BodyFailed()) {
                try store.update(userId: "u2", eventId: nil) { state, activity in
                    state.campaign.recordImpression(of: "s", at: Self.h(9), keepSeconds: nil)
                    activity.append(SheetActivity(sheetId: "s", kind: .impression, at: Self.h(9)))
                    throw BodyFailed()
                }
            }
            _ = try store.update(userId: "u2", eventId: nil) { _, activity in
                activity.append(SheetActivity(sheetId: "s", kind: .dismissal, method: "swipe", at: Self.h(5)))
                return []
            }
            let all = SheetStats(impressions: 2, uniqueUsers: 1, dismissals: ["swipe": 2, "closeButton": 1], latchReleases: 1, openedFrom: 1)
            #expect(try store.sheetStats(sheetId: "s", since: nil) == all)
            var fromHour1 = all
            fromHour1.countedFrom = Self.h(1)
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(1)) == fromHour1)
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(0, plus: 1)) == fromHour1, "rounded up to the next hour")
            // From hour 2 on: the second impression, u1's latest (so u1 still counts).
            #expect(
                try store.sheetStats(sheetId: "s", since: Self.h(1, plus: 1))
                    == SheetStats(
                        impressions: 1, uniqueUsers: 1, dismissals: ["swipe": 2, "closeButton": 1], latchReleases: 1, openedFrom: 1,
                        countedFrom: Self.h(2)))
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(4, plus: 1)) == SheetStats(dismissals: ["swipe": 1], countedFrom: Self.h(5)))
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(6)) == SheetStats(countedFrom: Self.h(6)))
            #expect(try store.sheetStats(sheetId: "other", since: nil) == SheetStats(impressions: 1, uniqueUsers: 1))
        }
    }

    /// A user's later impression moves them to its hour: counted once in total and from either
    /// hour; erased, they leave the unique users and their counted events stay.
    @Test(arguments: Backend.available) func uniqueUsersFollowTheirLatestImpression(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            for (user, hours) in [("a", [1, 3]), ("b", [1]), ("c", [3, 3]), ("a", [5])] {
                _ = try store.update(userId: user, eventId: nil) { state, activity in
                    for hour in hours {
                        state.campaign.recordImpression(of: "s", at: Self.h(Int64(hour)), keepSeconds: 60)
                        activity.append(SheetActivity(sheetId: "s", kind: .impression, at: Self.h(Int64(hour))))
                    }
                    return []
                }
            }
            #expect(try store.sheetStats(sheetId: "s", since: nil) == SheetStats(impressions: 6, uniqueUsers: 3))
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(1)).uniqueUsers == 3)
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(2)).uniqueUsers == 2)
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(4)) == SheetStats(impressions: 1, uniqueUsers: 1, countedFrom: Self.h(4)))
            try store.deleteUser(userId: "a")
            #expect(try store.userState(userId: "a") == UserState())
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(4)) == SheetStats(impressions: 1, countedFrom: Self.h(4)))
            #expect(try store.sheetStats(sheetId: "s", since: nil) == SheetStats(impressions: 6, uniqueUsers: 2))
        }
    }

    /// A series (issue 46): the hour rollups of a range, per hour or UTC day, every bucket in order
    /// (empty ones at zero), adding up to `sheetStats` over the same hours; other sheets and hours
    /// outside the range are left out.
    @Test(arguments: Backend.available) func seriesBucketsAddUpToTheStats(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            // Hours 1, 2 and 26 (day 0, day 0, day 1) for "s"; user b's latest impression moves to hour 50.
            for (user, hours) in [("a", [1, 2]), ("b", [26]), ("b", [50]), ("c", [26])] {
                _ = try store.update(userId: user, eventId: nil) { state, activity in
                    for hour in hours {
                        state.campaign.recordImpression(of: "s", at: Self.h(Int64(hour), plus: 7), keepSeconds: nil)
                        activity += [
                            SheetActivity(sheetId: "s", kind: .impression, at: Self.h(Int64(hour), plus: 7)),
                            SheetActivity(sheetId: "s", kind: .dismissal, method: "swipe", at: Self.h(Int64(hour), plus: 9)),
                            SheetActivity(sheetId: "other", kind: .impression, at: Self.h(Int64(hour))),
                        ]
                    }
                    return []
                }
            }
            let all = RollupRange(since: Self.h(0), until: Self.h(72), width: .hour)
            let hours = try store.sheetStatsSeries(sheetId: "s", range: all)
            #expect(hours.count == 72)
            #expect(hours.map(\.start) == (0..<72).map { Self.h(Int64($0)) })
            #expect(hours[1].stats == SheetStats(impressions: 1, uniqueUsers: 0, dismissals: ["swipe": 1]), "a's latest impression is in hour 2")
            #expect(hours[2].stats == SheetStats(impressions: 1, uniqueUsers: 1, dismissals: ["swipe": 1]))
            #expect(hours[26].stats == SheetStats(impressions: 2, uniqueUsers: 1, dismissals: ["swipe": 2]))
            #expect(hours[50].stats == SheetStats(impressions: 1, uniqueUsers: 1, dismissals: ["swipe": 1]))
            #expect(hours[3].stats == SheetStats())
            #expect(Self.sum(hours) == SheetStats(impressions: 5, uniqueUsers: 3, dismissals: ["swipe": 5]))

            let days = try store.sheetStatsSeries(sheetId: "s", range: RollupRange(since: Self.h(0), until: Self.h(72), width: .day))
            #expect(days.map(\.start) == [Self.h(0), Self.h(24), Self.h(48)])
            #expect(days.map(\.stats.impressions) == [2, 2, 1])
            #expect(days.map(\.stats.uniqueUsers) == [1, 1, 1])
            #expect(Self.sum(days) == Self.sum(hours))

            // From a time inside hour 1 (counted from hour 2) to one inside hour 50 (hours before 50):
            // day buckets at either end hold part of their day; the sums are the stats from hour 2
            // less hour 50.
            let partial = RollupRange(since: Self.h(1, plus: 1), until: Self.h(50, plus: 1), width: .day)
            #expect(partial.countedFrom == Self.h(2) && partial.countedUntil == Self.h(50))
            let partialDays = try store.sheetStatsSeries(sheetId: "s", range: partial)
            #expect(partialDays.map(\.start) == [Self.h(0), Self.h(24), Self.h(48)])
            var expected = try store.sheetStats(sheetId: "s", since: Self.h(2))
            expected.countedFrom = nil
            expected.impressions -= 1
            expected.uniqueUsers -= 1
            expected.dismissals["swipe"]! -= 1
            #expect(Self.sum(partialDays) == expected)
            #expect(partialDays[2].stats == SheetStats())

            // A range with no whole hour, and another sheet's series.
            #expect(
                try store.sheetStatsSeries(sheetId: "s", range: RollupRange(since: Self.h(3, plus: 1), until: Self.h(3, plus: 2), width: .hour)) == []
            )
            #expect(Self.sum(try store.sheetStatsSeries(sheetId: "other", range: all)).impressions == 5)
            #expect(try store.sheetStatsSeries(sheetId: "nobody", range: all).allSatisfy { $0.stats == SheetStats() })
        }
    }

    static func sum(_ buckets: [SheetStatsBucket]) -> SheetStats {
        var total = SheetStats()
        for bucket in buckets {
            total.impressions += bucket.stats.impressions
            total.uniqueUsers += bucket.stats.uniqueUsers
            total.latchReleases += bucket.stats.latchReleases
            total.openedFrom += bucket.stats.openedFrom
            total.dismissals.merge(bucket.stats.dismissals, uniquingKeysWith: +)
        }
        return total
    }

    /// Retention folds hours past it into the archive, a bounded step at a time: the totals stay
    /// exact, `since` no longer sees those hours, younger hours stay.
    @Test(arguments: Backend.available) func pruningFoldsOldHoursIntoTheTotals(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        let store = try database.open(retention: StoreRetention(rollupSeconds: 10 * 3600))
        defer { store.close() }
        // 600 users, each in an hour of their own from hour 1 on (more rows than one prune step takes).
        let done = DispatchGroup()
        for i in 0..<600 {
            done.enter()
            store.submit(
                userId: "u\(i)", eventId: "e",
                { state, activity in
                    let at = Self.h(Int64(1 + i))
                    state.campaign.recordImpression(of: "s", at: at, keepSeconds: nil)
                    activity += [
                        SheetActivity(sheetId: "s", kind: .impression, at: at),
                        SheetActivity(sheetId: "s", kind: .dismissal, method: "scrim", at: at),
                    ]
                    return []
                }, completion: { _ in done.leave() })
        }
        done.wait()
        let total = SheetStats(impressions: 600, uniqueUsers: 600, dismissals: ["scrim": 600])
        #expect(try store.sheetStats(sheetId: "s", since: nil) == total)
        // Late in hour 610: hours 1 to 599 are past the retention of 10 hours.
        let now = Int64(611 * 3600 - 1)
        try database.prune(store, now: now)
        #expect(try store.sheetStats(sheetId: "s", since: nil) == total)
        #expect(try store.sheetStats(sheetId: "s", since: Self.h(0)).impressions == 600 - StoreRetention.pruneBatch)
        try database.prune(store, now: now)
        #expect(try store.sheetStats(sheetId: "s", since: nil) == total)
        #expect(
            try store.sheetStats(sheetId: "s", since: Self.h(0))
                == SheetStats(impressions: 1, uniqueUsers: 1, dismissals: ["scrim": 1], countedFrom: Self.h(0)))
        // A user folded away who comes back moves out of the archive into the new hour.
        _ = try store.update(userId: "u0", eventId: nil) { state, activity in
            state.campaign.recordImpression(of: "s", at: Self.h(700), keepSeconds: nil)
            activity.append(SheetActivity(sheetId: "s", kind: .impression, at: Self.h(700)))
            return []
        }
        #expect(try store.sheetStats(sheetId: "s", since: nil) == SheetStats(impressions: 601, uniqueUsers: 600, dismissals: ["scrim": 600]))
        #expect(try store.sheetStats(sheetId: "s", since: Self.h(650)) == SheetStats(impressions: 1, uniqueUsers: 1, countedFrom: Self.h(650)))
    }

    /// Event ids older than the retention's window are purged by a prune step; younger ones are kept.
    @Test(arguments: Backend.available) func expiredEventIdsArePurged(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        let store = try database.open()
        defer { store.close() }
        _ = try store.update(userId: "u1", eventId: "old") { _ in [1] }
        let now = Int64(Date().timeIntervalSince1970)
        try database.prune(store, now: now + 6 * 86_400)
        #expect(try store.update(userId: "u1", eventId: "old") { _ in [2] }.replayed, "kept for the window (7 days)")
        try database.prune(store, now: now + 8 * 86_400)
        #expect(try store.update(userId: "u1", eventId: "old") { _ in [2] }.replayed == false)
    }

    /// A user keeps only their latest `eventIdsPerUser` event ids: older ones apply again.
    @Test(arguments: Backend.available) func eventIdsAreCappedPerUser(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        let store = try database.open(retention: StoreRetention(eventIdsPerUser: 3))
        defer { store.close() }
        for i in 1...5 { _ = try store.update(userId: "u", eventId: "e\(i)") { _ in [UInt8(i)] } }
        _ = try store.update(userId: "other", eventId: "e1") { _ in [9] }
        for i in 3...5 {
            let again = try store.update(userId: "u", eventId: "e\(i)") { _ in [0] }
            #expect(again == EventResult(outcome: [UInt8(i)], replayed: true), "e\(i) is among the latest 3")
        }
        #expect(try store.update(userId: "other", eventId: "e1") { _ in [0] }.replayed, "another user's ids are theirs")
        // Replays record nothing: e1 and e2 were forgotten when e4 and e5 came.
        #expect(try store.update(userId: "u", eventId: "e1") { _ in [0] }.replayed == false)
        #expect(try store.update(userId: "u", eventId: "e2") { _ in [0] }.replayed == false)
        // Those two new records pushed e3 and e4 out.
        #expect(try store.update(userId: "u", eventId: "e3") { _ in [0] }.replayed == false)
        #expect(try store.update(userId: "u", eventId: "e2") { _ in [0] }.replayed, "recorded again among the latest 3")
    }

    /// Erasing a user with more event ids than one erase part holds removes them all, and nothing
    /// of anyone else.
    @Test(arguments: Backend.available) func eraseRemovesManyEventIdsInParts(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        let store = try database.open(retention: StoreRetention(eventIdsPerUser: 10_000))
        defer { store.close() }
        let count = StoreRetention.eraseBatch * 2 + 17
        let done = DispatchGroup()
        for i in 0..<count {
            done.enter()
            store.submit(
                userId: "big", eventId: "e\(i)",
                { state in
                    state.latches["s"] = i
                    return [1]
                }, completion: { _ in done.leave() })
        }
        _ = try store.update(userId: "small", eventId: "x") { state in
            state.latches["s"] = 1
            return [1]
        }
        done.wait()
        try store.deleteUser(userId: "big")
        #expect(try store.userState(userId: "big") == UserState())
        for i in [0, count / 2, count - 1] {
            #expect(try store.update(userId: "big", eventId: "e\(i)") { _ in [2] }.replayed == false)
        }
        #expect(try store.update(userId: "small", eventId: "x") { _ in [2] }.replayed)
        #expect(try store.userState(userId: "small").latches == ["s": 1])
    }

    /// Events reported late (`occurredAt`) committed together by the group-commit writer: each counts in
    /// the hour it happened, a late impression does not move its user back to an earlier hour of the
    /// unique users, and a job that throws (an `occurredAt` outside its window) stores nothing and
    /// leaves its event id unused.
    @Test(arguments: Backend.available) func lateEventsInOneGroupCommit(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            func impression(_ at: Timestamp) -> @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8] {
                { state, activity in
                    state.campaign.recordImpression(of: "s", at: at, keepSeconds: 86_400)
                    activity.append(SheetActivity(sheetId: "s", kind: .impression, at: at))
                    return [1]
                }
            }
            let jobs: [(eventId: String, body: @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8])] = [
                ("i-5", impression(Self.h(5))),
                ("i-3", impression(Self.h(3, plus: 1))),
                ("x", { _, _ in throw BodyFailed() }),
                (
                    "d-2",
                    { _, activity in
                        activity.append(SheetActivity(sheetId: "s", kind: .dismissal, method: "swipe", at: Self.h(2)))
                        return [2]
                    }
                ),
            ]
            let done = DispatchGroup()
            let failures = ConcurrentFailures()
            for job in jobs {
                done.enter()
                store.submit(userId: "u1", eventId: job.eventId, job.body) { result in
                    if case .failure(let error) = result { failures.add(job.eventId, error) }
                    done.leave()
                }
            }
            done.wait()
            #expect(failures.eventIds == ["x"])
            let again = try store.update(userId: "u1", eventId: "x", impression(Self.h(4)))
            #expect(!again.replayed, "a refused event leaves its id unused")
            #expect(try store.userState(userId: "u1").campaign.impressions["s"] == [Self.h(3, plus: 1), Self.h(4), Self.h(5)])
            #expect(try store.sheetStats(sheetId: "s", since: nil) == SheetStats(impressions: 3, uniqueUsers: 1, dismissals: ["swipe": 1]))
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(5)) == SheetStats(impressions: 1, uniqueUsers: 1, countedFrom: Self.h(5)))
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(4)) == SheetStats(impressions: 2, uniqueUsers: 1, countedFrom: Self.h(4)))
            #expect(try store.sheetStats(sheetId: "s", since: Self.h(3)) == SheetStats(impressions: 3, uniqueUsers: 1, countedFrom: Self.h(3)))
            #expect(
                try store.sheetStats(sheetId: "s", since: Self.h(2))
                    == SheetStats(impressions: 3, uniqueUsers: 1, dismissals: ["swipe": 1], countedFrom: Self.h(2)))
        }
    }
}

/// The event ids whose jobs failed, collected from the writer's completions.
private final class ConcurrentFailures: Sendable {
    private let ids = Mutex<[String]>([])
    func add(_ eventId: String, _ error: any Error) { ids.withLock { $0.append(eventId) } }
    var eventIds: [String] { ids.withLock { $0 } }
}

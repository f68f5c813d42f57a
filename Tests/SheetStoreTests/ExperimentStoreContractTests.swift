import Concurrency
import Dispatch
import Foundation
import SQLiteStore
import SheetPolicy
import SheetStore
import TestSupport
import Testing

/// The experiment half of the store contract (issue 27), on every backend: exposures once per
/// experiment and user (insert-or-ignore, across reopenings and concurrent writers), impressions
/// and conversions counted on the exposure's row, unattributed conversions, pins leaving the
/// results, erasure, and the user's own copy of exposures and pins in their state.
@Suite struct ExperimentStoreContractTests {
    static func t(_ ms: Int64) -> Timestamp { Timestamp(millisecondsSince1970: ms) }

    /// An update that exposes `user` to `experiment` in `arm` at `at` (as the service's recorder does).
    static func expose(_ store: any SheetStore, _ user: String, _ experiment: String, _ arm: String, at: Int64) throws {
        _ = try store.update(userId: user, eventId: nil) { (state: inout UserState, activity: inout [SheetActivity]) in
            if state.experiments.exposures[experiment] == nil {
                state.experiments.exposures[experiment] = ExperimentState.Exposure(arm: arm, at: t(at))
            }
            // Emitted even when the state had it: the table must ignore a second exposure by itself.
            activity.append(SheetActivity(sheetId: "offers", kind: .exposure, at: t(at), experimentId: experiment, arm: arm))
            return []
        }
    }

    static func fact(_ store: any SheetStore, _ user: String, _ kind: SheetActivity.Kind, _ experiment: String, arm: String?) throws {
        _ = try store.update(userId: user, eventId: nil) { (_: inout UserState, activity: inout [SheetActivity]) in
            activity.append(SheetActivity(sheetId: "offers", kind: kind, at: t(0), experimentId: experiment, arm: arm))
            return []
        }
    }

    /// Exposures count once per user, whatever arm a second one names; impressions and conversions
    /// add to the exposure's row; converted users are distinct; unattributed ones are a counter.
    @Test(arguments: Backend.available) func countsAreExact(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        let store = try database.open()
        try Self.expose(store, "u1", "e1", "a", at: 1_000)
        try Self.expose(store, "u1", "e1", "b", at: 2_000)  // ignored: u1 stays in a, exposed at 1000
        try Self.expose(store, "u2", "e1", "a", at: 1_500)
        try Self.expose(store, "u3", "e1", "b", at: 1_700)
        try Self.expose(store, "u1", "other", "x", at: 1_000)
        try Self.fact(store, "u1", .experimentImpression, "e1", arm: "a")
        try Self.fact(store, "u1", .experimentImpression, "e1", arm: "a")
        try Self.fact(store, "u3", .experimentImpression, "e1", arm: "b")
        try Self.fact(store, "u1", .conversion, "e1", arm: "a")
        try Self.fact(store, "u1", .conversion, "e1", arm: "a")
        try Self.fact(store, "u9", .conversion, "e1", arm: nil)
        try Self.fact(store, "u2", .conversion, "e1", arm: nil)

        let counts = try store.experimentCounts(experimentId: "e1")
        #expect(counts.arms["a"] == ExperimentArmCounts(exposedUsers: 2, impressions: 2, convertedUsers: 1, conversions: 2))
        #expect(counts.arms["b"] == ExperimentArmCounts(exposedUsers: 1, impressions: 1, convertedUsers: 0, conversions: 0))
        #expect(counts.unattributed == 2)
        #expect(try store.experimentCounts(experimentId: "other").arms["x"]?.exposedUsers == 1)
        #expect(try store.experimentCounts(experimentId: "unknown") == ExperimentCounts())
        #expect(try store.userState(userId: "u1").experiments.exposures["e1"] == ExperimentState.Exposure(arm: "a", at: Self.t(1_000)))
    }

    /// A pin takes the user's row out of the results and puts it back when removed; pins are part
    /// of the user's state; erasing the user removes their rows and pins.
    @Test(arguments: Backend.available) func pinsAndErasure(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        let store = try database.open()
        try Self.expose(store, "u1", "e1", "a", at: 1_000)
        try Self.expose(store, "u2", "e1", "a", at: 1_000)
        _ = try store.update(userId: "u1", eventId: nil) { (state: inout UserState, activity: inout [SheetActivity]) in
            state.experiments.pins["e1"] = "b"
            activity.append(SheetActivity(sheetId: "e1", kind: .pin, at: Self.t(0), experimentId: "e1", arm: "b"))
            return []
        }
        #expect(try store.userState(userId: "u1").experiments.pins == ["e1": "b"])
        #expect(try store.experimentCounts(experimentId: "e1").arms["a"]?.exposedUsers == 1)
        _ = try store.update(userId: "u1", eventId: nil) { (state: inout UserState, activity: inout [SheetActivity]) in
            state.experiments.pins["e1"] = nil
            activity.append(SheetActivity(sheetId: "e1", kind: .pin, at: Self.t(0), experimentId: "e1", arm: nil))
            return []
        }
        #expect(try store.userState(userId: "u1").experiments.pins == [:])
        #expect(try store.experimentCounts(experimentId: "e1").arms["a"]?.exposedUsers == 2)

        try store.deleteUser(userId: "u1")
        #expect(try store.userState(userId: "u1") == UserState())
        #expect(try store.experimentCounts(experimentId: "e1").arms["a"]?.exposedUsers == 1)
    }

    /// Exposures survive reopening the store, and one made again after it is still ignored; many
    /// writers exposing the same users at once count each user once.
    @Test(arguments: Backend.available) func onceAcrossReopeningAndConcurrentWriters(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        var store = try database.open()
        try Self.expose(store, "u1", "e1", "a", at: 1_000)
        store.close()
        store = try database.open()
        try Self.expose(store, "u1", "e1", "a", at: 5_000)
        #expect(try store.experimentCounts(experimentId: "e1").arms["a"]?.exposedUsers == 1)
        #expect(try store.userState(userId: "u1").experiments.exposures["e1"]?.at == Self.t(1_000))

        // Two stores on the same database (two replicas on PostgreSQL; two writers queueing on SQLite).
        let other = try database.open()
        let shared = store
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 40) { i in
            let target = i % 2 == 0 ? shared : other
            do { try Self.expose(target, "c\(i % 5)", "e2", "a", at: Int64(i)) } catch { failures.withLock { $0 += 1 } }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try store.experimentCounts(experimentId: "e2").arms["a"]?.exposedUsers == 5)
        other.close()
        store.close()
    }
}

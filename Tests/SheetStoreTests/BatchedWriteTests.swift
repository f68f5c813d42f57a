import Dispatch
import Foundation
import PostgresKit
import SQLiteStore
import SheetPolicy
import SheetStore
import Synchronization
import TestSupport
import Testing

@testable import PostgresStore

/// The group-commit engine on every backend: a batch writes each user's state once (the state after
/// the user's last event, when it differs from the one loaded in its transaction), the event ids and
/// rollups once. What it stores must be what the same events store one at a time, in the batch and
/// in the reruns (halves, down to the event at fault) after a statement failed.
@Suite struct BatchedWriteTests {
    /// What one scripted event does to its user's state (and the activity it emits).
    enum Operation: Sendable {
        case count(ContainerKey, ContainerCount?)
        case latch(String, Int?)
        case push(StackEntry)
        case pop(Int)
        case height(HeightKey, Double?)
        case impression(String, Timestamp)
        case dismissal(String, Timestamp, method: String)
        case forget(String)
        case segments([String])
        /// Sent for a user id longer than the schema allows: the database refuses the batch's statement.
        case refused
    }

    struct Event: Sendable {
        let index: Int
        let userId: String
        let eventId: String?
        let operation: Operation
    }

    static let users = ["u0", "u1", "u2", #"u{"3",\}"#, "u4", "u5"]
    static let sheets = ["s-a", "s-b", "s-c"]
    /// Longer than a user id may be (`user_states.user_id`'s check).
    static let refusedUser = String(repeating: "x", count: 200)

    static func apply(_ operation: Operation, to state: inout UserState, activity: inout [SheetActivity]) {
        switch operation {
        case .count(let key, let value): state.containers[key] = value
        case .latch(let sheetId, let count): state.latches[sheetId] = count
        case .push(let entry): state.stack.append(entry)
        case .pop(let n): state.stack.removeLast(min(n, state.stack.count))
        case .height(let key, let height): state.contentHeights[key] = height
        case .impression(let sheetId, let at):
            state.campaign.recordImpression(of: sheetId, at: at, keepSeconds: 3600)
            activity.append(SheetActivity(sheetId: sheetId, kind: .impression, at: at))
        case .dismissal(let sheetId, let at, let method):
            state.campaign.lastDismissals[sheetId] = at
            activity.append(SheetActivity(sheetId: sheetId, kind: .dismissal, method: method, at: at))
        case .forget(let sheetId):
            state.campaign.impressions[sheetId] = nil
            state.campaign.impressionTotals[sheetId] = nil
            state.campaign.lastDismissals[sheetId] = nil
        case .segments(let segments): state.campaign.segments = segments
        case .refused: state.containers[ContainerKey(containerId: "c1")] = ContainerCount(count: 1)
        }
    }

    static func script(seed: UInt64, count: Int, refusing: Bool) -> [Event] {
        var rng = SplitMix64(seed: seed)
        var events: [Event] = []
        var eventIds: [String: [String]] = [:]
        for index in 0..<count {
            let userId = rng.pick(users)
            let sheetId = rng.pick(sheets)
            let at = Timestamp(millisecondsSince1970: 1_700_000_000_000 + Int64(index) * 1000)
            let operation: Operation
            if refusing && index == count / 2 {
                operation = .refused
            } else {
                switch rng.int(in: 0...9) {
                case 0, 1:
                    let key = ContainerKey(containerId: rng.pick(["c1", "c2"]), filter: rng.pick(["", "f:1"]))
                    operation = .count(
                        key, rng.chance(20) ? nil : ContainerCount(count: rng.int(in: 0...9), seq: rng.maybe(50) { $0.int(in: 1...99) }))
                case 2: operation = .latch(sheetId, rng.chance(30) ? nil : rng.int(in: 0...5))
                case 3:
                    operation = .push(
                        StackEntry(
                            sheetId: sheetId, mode: rng.chance(50) ? .push : .replace, replacedSheetId: rng.maybe(50) { $0.pick(sheets) }))
                case 4: operation = .pop(rng.int(in: 1...2))
                case 5:
                    operation = .height(
                        HeightKey(sheetId: sheetId, platform: rng.chance(50) ? .ios : .android),
                        rng.chance(20) ? nil : Double(rng.int(in: 1...999)) / 4)
                case 6: operation = .impression(sheetId, at)
                case 7: operation = .dismissal(sheetId, at, method: rng.pick(["swipe", "closeButton"]))
                case 8: operation = .forget(sheetId)
                default: operation = .segments(rng.chance(30) ? [] : [#"a"b\c,{d}"#, rng.pick(["vip", "new"])])
                }
            }
            // Most events carry an id; some repeat an earlier id of the same user (a retry).
            var eventId: String?
            if case .refused = operation {
                eventId = nil
            } else if rng.chance(15), let earlier = eventIds[userId], !earlier.isEmpty {
                eventId = rng.pick(earlier)
            } else if rng.chance(85) {
                eventId = "e\(index)"
                eventIds[userId, default: []].append("e\(index)")
            }
            if case .refused = operation {
                events.append(Event(index: index, userId: refusedUser, eventId: eventId, operation: operation))
                continue
            }
            events.append(Event(index: index, userId: userId, eventId: eventId, operation: operation))
        }
        return events
    }

    static func outcome(_ index: Int) -> [UInt8] { [UInt8(index & 0xff), UInt8(index >> 8)] }

    @Test(arguments: Backend.available, [false, true])
    func batchesStoreWhatEventsOneAtATimeStore(_ backend: Backend, refusing: Bool) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        // One writer, so that the batches are what the commits count.
        let store: any SheetStore =
            backend == .postgres
            ? try PostgresSheetStore.open(url: database.location, readerConnections: 2, writerConnections: 1) : try database.open()
        defer { store.close() }
        let events = Self.script(seed: refusing ? 7 : 3, count: 300, refusing: refusing)

        // The expected outcome, one event at a time in submission order.
        var expected: [String: UserState] = [:]
        var firstOutcome: [String: [UInt8]] = [:]
        var expectedActivity: [SheetActivity] = []
        var expectedResults: [Int: (outcome: [UInt8], replayed: Bool)?] = [:]
        for event in events {
            let key = event.eventId.map { event.userId + "/" + $0 }
            if let key, let outcome = firstOutcome[key] {
                expectedResults[event.index] = (outcome, true)
                continue
            }
            if case .refused = event.operation {
                expectedResults.updateValue(nil, forKey: event.index)
                continue
            }
            var activity: [SheetActivity] = []
            Self.apply(event.operation, to: &expected[event.userId, default: UserState()], activity: &activity)
            expectedActivity += activity
            if let key { firstOutcome[key] = Self.outcome(event.index) }
            expectedResults[event.index] = (Self.outcome(event.index), false)
        }

        // Every event submitted while the writer is held by a first one: they queue, then share batches.
        let release = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        store.submit(
            userId: "holder", eventId: nil,
            { _ in
                held.signal(); release.wait(); return []
            }
        ) { _ in }
        held.wait()
        let commitsBefore = store.writeStatistics.commits
        let done = DispatchGroup()
        let results = Mutex<[Int: Result<EventResult, any Error>]>([:])
        for event in events {
            done.enter()
            store.submit(
                userId: event.userId, eventId: event.eventId,
                { state, activity in
                    Self.apply(event.operation, to: &state, activity: &activity)
                    return Self.outcome(event.index)
                }
            ) { result in
                results.withLock { $0[event.index] = result }
                done.leave()
            }
        }
        release.signal()
        done.wait()

        let all = results.withLock { $0 }
        for event in events {
            let result = try #require(all[event.index])
            if let wanted = expectedResults[event.index]!, let got = try? result.get() {
                #expect(got.outcome == wanted.outcome && got.replayed == wanted.replayed, "event \(event.index)")
            } else {
                #expect(expectedResults[event.index]! == nil, "event \(event.index) failed: \(result)")
                #expect(throws: StoreError.self) { try result.get() }
            }
        }
        #expect(store.writeStatistics.commits - commitsBefore <= 10, "the events shared a few transactions")
        for userId in Self.users {
            #expect(try store.userState(userId: userId) == expected[userId, default: UserState()], "user \(userId)")
        }
        for sheetId in Self.sheets {
            // Unique users: those whose impression log of the sheet is not empty at the end.
            var wanted = SheetStats(uniqueUsers: expected.values.filter { $0.campaign.impressions[sheetId] != nil }.count)
            for record in expectedActivity where record.sheetId == sheetId {
                if record.kind == .impression { wanted.impressions += 1 } else { wanted.dismissals[record.method!, default: 0] += 1 }
            }
            #expect(try store.sheetStats(sheetId: sheetId, since: nil) == wanted, "totals of \(sheetId)")
            wanted.countedFrom = Timestamp(millisecondsSince1970: 0)
            #expect(try store.sheetStats(sheetId: sheetId, since: Timestamp(millisecondsSince1970: 0)) == wanted, "rollups of \(sheetId)")
        }
    }
}

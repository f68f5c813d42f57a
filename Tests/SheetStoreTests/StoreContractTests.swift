import Dispatch
import Foundation
import SQLiteStore
import SheetPolicy
import SheetStore
import TestSupport
import Testing

/// The SheetStore protocol's promises, checked on every backend with the same test bodies.
@Suite struct StoreContractTests {
    static let key = ContainerKey(containerId: "c")

    /// A user never seen reads as the empty state.
    @Test(arguments: Backend.available) func unknownUserIsEmpty(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            #expect(try store.userState(userId: "nobody") == UserState())
        }
    }

    /// Containers with filters, latches, stack order (flow steps included) and heights survive a
    /// write and a read; only the differences of a second update are written, removals remove.
    @Test(arguments: Backend.available) func stateRoundTripsAndUpdatesByDifference(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            let result = try store.update(userId: "u1", eventId: nil) { state in
                state = sampleState
                return Array("ok".utf8)
            }
            #expect(result == EventResult(outcome: Array("ok".utf8), replayed: false))
            #expect(try store.userState(userId: "u1") == sampleState)
            #expect(try store.userState(userId: "u2") == UserState(), "other users are untouched")

            var expected = sampleState
            expected.containers[ContainerKey(containerId: "accounts", filter: "savings")] = nil
            expected.containers[ContainerKey(containerId: "accounts")] = ContainerCount(count: 4, seq: 8)
            expected.containers[ContainerKey(containerId: "new", filter: "f")] = ContainerCount(count: 9, seq: nil)
            expected.latches["tips"] = nil
            expected.latches["offer-cards"] = 4
            expected.stack = [StackEntry(sheetId: "b-bottom", mode: .push), StackEntry(sheetId: "d", mode: .push)]
            expected.contentHeights[HeightKey(sheetId: "offer-cards", platform: .android)] = nil
            expected.contentHeights[HeightKey(sheetId: "offer-cards", platform: .ios)] = 100
            _ = try store.update(userId: "u1", eventId: nil) { state in
                #expect(state == sampleState, "the body sees the stored state")
                state = expected
                return []
            }
            #expect(try store.userState(userId: "u1") == expected)
            _ = try store.update(userId: "u1", eventId: nil) { state in
                state.stack = []; return []
            }
            #expect(try store.userState(userId: "u1").stack == [])
        }
    }

    /// An event id already processed is answered with its first outcome; the body is not called.
    @Test(arguments: Backend.available) func eventIdReplaysTheFirstOutcome(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            let first = try store.update(userId: "u1", eventId: "e1") { state in
                state.latches["s"] = 1
                return [1, 0, 255]
            }
            #expect(first == EventResult(outcome: [1, 0, 255], replayed: false))
            let second = try store.update(userId: "u1", eventId: "e1") { state in
                Issue.record("the body of a replayed event must not run")
                state.latches["s"] = 99
                return [9]
            }
            #expect(second == EventResult(outcome: [1, 0, 255], replayed: true))
            #expect(try store.userState(userId: "u1").latches == ["s": 1])
            let other = try store.update(userId: "u2", eventId: "e1") { _ in [7] }
            #expect(other == EventResult(outcome: [7], replayed: false), "event ids are per user")
            _ = try store.update(userId: "u1", eventId: "empty") { _ in [] }
            #expect(try store.update(userId: "u1", eventId: "empty") { _ in [1] } == EventResult(outcome: [], replayed: true))
        }
    }

    /// A throwing body changes nothing and records no event; its error comes back unchanged.
    @Test(arguments: Backend.available) func throwingBodyChangesNothing(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            _ = try store.update(userId: "u1", eventId: nil) { state in
                state = sampleState; return []
            }
            #expect(throws: BodyFailed()) {
                try store.update(userId: "u1", eventId: "e1") { state in
                    state = UserState(latches: ["x": 1])
                    throw BodyFailed()
                }
            }
            #expect(try store.userState(userId: "u1") == sampleState)
            let retry = try store.update(userId: "u1", eventId: "e1") { _ in [5] }
            #expect(retry.replayed == false, "the failed attempt did not record the event")
        }
    }

    /// Erasing a user removes every row of theirs, processed events included, and nobody else's.
    @Test(arguments: Backend.available) func deleteUserErasesEverything(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            _ = try store.update(userId: "u1", eventId: "e1") { state in
                state = sampleState; return [1]
            }
            _ = try store.update(userId: "u2", eventId: "e1") { state in
                state = sampleState; return [2]
            }
            try store.deleteUser(userId: "u1")
            try store.deleteUser(userId: "never-seen")
            #expect(try store.userState(userId: "u1") == UserState())
            #expect(try store.userState(userId: "u2") == sampleState)
            #expect(try store.update(userId: "u1", eventId: "e1") { _ in [3] }.replayed == false)
            #expect(try store.update(userId: "u2", eventId: "e1") { _ in [3] }.replayed == true)
        }
    }

    /// Many threads incrementing one user's count lose nothing, and concurrent updates share commits.
    @Test(arguments: Backend.available) func concurrentUpdatesLoseNothing(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            let threads = 8, perThread = 60
            runOnThreads(threads) { t in
                for i in 0..<perThread {
                    _ = try! store.update(userId: "u\(t % 3)", eventId: i % 2 == 0 ? "t\(t)-\(i)" : nil) { state in
                        state.containers[Self.key, default: ContainerCount(count: 0)].count += 1
                        return []
                    }
                }
            }
            let total = try (0..<3).map { try store.userState(userId: "u\($0)").count(for: Self.key) }.reduce(0, +)
            #expect(total == threads * perThread)
            let stats = store.writeStatistics
            #expect(stats.updates == threads * perThread)
            #expect(stats.commits <= stats.updates)
            print("\(backend) group commit: \(stats.updates) updates in \(stats.commits) commits, largest batch \(stats.largestBatch)")
        }
    }

    /// In a shared batch a failing body rolls back only its own update.
    @Test(arguments: Backend.available) func failingBodiesDoNotAffectOthers(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            let failures = ConcurrentCounter()
            runOnThreads(8) { t in
                for i in 0..<50 {
                    do {
                        _ = try store.update(userId: "u1", eventId: "t\(t)-\(i)") { state in
                            state.containers[Self.key, default: ContainerCount(count: 0)].count += 1
                            if i % 5 == 0 { throw BodyFailed() }
                            return []
                        }
                    } catch is BodyFailed {
                        failures.add()
                    } catch {
                        Issue.record("unexpected \(error)")
                    }
                }
            }
            #expect(failures.value == 8 * 10)
            #expect(try store.userState(userId: "u1").count(for: Self.key) == 8 * 40)
        }
    }

    /// The same event id sent 30 times at once is applied exactly once; all get the same outcome.
    @Test(arguments: Backend.available) func sameEventIdConcurrentlyAppliesOnce(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            let calls = ConcurrentCounter()
            let replays = ConcurrentCounter()
            runOnThreads(30) { _ in
                let result = try! store.update(userId: "u1", eventId: "once") { state in
                    calls.add()
                    state.containers[Self.key, default: ContainerCount(count: 0)].count += 1
                    return [42]
                }
                #expect(result.outcome == [42])
                if result.replayed { replays.add() }
            }
            #expect(calls.value == 1)
            #expect(replays.value == 29)
            #expect(try store.userState(userId: "u1").count(for: Self.key) == 1)
        }
    }

    /// Readers on other threads see one consistent snapshot per read while a writer runs.
    @Test(arguments: Backend.available) func readsRunAlongsideWrites(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            runOnThreads(4) { t in
                for _ in 0..<60 {
                    if t == 0 {
                        _ = try! store.update(userId: "u1", eventId: nil) { state in
                            state.containers[Self.key, default: ContainerCount(count: 0)].count += 1
                            state.latches["l"] = state.count(for: Self.key)
                            return []
                        }
                    } else {
                        let state = try! store.userState(userId: "u1")
                        #expect(state.latches["l"] ?? 0 == state.count(for: Self.key), "one snapshot per read")
                    }
                }
            }
            #expect(try store.userState(userId: "u1").count(for: Self.key) == 60)
        }
    }

    /// `submit` returns at once; each completion runs after the commit that carried it (a second
    /// store on the same database already sees the write), and updates queued meanwhile share commits.
    @Test(arguments: Backend.available) func submitCompletesAfterTheCommit(_ backend: Backend) throws {
        try withStore(backend) { store, database throws in
            let observer = try database.open()
            defer { observer.close() }
            let completed = ConcurrentCounter()
            let notVisible = ConcurrentCounter()
            let done = DispatchSemaphore(value: 0)
            let total = 300
            for i in 0..<total {
                store.submit(
                    userId: "u\(i)", eventId: "e\(i)",
                    { state in
                        state.containers[Self.key] = ContainerCount(count: i)
                        return [UInt8(i % 256)]
                    }
                ) { result in
                    #expect(try! result.get() == EventResult(outcome: [UInt8(i % 256)], replayed: false))
                    if (try? observer.userState(userId: "u\(i)").count(for: Self.key)) != i { notVisible.add() }
                    completed.add()
                    if completed.value == total { done.signal() }
                }
            }
            #expect(done.wait(timeout: .now() + 60) == .success)
            #expect(notVisible.value == 0)
            let stats = store.writeStatistics
            #expect(stats.updates == total)
            #expect(stats.commits < total)
        }
    }

    /// Sheets are created, replaced, listed by id (byte order) and deleted.
    @Test(arguments: Backend.available) func catalogCRUD(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            #expect(try store.catalog() == [])
            #expect(try store.putSheet(StoredSheet(id: "b", json: #"{"id":"b"}"#)) == true)
            #expect(try store.putSheet(StoredSheet(id: "b", json: #"{"id":"b","v":2}"#)) == false)
            try store.putSheets([StoredSheet(id: "a", json: #"{"id":"a"}"#), StoredSheet(id: "C", json: #"{"id":"C"}"#)])
            #expect(try store.catalog().map(\.id) == ["C", "a", "b"])
            #expect(try store.catalog()[2].json == #"{"id":"b","v":2}"#, "the JSON reads back byte for byte")
            #expect(try store.deleteSheet(id: "b") == true)
            #expect(try store.deleteSheet(id: "b") == false)
            #expect(try store.catalog().map(\.id) == ["C", "a"])
        }
    }

    /// A bad row is a failure naming the SQL, and a failed batch writes nothing.
    @Test(arguments: Backend.available) func invalidDefinitionsFail(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            let error = try #require(
                #expect(throws: StoreError.self) {
                    _ = try store.putSheet(StoredSheet(id: "x", json: "not json"))
                })
            guard case .failure(let message) = error else { Issue.record("expected .failure, got \(error)"); return }
            #expect(message.contains("INSERT INTO sheets"))
            #expect(throws: StoreError.self) {
                try store.putSheets([StoredSheet(id: "ok", json: "{}"), StoredSheet(id: "", json: "{}")])
            }
            #expect(try store.catalog() == [])
        }
    }

    /// After close every call is refused with `unavailable`, and a second close is harmless.
    @Test(arguments: Backend.available) func closedStoreRefusesCalls(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        let store = try database.open()
        _ = try store.update(userId: "u", eventId: nil) { state in
            state = sampleState; return []
        }
        try store.ping()
        store.close()
        #expect(throws: StoreError.self) { try store.ping() }
        #expect {
            _ = try store.update(userId: "u", eventId: nil) { _ in [] }
        } throws: { error in
            if case StoreError.unavailable = error { true } else { false }
        }
        store.close()
        let reopened = try database.open()
        defer { reopened.close() }
        #expect(try reopened.userState(userId: "u") == sampleState)
    }
}

/// A catalog change and its revision are one transaction on both backends: a revision that cannot
/// be stored (here a comment over the database's CHECK, which the service refuses earlier) leaves
/// the catalog as it was; an unchanged definition records no revision.
@Suite(.serialized) struct CatalogWriteTransactionTests {
    @Test(arguments: Backend.available) func aChangeWithoutItsRevisionCannotBeStored(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in try Self.check(store) }
    }

    static func check(_ store: any SheetStore) throws {
        let sheet = StoredSheet(id: "offers", json: #"{"kind":"cards"}"#)
        let tooLong = CatalogWriteRecord(author: RevisionAuthor(actor: "x", comment: String(repeating: "e", count: 1001)), keep: 10)
        #expect(throws: StoreError.self) { try store.putSheet(sheet, record: tooLong) }
        #expect(try store.catalog().isEmpty)
        #expect(try store.catalogRevisions(before: nil, limit: 10).isEmpty)

        let record = CatalogWriteRecord(author: RevisionAuthor(actor: "alice", comment: "first"), keep: 10)
        #expect(try store.putSheet(sheet, record: record))
        #expect(try store.catalogRevisions(before: nil, limit: 10).map(\.actor) == ["alice"])
        #expect(try !store.putSheet(sheet, record: record))
        #expect(try store.catalogRevisions(before: nil, limit: 10).count == 1, "an unchanged definition recorded a revision")
        #expect(throws: StoreError.self) { try store.deleteSheet(id: "offers", record: tooLong) }
        #expect(try store.catalog() == [sheet])
        #expect(try store.deleteSheet(id: "offers", record: record))
        #expect(try store.catalogRevisions(before: nil, limit: 10).count == 2)
    }
}

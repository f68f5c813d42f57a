import Concurrency
import Foundation
import SQLiteKit
import SheetPolicy
import TestSupport
import Testing

@testable import SQLiteStore
@testable import SheetStore

/// A store on a fresh temporary file, closed and removed afterwards.
func withStore<T>(_ body: (SQLiteSheetStore, TemporaryDirectory) throws -> T) throws -> T {
    let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
    defer { dir.remove() }
    let store = try SQLiteSheetStore.open(path: dir.file())
    defer { store.close() }
    return try body(store, dir)
}

// `BodyFailed`, `sampleState` and `runOnThreads` are shared with the contract tests (Backends.swift).

@Suite struct UserStateTests {
    /// The stored row is the new state, removals included; an empty state leaves no row.
    @Test func updateWritesTheDifference() throws {
        try withStore { store, dir throws in
            _ = try store.update(userId: "u1", eventId: nil) { state in
                state = sampleState; return []
            }
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

            // The row on disk is exactly the new state's (no leftovers from the old one).
            let db = try Connection(path: dir.file(), flags: [.readOnly])
            defer { db.close() }
            #expect(try db.scalar("SELECT state FROM user_states WHERE user_id = 'u1'") == .blob(UserStateCodec.encode(expected)))

            // Emptying the whole state deletes the row: it reads exactly as a user never seen.
            _ = try store.update(userId: "u1", eventId: nil) { state in
                state = UserState(); return []
            }
            #expect(try store.userState(userId: "u1") == UserState())
            #expect(try db.scalar("SELECT count(*) FROM user_states") == .integer(0))
        }
    }

}

@Suite struct ConcurrencyTests {
    static let key = ContainerKey(containerId: "c")

    /// With synchronous=FULL each commit waits for fsync, so concurrent callers queue up and share
    /// commits: fewer transactions than updates, and every update still lands.
    @Test func concurrentWritersShareCommits() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let store = try SQLiteSheetStore.open(path: dir.file(), synchronous: .full)
        defer { store.close() }
        runOnThreads(16) { t in
            for _ in 0..<25 {
                _ = try! store.update(userId: "u\(t % 4)", eventId: nil) { state in
                    state.containers[Self.key, default: ContainerCount(count: 0)].count += 1
                    return []
                }
            }
        }
        for u in 0..<4 { #expect(try store.userState(userId: "u\(u)").count(for: Self.key) == 100) }
        let stats = store.writeStatistics
        print("group commit (FULL): \(stats.updates) updates in \(stats.commits) commits, largest batch \(stats.largestBatch)")
        #expect(stats.updates == 400)
        #expect(stats.commits < stats.updates)
        #expect(stats.largestBatch > 1)
    }

    /// Closing while writers run: every caller gets either its committed result or `unavailable`,
    /// nothing hangs, and what was acknowledged is on disk.
    @Test func closeWhileWriting() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let store = try SQLiteSheetStore.open(path: dir.file())
        let acknowledged = ConcurrentCounter()
        let refused = ConcurrentCounter()
        let closer = Thread {
            usleep(20_000); store.close()
        }
        closer.start()
        runOnThreads(8) { _ in
            for _ in 0..<2000 {
                do {
                    _ = try store.update(userId: "u", eventId: nil) { state in
                        state.containers[Self.key, default: ContainerCount(count: 0)].count += 1
                        return []
                    }
                    acknowledged.add()
                } catch StoreError.unavailable {
                    refused.add()
                    return
                } catch {
                    Issue.record("unexpected \(error)")
                    return
                }
            }
        }
        store.close()
        let reopened = try SQLiteSheetStore.open(path: dir.file())
        defer { reopened.close() }
        #expect(try reopened.userState(userId: "u").count(for: Self.key) == acknowledged.value)
    }

    /// While a transaction runs, `submit` returns at once and its update queues; the writer thread
    /// then runs the queue in batches (one commit for many updates), and each completion runs after
    /// the commit that carried it (another connection already sees the write).
    @Test func submitsDuringACommitShareTheNextCommits() throws {
        try withStore { store, dir throws in
            let observer = try Observer(path: dir.file())
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let before = store.writeStatistics
            // An update that holds the writer's transaction open until every submit below is queued.
            let holder = Thread {
                _ = try! store.update(userId: "holder", eventId: nil) { state in
                    entered.signal()
                    release.wait()
                    state.containers[Self.key] = ContainerCount(count: 1)
                    return []
                }
            }
            holder.start()
            entered.wait()
            let completed = ConcurrentCounter()
            let notVisible = ConcurrentCounter()
            let done = DispatchSemaphore(value: 0)
            let total = 500
            for i in 0..<total {
                store.submit(
                    userId: "u\(i)", eventId: "e\(i)",
                    { state in
                        state.containers[Self.key] = ContainerCount(count: i)
                        return [UInt8(i % 256)]
                    }
                ) { result in
                    #expect(try! result.get() == EventResult(outcome: [UInt8(i % 256)], replayed: false))
                    if observer.count(of: "u\(i)") != i { notVisible.add() }
                    completed.add()
                    if completed.value == total { done.signal() }
                }
            }
            #expect(completed.value == 0, "queued behind the open transaction")
            release.signal()
            #expect(done.wait(timeout: .now() + 30) == .success)
            #expect(notVisible.value == 0)
            let stats = store.writeStatistics
            #expect(stats.updates - before.updates == total + 1)
            // The held transaction, then the queued updates in batches of at most `maxBatch`.
            let batches = (total + GroupCommitQueue<GroupCommitJob>.maxBatch - 1) / GroupCommitQueue<GroupCommitJob>.maxBatch
            #expect(stats.commits - before.commits == 1 + batches)
            #expect(stats.largestBatch == GroupCommitQueue<GroupCommitJob>.maxBatch)
        }
    }

    /// A batch adds its activity to the per-sheet totals once per sheet, kind and method; an update
    /// whose body throws (its changes dropped) adds nothing. The totals (read without `since`)
    /// equal the count of the activity rows (read with it).
    @Test func batchTotalsCountOnlyCommittedActivity() throws {
        try withStore { store, _ throws in
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let holder = Thread {
                _ = try! store.update(userId: "holder", eventId: nil) { _, _ in
                    entered.signal()
                    release.wait()
                    return []
                }
            }
            holder.start()
            entered.wait()
            let done = DispatchGroup()
            let failed = ConcurrentCounter()
            for i in 0..<60 {
                done.enter()
                store.submit(
                    userId: "u\(i % 7)", eventId: "e\(i)",
                    { state, activity in
                        let at = Timestamp(millisecondsSince1970: 1000 + Int64(i))
                        activity.append(SheetActivity(sheetId: "s", kind: .dismissal, method: i % 2 == 0 ? "swipe" : "closeButton", at: at))
                        activity.append(SheetActivity(sheetId: i % 3 == 0 ? "t" : "s", kind: .impression, at: at))
                        if i % 5 == 0 { throw BodyFailed() }
                        state.containers[Self.key] = ContainerCount(count: i)
                        return []
                    }
                ) { result in
                    if case .failure = result { failed.add() }
                    done.leave()
                }
            }
            release.signal()
            #expect(done.wait(timeout: .now() + 30) == .success)
            #expect(failed.value == 12)
            let since = Timestamp(millisecondsSince1970: 0)
            for sheet in ["s", "t"] {
                var all = try store.sheetStats(sheetId: sheet, since: nil)
                all.countedFrom = since
                #expect(try store.sheetStats(sheetId: sheet, since: since) == all)
            }
            let s = try store.sheetStats(sheetId: "s", since: nil)
            #expect(s.dismissals == ["swipe": 24, "closeButton": 24])
            #expect(s.impressions == 32)
            #expect(try store.sheetStats(sheetId: "t", since: nil).impressions == 16)
            #expect(store.writeStatistics.largestBatch == 60)
        }
    }

    /// The WAL is checkpointed in the background: it does not grow with the number of commits, and
    /// no commit runs SQLite's automatic checkpoint.
    @Test func backgroundCheckpointsBoundTheWAL() throws {
        try withStore { store, dir throws in
            for i in 0..<3000 {
                _ = try store.update(userId: "u\(i % 50)", eventId: "e\(i)") { state in
                    state.containers[Self.key, default: ContainerCount(count: 0)].count += 1
                    return []
                }
            }
            var waited = 0
            while store.writeStatistics.checkpoints == 0 && waited < 200 { usleep(10_000); waited += 1 }
            #expect(store.writeStatistics.checkpoints > 0)
            // Each of the 3000 commits appended frames. When the writes stop, a checkpoint copies the
            // rest soon (`Checkpointer.settleDelay`), and after that complete checkpoint the next
            // commit starts the WAL over.
            var frames = Int.max
            for i in 0..<20 where frames >= SQLiteGroupCommitWriter.checkpointFrames {
                let before = store.writeStatistics.checkpoints
                _ = try store.update(userId: "u0", eventId: "after-\(i)") { _ in [] }
                var waited = 0
                while store.writeStatistics.checkpoints == before && waited < 100 { usleep(10_000); waited += 1 }
                _ = try store.update(userId: "u0", eventId: "restart-\(i)") { _ in [] }
                frames = store.writer.withLock { $0.current!.walFrames }
            }
            #expect(frames < SQLiteGroupCommitWriter.checkpointFrames)
            #expect(try store.userState(userId: "u7").count(for: Self.key) == 60)
            let wal = (try? FileManager.default.attributesOfItem(atPath: dir.file() + "-wal")[.size] as? Int) ?? 0
            #expect(wal < 64 << 20)
        }
    }

    /// Under sustained writes the WAL still starts over. Where background checkpoints cannot catch the
    /// last frames while commits keep coming, the writer checkpoints itself past
    /// `blockingCheckpointFrames` (on this project's machine: 1–3 times in this test); where they can
    /// (a slower disk spaces the commits out: 0 times in the fresh-machine container), SQLite starts
    /// the WAL over after a complete passive checkpoint. Either way the WAL stays bounded; without
    /// the writer's checkpoint it grew with every commit (measured under count PUT load: 80 MB within
    /// seconds).
    @Test func walStartsOverUnderSustainedWrites() throws {
        try withStore { store, dir throws in
            let users = (0..<20_000).map { "user-\($0)" }.shuffled()
            let done = DispatchGroup()
            for round in 0..<3 {
                for user in users {
                    done.enter()
                    store.submit(
                        userId: user, eventId: nil,
                        { state in
                            state.containers[Self.key] = ContainerCount(count: round + 1)
                            return []
                        }
                    ) { _ in done.leave() }
                }
            }
            #expect(done.wait(timeout: .now() + 120) == .success)
            let stats = store.writeStatistics
            #expect(stats.updates == 60_000)
            #expect(stats.walRestarts + stats.checkpoints >= 1)
            let wal = (try? FileManager.default.attributesOfItem(atPath: dir.file() + "-wal")[.size] as? Int) ?? 0
            // Without checkpoints the WAL keeps every frame of the 60 000 updates: 79 MB (measured with
            // both off). With them it stayed at 9–26 MB in every run so far.
            #expect(wal < 40 << 20, "WAL \(wal) bytes")
            #expect(try store.userState(userId: users[123]).count(for: Self.key) == 3)
            print(
                "sustained writes: \(stats.commits) commits, \(stats.checkpoints) background checkpoints, \(stats.walRestarts) restarts, WAL \(wal / 1024) KiB"
            )
        }
    }

    /// A reader holding an old snapshot keeps the WAL from starting over, but never stalls the writer
    /// for the busy timeout: the writer's checkpoint gives up after a few milliseconds and writes go on.
    @Test func longReaderDoesNotStallWrites() throws {
        try withStore { store, dir throws in
            _ = try store.update(userId: "seed", eventId: nil) { state in
                state.containers[Self.key] = ContainerCount(count: 1); return []
            }
            let reader = try Connection(path: dir.file(), flags: [.readOnly], options: .init(walJournal: false))
            try reader.execute("BEGIN")
            _ = try reader.scalar("SELECT count(*) FROM user_states")
            var slowest = Duration.zero
            for i in 0..<12_000 {
                let start = ContinuousClock.now
                _ = try store.update(userId: "user-\(i % 3000)", eventId: nil) { state in
                    state.containers[Self.key] = ContainerCount(count: i)
                    return []
                }
                slowest = max(slowest, ContinuousClock.now - start)
            }
            try reader.execute("COMMIT")
            #expect(slowest < .seconds(2), "slowest update took \(slowest) (busy timeout 5 s)")
            #expect(store.writeStatistics.walRestarts == 0, "no restart while the reader holds its snapshot")
        }
    }

    /// The decision read keeps its read transaction between reads while nothing is written (one
    /// transaction for many reads), and every write acknowledged before a read is in it all the same:
    /// group-committed updates, their asynchronous form, erasure.
    @Test func keptSnapshotsShowEveryAcknowledgedWrite() throws {
        try withStore { store, _ throws in
            func setCount(_ count: Int) throws {
                _ = try store.update(userId: "u1", eventId: nil) { state in
                    state.containers[Self.key] = ContainerCount(count: count)
                    return []
                }
            }
            // The database's own read (`userState` answers from the recently committed rows first).
            func stored() throws -> Int { try store.storedUserState(userId: "u1").count(for: Self.key) }
            try setCount(1)
            let begun = store.readSnapshotsBegun
            for _ in 0..<50 { #expect(try stored() == 1) }
            #expect(store.readSnapshotsBegun == begun + 1, "one read transaction for 50 reads")
            for count in 2...20 {
                try setCount(count)
                #expect(try stored() == count)
                #expect(try stored() == count)
            }
            #expect(store.readSnapshotsBegun == begun + 20, "a new one after each write, kept for the next read")
            let acknowledged = DispatchSemaphore(value: 0)
            store.submit(
                userId: "u1", eventId: nil,
                { state in
                    state.containers[Self.key] = ContainerCount(count: 99)
                    return []
                }
            ) { _ in acknowledged.signal() }
            acknowledged.wait()
            #expect(try stored() == 99)
            try store.deleteUser(userId: "u1")
            #expect(try store.storedUserState(userId: "u1") == UserState())
        }
    }

    /// Unlike the outside reader above, a snapshot kept by an idle thread of the store's own does not
    /// hold the WAL: the store's checkpoints end it first, so afterwards nothing reads from the WAL
    /// and an outside TRUNCATE checkpoint (which fails while any reader is in the WAL) succeeds.
    @Test func keptSnapshotsDoNotHoldBackCheckpoints() throws {
        try withStore { store, dir throws in
            _ = try store.update(userId: "seed", eventId: nil) { state in
                state.containers[Self.key] = ContainerCount(count: 1); return []
            }
            // Kept by this thread, which from now on only waits for the writer: its snapshot is in the WAL.
            #expect(try store.userState(userId: "seed").count(for: Self.key) == 1)
            // Enough commits (one or more WAL frames each) for the store to ask for checkpoints.
            for i in 0..<4_000 {
                _ = try store.update(userId: "user-\(i % 1000)", eventId: nil) { state in
                    state.containers[Self.key] = ContainerCount(count: i)
                    return []
                }
            }
            let outside = try Connection(path: dir.file(), flags: [.readWrite], options: .init(walJournal: false))
            defer { outside.close() }
            // A background checkpoint may still be running. It holds the checkpoint lock, which SQLite
            // tries once without the busy handler (SQLITE_BUSY at once): retry, with pauses, a while.
            var truncated = false
            for _ in 0..<100 where !truncated {
                truncated = (try? outside.checkpoint(.truncate, busyTimeoutMilliseconds: 50)) != nil
                if !truncated { usleep(20_000) }
            }
            #expect(truncated, "a reader still holds the WAL")
        }
    }

    /// A SQLite file serves one process: while another holds the lock on the database file itself,
    /// opening (or migrating) it is refused with a message that names the holder; stores of one process
    /// share it; a released lock frees it. No file beside the database plays a part.
    @Test func anotherProcessHoldingTheFileIsRefused() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-lock")
        defer { dir.remove() }
        let path = dir.file("sheetd.sqlite")
        // Another process's lock, as far as this process can tell: its own open file description.
        let other = open(path, O_RDWR | O_CREAT, 0o644)
        #expect(other >= 0)
        #expect(flock(other, LOCK_EX | LOCK_NB) == 0)
        for attempt in [{ _ = try SQLiteSheetStore.open(path: path) }, { _ = try SQLiteSheetStore.migrate(path: path) }] {
            do {
                try attempt()
                Issue.record("opened a database another process holds")
            } catch let error as StoreError {
                #expect("\(error)".contains("in use by another sheetd process (pid \(getpid()))"), "\(error)")
            }
        }
        #expect(DatabaseFiles.size(of: path) == 0, "refused before anything was written to the database")
        close(other)

        let first = try SQLiteSheetStore.open(path: path)
        let second = try SQLiteSheetStore.open(path: path)  // the same process: shared
        second.close()
        first.close()
    }

}

/// A second, read-only connection that looks at what is committed.
final class Observer: Sendable {
    private let db: Locked<Connection>
    init(path: String) throws { db = Locked(try Connection(path: path, flags: [.readOnly], options: .init(walJournal: false))) }
    func count(of userId: String) -> Int? {
        db.withLock { db in
            guard case .blob(let row)? = try? db.scalar("SELECT state FROM user_states WHERE user_id = ?1", [.text(userId)]),
                let state = try? UserStateCodec.decode(row)
            else { return nil }
            return state.containers[ConcurrencyTests.key]?.count
        }
    }
}

@Suite struct LifecycleTests {
    /// close() checkpoints and closes every connection: the WAL is gone (or empty); later calls are refused.
    @Test func closeCheckpointsTheWAL() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let store = try SQLiteSheetStore.open(path: dir.file())
        for i in 0..<50 {
            _ = try store.update(userId: "u\(i)", eventId: "e") { state in
                state = sampleState; return []
            }
        }
        // Readers on other threads, so close has connections of other threads to close as well.
        runOnThreads(4) { i in _ = try! store.userState(userId: "u\(i)") }
        try store.ping()
        store.close()
        let wal = dir.file() + "-wal"
        let size = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
        #expect(size == 0)
        #expect(throws: StoreError.self) { try store.ping() }
        #expect(throws: StoreError.self) { _ = try store.update(userId: "u", eventId: nil) { _ in [] } }
        store.close()

        let reopened = try SQLiteSheetStore.open(path: dir.file())
        defer { reopened.close() }
        #expect(try reopened.userState(userId: "u7") == sampleState)
    }

    /// A full database (SQLITE_FULL, here from a page limit on the writer): the write is `unavailable`,
    /// changes nothing, leaves no transaction open, and the next write succeeds on its own.
    @Test func fullDatabaseRecovers() throws {
        try withStore { store, _ throws in
            _ = try store.update(userId: "u1", eventId: nil) { state in
                state = sampleState; return []
            }
            try store.writer.withLock { writer in
                let db = try #require(writer.current)
                let pages = try #require(try db.pragma("page_count"))
                guard case .integer(let count) = pages else {
                    Issue.record("page_count is not an integer: \(pages)")
                    return
                }
                try db.execute("PRAGMA max_page_count = \(count)")
            }
            let error = try #require(
                #expect(throws: StoreError.self) {
                    _ = try store.update(userId: "u1", eventId: "big") { state in
                        for i in 0..<5000 { state.containers[ContainerKey(containerId: "c\(i)")] = ContainerCount(count: i) }
                        return []
                    }
                })
            guard case .unavailable(let message) = error else { Issue.record("expected unavailable, got \(error)"); return }
            #expect(message.contains("SQL"))
            #expect(store.writer.withLock { $0.current?.isAutocommit ?? true }, "no transaction left open")
            #expect(try store.userState(userId: "u1") == sampleState)
            // The faulty connection was dropped; the next write reopens and succeeds.
            _ = try store.update(userId: "u1", eventId: "big") { state in
                state.latches["after"] = 1; return []
            }
            #expect(try store.userState(userId: "u1").latches["after"] == 1)
            try store.ping()
        }
    }

    /// A read-only database file: writes are `unavailable`, reads still work, readiness says so, and
    /// service resumes by itself once the file is writable again.
    @Test func readOnlyFileMakesWritesUnavailable() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let path = dir.file()
        let setup = try SQLiteSheetStore.open(path: path)
        _ = try setup.update(userId: "u1", eventId: nil) { state in
            state = sampleState; return []
        }
        setup.close()

        guard makeReadOnly(path, true) else {
            print("skipped: cannot make a file read-only here (root without chattr)")
            return
        }
        defer { _ = makeReadOnly(path, false) }
        let store = try SQLiteSheetStore.open(path: path)
        defer { store.close() }
        #expect(try store.userState(userId: "u1") == sampleState)
        #expect(throws: StoreError.self, "readiness notices the read-only writer before any write") { try store.ping() }
        let error = try #require(
            #expect(throws: StoreError.self) {
                _ = try store.update(userId: "u1", eventId: "e") { state in
                    state.latches["x"] = 1; return []
                }
            })
        guard case .unavailable(let message) = error else { Issue.record("expected unavailable, got \(error)"); return }
        #expect(message.lowercased().contains("readonly") || message.contains("read-only") || message.contains("SQL"))
        #expect(throws: StoreError.self) { try store.putSheet(StoredSheet(id: "s", json: "{}")) }
        #expect(throws: StoreError.self) { try store.ping() }
        #expect(try store.userState(userId: "u1") == sampleState, "reads keep working")

        #expect(makeReadOnly(path, false))
        try store.ping()
        _ = try store.update(userId: "u1", eventId: "e") { state in
            state.latches["x"] = 1; return []
        }
        #expect(try store.userState(userId: "u1").latches["x"] == 1)
    }
}

/// Makes `path` read-only for this process: chattr +i as root (root ignores permissions), chmod otherwise.
func makeReadOnly(_ path: String, _ readOnly: Bool) -> Bool {
    if geteuid() == 0 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
        process.arguments = [readOnly ? "+i" : "-i", path]
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
    return chmod(path, readOnly ? 0o444 : 0o644) == 0
}

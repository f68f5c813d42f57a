import Foundation
import SQLiteKit
import SheetPolicy
import TestSupport
import Testing

@testable import SQLiteStore
@testable import SheetStore

/// The recently committed rows (`RecentUserStates`) answer `userState` only while they are exactly
/// what the database holds.
@Suite struct RecentUserStatesTests {
    static let key = ContainerKey(containerId: "c")

    private func setCount(_ count: Int, of userId: String, _ store: SQLiteSheetStore) throws {
        _ = try store.update(userId: userId, eventId: nil) { state in
            state.containers[Self.key] = ContainerCount(count: count)
            return []
        }
    }

    /// A publication with an earlier ticket (a batch that committed before) never replaces a later
    /// one, and `forgetAll` retires everything published before it.
    @Test func laterTicketsWinAndForgetAllRetiresEverything() {
        let recent = RecentUserStates()
        let first = recent.beginPublication(), second = recent.beginPublication()
        recent.committed([1], of: "u", ticket: second)
        recent.committed([2], of: "u", ticket: first)
        #expect(recent.bytes(of: "u") == [1] && recent.isPublishing)
        recent.endPublication()
        recent.endPublication()
        #expect(!recent.isPublishing)
        recent.forgetAll()
        #expect(recent.bytes(of: "u") == nil)
        recent.committed([3], of: "u", ticket: recent.beginPublication())
        recent.endPublication()
        #expect(recent.bytes(of: "u") == [3])
        #expect(recent.bytes(of: "never") == nil)
    }

    /// After a user's commit the next read of that user begins no read transaction, and it is the
    /// committed state; an erase or a catalog write (writes outside the batches) sends reads back to
    /// the database.
    @Test func readsAfterACommitComeFromMemoryUntilAnotherWrite() throws {
        try withStore { store, _ throws in
            try setCount(3, of: "u1", store)
            let begun = store.readSnapshotsBegun
            #expect(try store.userState(userId: "u1").count(for: Self.key) == 3)
            #expect(store.readSnapshotsBegun == begun, "no read transaction for a state just committed")

            try store.deleteUser(userId: "u1")
            #expect(try store.userState(userId: "u1") == UserState(), "the erased state is not served from memory")

            try setCount(4, of: "u2", store)
            #expect(try store.putSheet(StoredSheet(id: "s", json: #"{"kind":"informational","screen":"x"}"#)))
            let beforeRead = store.readSnapshotsBegun
            #expect(try store.userState(userId: "u2").count(for: Self.key) == 4)
            #expect(store.readSnapshotsBegun == beforeRead + 1, "after a direct write the read goes to the database")
        }
    }

    /// Random events, erasures and catalog writes from several threads: afterwards, and after every
    /// step of a single thread, `userState` equals the row in the file (read by another connection).
    @Test func memoryAlwaysMatchesTheFile() throws {
        try withStore { store, dir throws in
            let db = try Connection(path: dir.file(), flags: [.readOnly])
            defer { db.close() }
            func fileState(_ userId: String) throws -> UserState {
                guard case .blob(let bytes)? = try db.scalar("SELECT state FROM user_states WHERE user_id = ?1", [.text(userId)]) else {
                    return UserState()
                }
                return try UserStateCodec.decode(bytes)
            }
            var generator = SystemRandomNumberGenerator()
            for step in 0..<400 {
                let user = "u\(Int.random(in: 0..<6, using: &generator))"
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: try store.deleteUser(userId: user)
                case 1: _ = try store.putSheet(StoredSheet(id: "s\(step % 3)", json: #"{"kind":"informational","screen":"x"}"#))
                case 2: try setCount(0, of: user, store)  // back to the empty state: the row is deleted
                default: try setCount(Int.random(in: 1...50, using: &generator), of: user, store)
                }
                for u in 0..<6 { #expect(try store.userState(userId: "u\(u)") == fileState("u\(u)"), "step \(step)") }
            }
            runOnThreads(8) { t in
                for i in 0..<60 {
                    let user = "u\((t + i) % 6)"
                    if i % 17 == 0 { try! store.deleteUser(userId: user) } else { try! setCount(t * 100 + i, of: user, store) }
                }
            }
            for u in 0..<6 { #expect(try store.userState(userId: "u\(u)") == fileState("u\(u)")) }
        }
    }

    /// The writer builds a batch on the rows in memory only while they are the stored rows: a row
    /// another connection committed (as a second process would, the lock file aside) is read from
    /// the file, so the event applies to it and nothing that connection wrote is lost.
    @Test func theWriterReadsTheFileAfterAnotherConnectionCommitted() throws {
        try withStore { store, dir throws in
            try setCount(1, of: "u", store)
            let before = store.writerRowsReadFromMemory
            try setCount(2, of: "u", store)
            #expect(store.writerRowsReadFromMemory == before + 1, "the batch read the row it committed last from memory")
            try writeRow(of: "u", count: 5, other: 9, in: dir.file())
            _ = try store.update(userId: "u", eventId: nil) { state in
                state.containers[Self.key] = ContainerCount(count: state.count(for: Self.key) + 10)
                return []
            }
            let state = try store.storedUserState(userId: "u")
            #expect(state.count(for: Self.key) == 15, "built on the row the other connection wrote")
            #expect(state.count(for: Self.other) == 9, "the other connection's change is kept")
        }
    }

    /// A batch between its ticket and its publication (another store of the file that has committed
    /// and not yet published) keeps the writer off the memory, even after the writer's own later
    /// commit made the file's data version its own again.
    @Test func theWriterReadsTheFileWhileABatchIsPublishing() throws {
        try withStore { store, dir throws in
            let recent = try SnapshotCoordination.of(file: dir.file()).recentStates
            try setCount(1, of: "u", store)
            // Another store's batch: ticket taken, row committed, users not yet published.
            _ = recent.beginPublication()
            try writeRow(of: "u", count: 5, other: 9, in: dir.file())
            try setCount(3, of: "w", store)  // this batch reads the file (the data version moved) and commits
            _ = try store.update(userId: "u", eventId: nil) { state in
                state.containers[Self.key] = ContainerCount(count: state.count(for: Self.key) + 10)
                return []
            }
            recent.endPublication()
            let state = try store.storedUserState(userId: "u")
            #expect(state.count(for: Self.key) == 15 && state.count(for: Self.other) == 9, "nothing the publishing batch wrote is lost")
        }
    }

    static let other = ContainerKey(containerId: "other")

    /// Writes the user's row through a connection of its own: count `count` in `key` and `other` in `other`.
    private func writeRow(of userId: String, count: Int, other: Int, in path: String) throws {
        let db = try Connection(path: path, flags: [.readWrite])
        defer { db.close() }
        var state = UserState()
        state.containers[Self.key] = ContainerCount(count: count)
        state.containers[Self.other] = ContainerCount(count: other)
        try db.run(
            "INSERT INTO user_states (user_id, state) VALUES (?1, ?2) ON CONFLICT (user_id) DO UPDATE SET state = excluded.state",
            [.text(userId), .blob(UserStateCodec.encode(state))])
    }

    /// Two stores of one file in this process share the table: an erase through one is never
    /// answered from what the other committed.
    @Test func twoStoresOfOneFileShareIt() throws {
        try withStore { a, dir throws in
            let b = try SQLiteSheetStore.open(path: dir.file())
            defer { b.close() }
            try setCount(7, of: "u", a)
            #expect(try b.userState(userId: "u").count(for: Self.key) == 7)
            try b.deleteUser(userId: "u")
            #expect(try a.userState(userId: "u") == UserState())
            try setCount(8, of: "u", b)
            #expect(try a.userState(userId: "u").count(for: Self.key) == 8)
        }
    }
}

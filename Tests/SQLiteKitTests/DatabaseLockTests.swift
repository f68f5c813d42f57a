import Foundation
import SQLiteKit
import TestSupport
import Testing

@Suite struct DatabaseLockTests {
    /// A second lock on a held database is refused and names the holder's pid; once the first is
    /// released, the database can be locked again.
    @Test func secondLockIsRefusedWithTheHoldersPID() throws {
        let dir = try TemporaryDirectory(prefix: "sqlitekit-tests")
        defer { dir.remove() }
        let path = dir.file("test.sqlite")
        do {
            let held = try #require(try DatabaseLock.acquire(database: path))
            #expect(held.path == path)
            do {
                _ = try DatabaseLock.acquire(database: path)
                Issue.record("a second lock on a held database was granted")
            } catch {
                #expect(error.holderPID == Int(getpid()))
                #expect(error.path == path)
            }
            withExtendedLifetime(held) {}
        }
        let relocked = try DatabaseLock.acquire(database: path) != nil
        #expect(relocked)
    }

    /// The lock is the database file's own: no file appears beside it, and SQLite connections in the
    /// same process read and write the file while it is held (flock and SQLite's POSIX locks do not
    /// interact).
    @Test func theLockIsOnTheDatabaseAndLeavesSQLiteAlone() throws {
        let dir = try TemporaryDirectory(prefix: "sqlitekit-tests")
        defer { dir.remove() }
        let path = dir.file("held.sqlite")
        let held = try #require(try DatabaseLock.acquire(database: path))
        let db = try Connection(path: path)
        try db.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        #expect(try db.query("SELECT x FROM t") { $0.int(at: 0) } == [1])
        db.close()
        let beside = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { !$0.hasPrefix("held.sqlite") }
        #expect(beside.isEmpty, "\(beside)")
        withExtendedLifetime(held) {}
    }

    /// A database that cannot be created (its directory is missing) is no lock, not an error.
    @Test func missingDirectoryGivesNoLock() throws {
        let locked = try DatabaseLock.acquire(database: "/nonexistent-\(UUID().uuidString)/db.sqlite") != nil
        #expect(!locked)
    }
}

import Foundation
import SQLiteKit
import TestSupport
import Testing

@Suite struct DatabaseLockFileTests {
    /// A second lock on a held file is refused and names the holder's pid; once the first is
    /// released, the file can be locked again.
    @Test func secondLockIsRefusedWithTheHoldersPID() throws {
        let dir = try TemporaryDirectory(prefix: "sqlitekit-tests")
        defer { dir.remove() }
        let path = dir.file("test.sqlite.lock")
        do {
            let held = try #require(try DatabaseLockFile.acquire(path: path))
            #expect(held.path == path)
            do {
                _ = try DatabaseLockFile.acquire(path: path)
                Issue.record("a second lock on a held file was granted")
            } catch {
                #expect(error.holderPID == Int(getpid()))
                #expect(error.path == path)
            }
            withExtendedLifetime(held) {}
        }
        let relocked = try DatabaseLockFile.acquire(path: path) != nil
        #expect(relocked)
    }

    /// A lock file that cannot be created (its directory is missing) is no lock, not an error.
    @Test func missingDirectoryGivesNoLock() throws {
        let locked = try DatabaseLockFile.acquire(path: "/nonexistent-\(UUID().uuidString)/db.lock") != nil
        #expect(!locked)
    }
}

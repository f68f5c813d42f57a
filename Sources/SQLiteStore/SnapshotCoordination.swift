import SQLiteKit
import SheetStore
import Synchronization

/// What the stores of one database file in this process share: the write generation, their
/// reader slots, the recently committed user states (a second store on the same file, as tests open one to watch the first, then sees the
/// first one's writes in its kept snapshots, and either store's checkpoints end every idle snapshot),
/// and the lock that keeps other processes off the file.
///
/// The lock: a `DatabaseLock` on the database file itself, held while the process has the file open
/// (a `sheetd restore` or a second `sheetd serve` is refused for as long as it is held).
final class SnapshotCoordination: Sendable {
    let writeGeneration = Atomic<UInt64>(0)
    let slots = ReaderRegistry()
    /// The rows the writers of this file committed lately (see `RecentUserStates`).
    let recentStates = RecentUserStates()
    /// Held for the life of the coordination; nil when it could not be created (a read-only
    /// directory: nothing can write the database there either).
    private let lock: DatabaseLock?

    private init(lock: DatabaseLock?) {
        self.lock = lock
    }

    private struct WeakEntry {
        weak var coordination: SnapshotCoordination?
    }
    private static let byFile = Mutex<[String: WeakEntry]>([:])

    /// The coordination of the database at `path` (its directory must exist), made and locked on
    /// first use in this process.
    ///
    /// - Throws: `.unavailable` when another process holds the file.
    static func of(file path: String) throws(StoreError) -> SnapshotCoordination {
        let key = DatabaseFiles.canonicalPath(path)
        return try byFile.withLock { byFile throws(StoreError) -> SnapshotCoordination in
            if let existing = byFile[key]?.coordination { return existing }
            byFile = byFile.filter { $0.value.coordination != nil }
            let made = SnapshotCoordination(lock: try lock(path))
            byFile[key] = WeakEntry(coordination: made)
            return made
        }
    }

    /// The coordination of the database at `path` for a process that is about to replace the file
    /// (`sheetd restore`): locked like `of(file:)`, and refused as well when a store of this process
    /// has the file open.
    ///
    /// - Throws: `.unavailable` when another process, or a store in this one, holds the file.
    static func exclusive(file path: String) throws(StoreError) -> SnapshotCoordination {
        let key = DatabaseFiles.canonicalPath(path)
        return try byFile.withLock { byFile throws(StoreError) -> SnapshotCoordination in
            if byFile[key]?.coordination != nil { throw .unavailable("\(path) is open in this process") }
            let made = SnapshotCoordination(lock: try lock(path))
            byFile[key] = WeakEntry(coordination: made)
            return made
        }
    }

    private static func lock(_ path: String) throws(StoreError) -> DatabaseLock? {
        do {
            return try DatabaseLock.acquire(database: path)
        } catch {
            throw .unavailable(
                "\(path) is in use by another sheetd process\(error.holderPID.map { " (pid \($0))" } ?? ""): "
                    + "a SQLite database serves one process (run replicas on PostgreSQL)")
        }
    }
}

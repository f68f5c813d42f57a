import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the stores of one database file in this process share: the write generation and their
/// reader slots (a second store on the same file, as tests open one to watch the first, then sees the
/// first one's writes in its kept snapshots, and either store's checkpoints end every idle snapshot),
/// and the lock that keeps other processes off the file.
///
/// The lock: an exclusive `flock` on `<database>.sheetd-lock`, held while the process has the file
/// open (the kernel drops it when the process dies, `kill -9` included). A lock file beside the
/// database rather than a lock on it: closing any descriptor of the database file would drop the
/// POSIX locks SQLite holds on it.
final class SnapshotCoordination: Sendable {
    let writeGeneration = Atomic<UInt64>(0)
    let slots = ReaderRegistry()
    /// The locked lock file; -1 when it could not be created (a read-only directory: nothing can
    /// write the database there either).
    private let lockDescriptor: Int32

    private init(lockDescriptor: Int32) {
        self.lockDescriptor = lockDescriptor
    }

    deinit {
        if lockDescriptor >= 0 { close(lockDescriptor) }
    }

    private struct WeakEntry {
        weak var coordination: SnapshotCoordination?
    }
    private static let byFile = Mutex<[String: WeakEntry]>([:])

    /// The lock file of the database at `path`.
    static func lockPath(of path: String) -> String { path + ".sheetd-lock" }

    /// The coordination of the database at `path` (its directory must exist), made and locked on
    /// first use in this process.
    ///
    /// - Throws: `.unavailable` when another process holds the file.
    static func of(file path: String) throws(StoreError) -> SnapshotCoordination {
        let key = canonicalPath(path)
        return try byFile.withLock { byFile throws(StoreError) -> SnapshotCoordination in
            if let existing = byFile[key]?.coordination { return existing }
            byFile = byFile.filter { $0.value.coordination != nil }
            let made = SnapshotCoordination(lockDescriptor: try lock(path))
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
        let key = canonicalPath(path)
        return try byFile.withLock { byFile throws(StoreError) -> SnapshotCoordination in
            if byFile[key]?.coordination != nil { throw .unavailable("\(path) is open in this process") }
            let made = SnapshotCoordination(lockDescriptor: try lock(path))
            byFile[key] = WeakEntry(coordination: made)
            return made
        }
    }

    private static func lock(_ path: String) throws(StoreError) -> Int32 {
        let lockPath = lockPath(of: path)
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return -1 }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = readHolder(fd)
            close(fd)
            throw .unavailable(
                "\(path) is in use by another sheetd process\(holder.map { " (pid \($0))" } ?? "") holding \(lockPath): "
                    + "a SQLite database serves one process (run replicas on PostgreSQL)")
        }
        // The holder's pid, for the message above.
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        return fd
    }

    private static func readHolder(_ fd: Int32) -> Int? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int(String(decoding: bytes[..<count].prefix { $0 >= 0x30 && $0 <= 0x39 }, as: UTF8.self))
    }

    /// `path` with its directory resolved (the file itself may not exist yet).
    private static func canonicalPath(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return (realPath(".") ?? ".") + "/" + path }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        return (realPath(directory) ?? directory) + "/" + path[path.index(after: slash)...]
    }
}

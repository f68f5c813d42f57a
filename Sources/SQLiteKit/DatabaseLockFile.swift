#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on a lock file beside a database, held until the value is released (the
/// kernel also drops it when the process dies, `kill -9` included). The holder writes its pid into
/// the file, so that a process refused the lock can say who holds it.
///
/// A lock file rather than a lock on the database: closing any descriptor of the database file would
/// drop the POSIX locks SQLite holds on it.
public final class DatabaseLockFile: Sendable {
    /// Another process holds the lock.
    public struct Held: Error, Sendable {
        /// The lock file.
        public let path: String
        /// The holder's pid, when it recorded one.
        public let holderPID: Int?
    }

    /// The lock file.
    public let path: String
    /// Open (and locked) for the life of the value.
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Locks the file at `path` (created when missing) and records this process's pid in it; nil when
    /// the file cannot be created (a read-only directory: nothing can write a database there either).
    ///
    /// - Throws: `Held` when another process (or another lock file value of this one) holds it.
    public static func acquire(path: String) throws(Held) -> DatabaseLockFile? {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = readPID(fd)
            close(fd)
            throw Held(path: path, holderPID: holder)
        }
        let pid = Array("\(getpid())\n".utf8)
        if ftruncate(fd, 0) == 0 { _ = pid.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) } }
        return DatabaseLockFile(path: path, descriptor: fd)
    }

    /// The pid recorded at the start of the file, if any.
    private static func readPID(_ fd: Int32) -> Int? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int(String(decoding: bytes[..<count].prefix { $0 >= 0x30 && $0 <= 0x39 }, as: UTF8.self))
    }
}

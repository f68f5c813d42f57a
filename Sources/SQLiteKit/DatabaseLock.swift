#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive `flock` on the database file itself, held until the value is released (the kernel
/// also drops it when the process dies, `kill -9` included).
///
/// The lock is on the database rather than on a file beside it, so that nothing short of replacing
/// the database can take it away from a live process: a lock file could be deleted, or a copy renamed
/// over it, and a second server or a restore would then proceed.
///
/// `flock` locks and the POSIX (`fcntl`) locks SQLite takes do not interact on Linux, so holding
/// this one never blocks SQLite. The descriptor stays open for the life of the value because closing
/// any descriptor of the file would drop the POSIX locks SQLite holds on it in this process: release
/// the lock only after the process's SQLite connections to the file are closed.
public final class DatabaseLock: Sendable {
    /// Another process (or another lock value of this one) holds the database.
    public struct Held: Error, Sendable {
        /// The database file.
        public let path: String
        /// The holder's pid, when the system says (`/proc/locks`).
        public let holderPID: Int?
    }

    /// The database file.
    public let path: String
    /// Open (and locked) for the life of the value.
    private let descriptor: Int32

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Locks the database at `path`, creating an empty file when there is none (SQLite takes an empty
    /// file as a new database); nil when the file can neither be opened nor created (a missing or
    /// read-only directory: nothing can write a database there either).
    ///
    /// - Throws: `Held` when another process (or another value of this one) holds it.
    public static func acquire(database path: String) throws(Held) -> DatabaseLock? {
        var fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 { fd = open(path, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let holder = holderPID(fd)
            close(fd)
            throw Held(path: path, holderPID: holder)
        }
        return DatabaseLock(path: path, descriptor: fd)
    }

    /// The pid of the process holding a `flock` on the file behind `fd`, read from `/proc/locks`
    /// (lines such as `1: FLOCK  ADVISORY  WRITE 4242 08:01:1234 0 EOF`; waiters, marked `->`, are
    /// skipped); nil where the system has no such table.
    private static func holderPID(_ fd: Int32) -> Int? {
        var info = stat()
        guard fstat(fd, &info) == 0 else { return nil }
        let table = open("/proc/locks", O_RDONLY | O_CLOEXEC)
        guard table >= 0 else { return nil }
        defer { close(table) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(table, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        let device = UInt64(info.st_dev)
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~0xfff)
        let minor = (device & 0xff) | ((device >> 12) & ~0xff)
        let file = String(major, radix: 16).leftPadded(2) + ":" + String(minor, radix: 16).leftPadded(2) + ":" + String(UInt64(info.st_ino))
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count >= 6, fields[1] == "FLOCK", fields[5] == file { return Int(fields[4]) }
        }
        return nil
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

import SQLiteKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Optional where Wrapped == Connection {
    /// The connection held here, or a new one to `path` (set up by `prepare`) that is kept here from
    /// now on. A connection dropped after a fault (`nil`) is reopened this way on next use.
    mutating func opened(
        path: String, flags: OpenFlags, options: Connection.Options,
        prepare: (Connection) throws(SQLiteError) -> Void = { _ in }
    ) throws(SQLiteError) -> Connection {
        if let self { return self }
        let db = try Connection(path: path, flags: flags, options: options)
        try prepare(db)
        self = db
        return db
    }
}

func currentUnixTime() -> Int64 { Int64(time(nil)) }

/// Bytes available to this process on the file system holding `path` (UInt64.max when unknown).
func freeBytes(onFileSystemOf path: String) -> UInt64 {
    var info = statvfs()
    guard statvfs(path, &info) == 0 else { return .max }
    return UInt64(info.f_bavail) &* UInt64(info.f_frsize)
}

func createParentDirectory(of path: String) throws(StoreError) {
    guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
    let directory = String(path[..<slash])
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in directory.split(separator: "/") {
        prefix += "/" + component
        if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
            throw .unavailable("cannot create the database directory \(prefix): \(String(cString: strerror(errno)))")
        }
    }
}

/// The canonical absolute path of an existing file (symbolic links and `..` resolved); nil when it
/// cannot be resolved.
func realPath(_ path: String) -> String? {
    guard let resolved = realpath(path, nil) else { return nil }
    defer { free(resolved) }
    return String(cString: resolved)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system steps around a database file: its directory, its copies, making a replacement
/// durable. They live beside the database wrapper so that the stores make no POSIX calls themselves.
public enum DatabaseFiles {
    /// A file-system call failed; the description says which, on what, and why (`strerror`).
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public let description: String
    }

    /// What is at a path, without following a symbolic link there.
    public enum Kind: Equatable, Sendable {
        case missing
        case regularFile
        case directory
        case symbolicLink
        /// A device, a FIFO or a socket (named).
        case other(String)
    }

    /// What is at `path` (`lstat`: a symbolic link is reported as one).
    public static func kind(of path: String) -> Kind {
        var info = stat()
        guard lstat(path, &info) == 0 else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile
        case S_IFDIR: return .directory
        case S_IFLNK: return .symbolicLink
        case S_IFCHR: return .other("a character device")
        case S_IFBLK: return .other("a block device")
        case S_IFIFO: return .other("a named pipe")
        case S_IFSOCK: return .other("a socket")
        default: return .other("not a regular file")
        }
    }

    /// Why this process cannot create files in `directory`; nil when it can.
    public static func cannotCreateFiles(in directory: String) -> String? {
        guard kind(of: directory) == .directory || (realPath(directory).map { kind(of: $0) == .directory } ?? false) else {
            return DatabaseFiles.exists(directory) ? "\(directory) is not a directory" : "the directory \(directory) does not exist"
        }
        guard access(directory, W_OK | X_OK) == 0 else { return "cannot create files in \(directory): \(errnoText())" }
        return nil
    }

    /// The directory part of `path` ("." for a bare name).
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Whether anything exists at `path`.
    public static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The canonical absolute path of an existing file (symbolic links and `..` resolved); nil when
    /// it cannot be resolved.
    public static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// `path` made absolute with its directory resolved (the file itself need not exist): two paths
    /// name the same file when their canonical paths are equal.
    public static func canonicalPath(_ path: String) -> String {
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        let parent = directory(of: path)
        let resolved = realPath(parent) ?? parent
        return (resolved == "/" ? "" : resolved) + "/" + name
    }

    /// The size of the file at `path` in bytes; 0 when it cannot be read.
    public static func size(of path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// Bytes available to this process on the file system holding `path` (UInt64.max when unknown).
    public static func freeBytes(onFileSystemOf path: String) -> UInt64 {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return .max }
        return UInt64(info.f_bavail) &* UInt64(info.f_frsize)
    }

    /// Creates the directories leading to `path` that are missing.
    public static func createParentDirectory(of path: String) throws(Failure) {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
        let directory = String(path[..<slash])
        var prefix = path.hasPrefix("/") ? "" : "."
        for component in directory.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw Failure(description: "cannot create the database directory \(prefix): \(errnoText())")
            }
        }
    }

    /// Removes the file at `path` if there is one.
    public static func remove(_ path: String) { unlink(path) }

    /// Renames `source` over `destination` (atomically, on one file system).
    public static func rename(_ source: String, to destination: String) throws(Failure) {
        guard posixRename(source, destination) == 0 else {
            throw Failure(description: "cannot rename \(source) to \(destination): \(errnoText())")
        }
    }

    /// Flushes the file at `path` to stable storage.
    public static func sync(_ path: String) throws(Failure) {
        try sync(path, flags: O_RDONLY | O_CLOEXEC)
    }

    /// Flushes the directory holding `path`: a rename is durable once it is.
    public static func syncDirectory(of path: String) throws(Failure) {
        try sync(directory(of: path), flags: O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    }

    private static func sync(_ path: String, flags: Int32) throws(Failure) {
        let fd = open(path, flags)
        guard fd >= 0 else { throw Failure(description: "cannot open \(path): \(errnoText())") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw Failure(description: "cannot fsync \(path): \(errnoText())") }
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// The C `rename`, which `DatabaseFiles.rename(_:to:)` would shadow inside the enum.
private func posixRename(_ source: String, _ destination: String) -> Int32 { rename(source, destination) }

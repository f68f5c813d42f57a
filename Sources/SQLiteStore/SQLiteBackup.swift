import SQLiteKit
public import SheetStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What `sheetd backup` wrote, or what `sheetd restore` put in place: a verified sheetd database.
public struct DatabaseCopyReport: Sendable, Equatable {
    /// The file written.
    public var path: String
    /// Its size in bytes.
    public var bytes: Int
    /// Users with a stored state.
    public var users: Int
    /// The highest migration applied.
    public var schemaVersion: Int
}

extension SQLiteSheetStore {
    /// Pages one backup step copies: the source's read snapshot is never given up between steps, so
    /// this bounds only how long one step keeps the I/O busy before the copier yields.
    public static let backupPagesPerStep = 512

    /// Copies the database at `path` into `destination` while a server may be using it (reads only;
    /// the server's lock file is not taken), verifies the copy and moves it into place.
    ///
    /// The copy is one read snapshot of the source: a read transaction held across every step of
    /// SQLite's online backup, so it holds everything committed before the backup started, and
    /// writers (WAL mode) are never blocked by it. The copy is written beside `destination`, checked
    /// (`PRAGMA integrity_check`, a schema this binary knows), switched to a rollback journal (one
    /// self-contained file), fsynced and renamed over `destination`.
    ///
    /// - Throws: `.failure` when the source is missing or not a sheetd database, or the copy fails its
    ///   check; `.unavailable` for I/O problems.
    public static func backup(
        path: String, to destination: String, pagesPerStep: Int = backupPagesPerStep
    ) throws(StoreError) -> DatabaseCopyReport {
        guard DatabaseFiles.exists(path) else { throw .failure("no database at \(path)") }
        let destination = try backupTarget(destination, database: path)
        let partial = destination + ".partial"
        removeDatabaseFiles(partial)
        do throws(StoreError) {
            try mapErrors {
                let source = try Connection(path: path, flags: [.readOnly, .noMutex], options: .init(walJournal: false))
                defer { source.close() }
                // The snapshot: every step reads it, whatever other connections commit meanwhile.
                try source.execute("BEGIN DEFERRED; SELECT count(*) FROM sqlite_schema")
                defer { source.rollbackIfNeeded() }
                let copy = try Connection(path: partial, flags: [.readWrite, .create, .noMutex], options: .init(walJournal: false))
                defer { copy.close() }
                let backup = try Backup(from: source, to: copy)
                while try !backup.step(pages: pagesPerStep) { sched_yield() }
                try backup.finish()
                _ = try copy.pragma("journal_mode = DELETE")
            }
            _ = try verify(path: partial)
            try fileSteps { () throws(DatabaseFiles.Failure) in
                try DatabaseFiles.sync(partial)
                try DatabaseFiles.rename(partial, to: destination)
                try DatabaseFiles.syncDirectory(of: destination)
            }
        } catch {
            removeDatabaseFiles(partial)
            throw error
        }
        return try verify(path: destination)
    }

    /// The file a backup of the database at `path` may be written to: `destination`, or the file its
    /// symbolic link names. Refused, each with its own message: the database itself or one of its own
    /// files (`-wal`, `-shm`, `-journal`, the lock file of earlier versions; a copy renamed over one of
    /// those corrupts the live database), a directory, a device or other special file, a link to
    /// nothing, a directory that does not exist or cannot be written, and a file system without room.
    static func backupTarget(_ destination: String, database path: String) throws(StoreError) -> String {
        guard !destination.isEmpty else { throw .failure("--to needs a file name") }
        var target = destination
        if DatabaseFiles.kind(of: destination) == .symbolicLink {
            guard let resolved = DatabaseFiles.realPath(destination) else {
                throw .failure("\(destination) is a symbolic link to a file that does not exist: name the backup file itself")
            }
            target = resolved
        }
        switch DatabaseFiles.kind(of: target) {
        case .directory: throw .failure("\(destination) is a directory: name the backup file, e.g. \(destination)/sheetd-backup.sqlite")
        case .other(let what): throw .failure("\(destination) is \(what), not a file: a backup is written beside its target and renamed over it")
        case .missing, .regularFile, .symbolicLink: break
        }
        let database = DatabaseFiles.canonicalPath(DatabaseFiles.realPath(path) ?? path)
        let canonical = DatabaseFiles.canonicalPath(target)
        let ownFiles = [
            ("", "the database itself"), ("-wal", "the database's write-ahead log"), ("-shm", "the database's shared-memory index"),
            ("-journal", "the database's rollback journal"), (".sheetd-lock", "the lock file of earlier sheetd versions"),
        ]
        if let (_, what) = ownFiles.first(where: { database + $0.0 == canonical }) {
            throw .failure("\(destination) is \(what): writing a backup there would corrupt the live database; choose another file")
        }
        let directory = DatabaseFiles.directory(of: target)
        if let why = DatabaseFiles.cannotCreateFiles(in: directory) { throw .failure("cannot write the backup: \(why)") }
        let needed = UInt64(DatabaseFiles.size(of: path) + DatabaseFiles.size(of: path + "-wal"))
        let free = DatabaseFiles.freeBytes(onFileSystemOf: directory)
        if free < needed {
            throw .failure("not enough free space for the backup in \(directory): about \(needed) bytes needed, \(free) free")
        }
        return target
    }

    /// Replaces the database at `path` with the verified copy at `source`, refusing while any sheetd
    /// process (or a store of this one) holds the database.
    ///
    /// The source is checked first (integrity, a sheetd database of a schema this binary knows), then
    /// copied beside the database, checked again, fsynced and renamed over it. Before the rename the
    /// old database's WAL is checkpointed into it and its `-wal`/`-shm` removed, so no stale WAL can
    /// ever be applied to the restored file.
    ///
    /// - Throws: `.unavailable` while the database is in use; `.failure` for a source that is not a
    ///   sound sheetd database (nothing is changed then); `.schemaTooNew` for a newer one.
    public static func restore(path: String, from source: String) throws(StoreError) -> DatabaseCopyReport {
        guard DatabaseFiles.exists(source) else { throw .failure("no file at \(source)") }
        if let from = DatabaseFiles.realPath(source), let to = DatabaseFiles.realPath(path), from == to {
            throw .failure("\(source) is the database itself")
        }
        try createParentDirectory(of: path)
        let shared: SnapshotCoordination
        do {
            shared = try SnapshotCoordination.exclusive(file: path)
        } catch {
            let why: String = if case .unavailable(let message) = error { message } else { "\(error)" }
            throw .unavailable("refusing to restore while the database is in use, stop the server first (\(why))")
        }
        defer { withExtendedLifetime(shared) {} }
        _ = try verify(path: source)
        let partial = path + ".restore-partial"
        removeDatabaseFiles(partial)
        do throws(StoreError) {
            try mapErrors {
                let from = try Connection(path: source, flags: [.readOnly, .noMutex], options: .init(walJournal: false))
                defer { from.close() }
                let copy = try Connection(path: partial, flags: [.readWrite, .create, .noMutex], options: .init(walJournal: false))
                defer { copy.close() }
                let backup = try Backup(from: from, to: copy)
                while try !backup.step(pages: backupPagesPerStep) {}
                try backup.finish()
                _ = try copy.pragma("journal_mode = DELETE")
            }
            _ = try verify(path: partial)
            try fileSteps { () throws(DatabaseFiles.Failure) in try DatabaseFiles.sync(partial) }
            settleOldDatabase(path)
            try fileSteps { () throws(DatabaseFiles.Failure) in
                try DatabaseFiles.rename(partial, to: path)
                try DatabaseFiles.syncDirectory(of: path)
            }
        } catch {
            removeDatabaseFiles(partial)
            throw error
        }
        return try verify(path: path)
    }

    /// Checks the sheetd database at `path` without changing it: `PRAGMA integrity_check`, migrations
    /// this binary ships (unchanged), and the figures of the report.
    public static func verify(path: String) throws(StoreError) -> DatabaseCopyReport {
        try mapErrors {
            let db = try Connection(path: path, flags: [.readOnly, .noMutex], options: .init(walJournal: false))
            defer { db.close() }
            let problems = try db.query("PRAGMA integrity_check") { $0.string(at: 0) }
            guard problems == ["ok"] else {
                throw StoreError.failure("\(path) fails PRAGMA integrity_check: \(problems.prefix(3).joined(separator: "; "))")
            }
            let migrator = SQLiteSheetStore.migrations
            let applied = try migrator.appliedRows(SQLiteSession(db))
            guard let version = applied.keys.max() else { throw StoreError.failure("\(path) is not a sheetd database (no schema_migrations)") }
            try migrator.validate(applied)
            var users = 0
            if try db.scalar("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'user_states'") != nil,
                case .integer(let n) = try db.scalar("SELECT count(*) FROM user_states")
            {
                users = Int(n)
            }
            return DatabaseCopyReport(path: path, bytes: DatabaseFiles.size(of: path), users: users, schemaVersion: version)
        }
    }

    /// Folds the old database's WAL into it and removes its `-wal`, `-shm` and any rollback journal,
    /// so that only the file itself is left to be replaced. A database that cannot be opened (corrupt,
    /// the reason for the restore) just loses those files.
    private static func settleOldDatabase(_ path: String) {
        if DatabaseFiles.exists(path), let db = try? Connection(path: path, flags: [.readWrite, .noMutex], options: .init(walJournal: false)) {
            _ = try? db.checkpoint(.truncate)
            db.close()
        }
        for suffix in ["-wal", "-shm", "-journal"] { DatabaseFiles.remove(path + suffix) }
    }

    private static func removeDatabaseFiles(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { DatabaseFiles.remove(path + suffix) }
    }
}

/// File-system steps whose failures are I/O problems of the store.
private func fileSteps(_ body: () throws(DatabaseFiles.Failure) -> Void) throws(StoreError) {
    do {
        try body()
    } catch {
        throw .unavailable(error.description)
    }
}

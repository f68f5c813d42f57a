internal import CSQLite

/// SQLite's online backup (`sqlite3_backup_init/step/finish`): copies the main database of one
/// connection into another's a bounded number of pages at a time.
///
/// Each `step` holds the source's read lock only for that call, unless the source connection is
/// already inside a read transaction: then every step reads that one snapshot, and writers of other
/// connections (WAL mode) go on meanwhile without restarting the copy.
/// > If the source database is modified by an external process or via a database connection other
/// > than the one being used by the backup operation, then the backup will be automatically
/// > restarted by the next call to sqlite3_backup_step().
/// That is why callers that copy a busy database begin a read transaction on `source` first.
///
/// Related SQLite documentation: <https://www.sqlite.org/backup.html>
public final class Backup {
    private var handle: OpaquePointer?
    /// Kept alive (and so open) while the backup runs: SQLite needs both handles until `finish`.
    private let source: Connection
    private let destination: Connection

    /// Starts a backup of `source`'s main database into `destination`'s (which it overwrites).
    /// Nothing else may use `destination` until `finish`.
    public init(from source: Connection, to destination: Connection) throws(SQLiteError) {
        self.source = source
        self.destination = destination
        let destinationHandle = try destination.openHandle()
        let sourceHandle = try source.openHandle()
        guard let made = sqlite3_backup_init(destinationHandle, "main", sourceHandle, "main") else {
            // > If an error occurs within sqlite3_backup_init(D,N,S,M), then NULL is returned and an
            // > error code and error message are stored in the destination database connection D.
            throw makeError(sqlite3_errcode(destinationHandle), destinationHandle, sql: nil)
        }
        handle = made
    }

    deinit { _ = try? finish() }

    /// Copies up to `pages` more pages; true once the whole database has been copied. A busy or
    /// locked source (or destination) copies nothing this time and answers false: call it again.
    public func step(pages: Int) throws(SQLiteError) -> Bool {
        guard let handle else { throw SQLiteError(code: .misuse, message: "the backup is finished", sql: nil) }
        let rc = sqlite3_backup_step(handle, Int32(clamping: max(1, pages)))
        switch rc {
        case SQLITE_DONE: return true
        case SQLITE_OK, SQLITE_BUSY, SQLITE_LOCKED: return false
        default:
            // The backup cannot go on: finish it (that releases its locks) and report the step's error.
            let error = makeError(rc, try? destination.openHandle(), sql: nil)
            _ = try? finish()
            throw error
        }
    }

    /// Releases the backup. Idempotent. Throws the error of a step that failed, if any.
    public func finish() throws(SQLiteError) {
        guard let done = handle else { return }
        handle = nil
        let rc = sqlite3_backup_finish(done)
        try check(rc, try? destination.openHandle(), sql: nil)
        withExtendedLifetime(source) {}
    }
}

@available(*, unavailable)
extension Backup: Sendable {}

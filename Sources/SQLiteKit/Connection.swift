internal import CSQLite

/// How a connection opens its file (`sqlite3_open_v2` flags).
public struct OpenFlags: OptionSet, Sendable {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }
    public static let readOnly = OpenFlags(rawValue: SQLITE_OPEN_READONLY)
    public static let readWrite = OpenFlags(rawValue: SQLITE_OPEN_READWRITE)
    public static let create = OpenFlags(rawValue: SQLITE_OPEN_CREATE)
    /// Multi-thread mode: the connection must be confined to one thread at a time (a per-thread
    /// reader, or a connection behind a lock).
    public static let noMutex = OpenFlags(rawValue: SQLITE_OPEN_NOMUTEX)
    public static let uri = OpenFlags(rawValue: SQLITE_OPEN_URI)
}

/// `PRAGMA synchronous`. It is per connection, so every connection sets it.
public enum SynchronousLevel: String, Sendable, CaseIterable {
    case off = "OFF"
    /// In WAL mode: durable across a process crash; a power loss may lose the last commits.
    case normal = "NORMAL"
    /// In WAL mode: every commit is fsynced, durable across a power loss.
    case full = "FULL"
}

/// How a write transaction starts.
public enum TransactionKind: String, Sendable {
    case deferred = "DEFERRED"
    /// Takes the write lock at BEGIN, so the transaction cannot fail later with SQLITE_BUSY on upgrade.
    case immediate = "IMMEDIATE"
    case exclusive = "EXCLUSIVE"
}

/// One SQLite connection. Not Sendable: confine it to a thread, or put it behind a lock.
///
/// Pragmas are set once, at open (they are per connection): WAL (writers only, it persists in the
/// file), `synchronous`, the busy timeout, `foreign_keys`, and extended result codes.
public final class Connection {
    /// Settings applied when the connection opens.
    public struct Options: Sendable {
        /// Switch the file to WAL (needs write access; readers leave it to the writer).
        public var walJournal: Bool
        public var synchronous: SynchronousLevel
        public var busyTimeoutMilliseconds: Int
        public var foreignKeys: Bool
        public init(
            walJournal: Bool = true, synchronous: SynchronousLevel = .normal, busyTimeoutMilliseconds: Int = 5000,
            foreignKeys: Bool = true
        ) {
            self.walJournal = walJournal; self.synchronous = synchronous
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds; self.foreignKeys = foreignKeys
        }
    }

    private var handle: OpaquePointer?
    public let path: String
    public let flags: OpenFlags
    private var statementCache: [String: Statement] = [:]
    /// The same statements by the address of their SQL text's bytes: hashing an address is much cheaper
    /// than hashing the text, and a cached statement's entry keeps its text (so the address) alive. A
    /// hit is confirmed with `==`, which for the same string storage compares one word.
    private var statementsByAddress: [UInt: (sql: String, statement: Statement)] = [:]
    /// As set at open (`Options.busyTimeoutMilliseconds`); `checkpoint` may lower it for one call.
    private var busyTimeoutMilliseconds = 0
    /// Set by `trackWALSize`: the WAL hook writes the frame count here after each commit.
    private var walSize: WALSize?

    /// Opens `path` and applies `options`. On failure nothing stays open.
    public init(path: String, flags: OpenFlags = [.readWrite, .create], options: Options = Options()) throws(SQLiteError) {
        self.path = path
        self.flags = flags
        var db: OpaquePointer?
        let rc = sqlite3_open_v2(path, &db, flags.rawValue | SQLITE_OPEN_EXRESCODE, nil)
        if rc != SQLITE_OK {
            let error = makeError(rc, db, sql: nil)
            // > Whether or not an error occurs when it is opened, resources associated with the
            // > database connection handle should be released by passing it to sqlite3_close().
            sqlite3_close_v2(db)
            throw SQLiteError(code: error.extendedCode, message: "\(error.message): \(path)", sql: nil)
        }
        handle = db
        do throws(SQLiteError) {
            try check(sqlite3_extended_result_codes(db, 1), db, sql: nil)
            try check(sqlite3_busy_timeout(db, Int32(clamping: options.busyTimeoutMilliseconds)), db, sql: nil)
            busyTimeoutMilliseconds = options.busyTimeoutMilliseconds
            if options.walJournal {
                let mode = try pragmaString("PRAGMA journal_mode = WAL")
                // An in-memory database answers "memory"; a file that cannot become WAL is an error.
                if mode != "wal" && mode != "memory" {
                    throw SQLiteError(code: .error, message: "journal_mode is \(mode), not wal", sql: "PRAGMA journal_mode = WAL")
                }
            }
            try execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
            try execute("PRAGMA foreign_keys = \(options.foreignKeys ? "ON" : "OFF")")
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// Finalizes the cached statements and closes the connection. Idempotent; afterwards every call
    /// throws SQLITE_MISUSE.
    public func close() {
        guard let db = handle else { return }
        statementCache.removeAll()
        statementsByAddress.removeAll()
        handle = nil
        // close_v2 defers the close until statements still alive elsewhere are finalized, so a late
        // Statement deinit never touches freed memory. It returns SQLITE_OK in that case too.
        let rc = sqlite3_close_v2(db)
        assert(rc == SQLITE_OK, "sqlite3_close_v2 failed: \(rc)")
    }

    func openHandle() throws(SQLiteError) -> OpaquePointer { try open() }

    private func open() throws(SQLiteError) -> OpaquePointer {
        guard let handle else { throw SQLiteError(code: .misuse, message: "connection is closed", sql: nil) }
        return handle
    }

    // MARK: - Statements

    /// A new, uncached statement.
    public func prepare(_ sql: String) throws(SQLiteError) -> Statement {
        try Statement(database: open(), sql: sql, persistent: false)
    }

    /// The connection's cached statement for `sql`, prepared on first use, reset and unbound.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> Statement {
        let address = sql.utf8.withContiguousStorageIfAvailable { UInt(bitPattern: $0.baseAddress) }
        if let address, let entry = statementsByAddress[address], entry.sql == sql {
            entry.statement.reset()
            return entry.statement
        }
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try Statement(database: open(), sql: sql, persistent: true)
        statementCache[sql] = statement
        // Small strings live inline (their address is a copy's): only long texts are kept by address.
        if let address, sql.utf8.count > 15 { statementsByAddress[address] = (sql, statement) }
        return statement
    }

    /// How many statements the cache holds.
    public var cachedStatementCount: Int { statementCache.count }

    /// Runs `body` with the cached statement for `sql`, resetting it afterwards so it never holds a
    /// read transaction or lock after use.
    public func withStatement<T>(_ sql: String, _ body: (Statement) throws -> T) throws -> T {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        return try body(statement)
    }

    /// Runs one statement (cached) with `arguments` to completion; returns the number of rows changed.
    @discardableResult
    public func run(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        try statement.run()
        return changes
    }

    /// Runs one or more `;`-separated statements, uncached (scripts, pragmas, migrations).
    public func execute(_ sql: String) throws(SQLiteError) {
        let db = try open()
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) }
            sqlite3_free(message)
            throw SQLiteError(code: ResultCode(rawValue: rc), message: text, sql: sql)
        }
    }

    /// The rows of one query, each mapped by `row`.
    public func query<T>(_ sql: String, _ arguments: [SQLiteValue] = [], row: (Statement) throws -> T) throws -> [T] {
        try withStatement(sql) { statement in
            try statement.bind(arguments)
            var rows: [T] = []
            while try statement.step() { rows.append(try row(statement)) }
            return rows
        }
    }

    /// The first column of the first row, or nil when there is no row.
    public func scalar(_ sql: String, _ arguments: [SQLiteValue] = []) throws(SQLiteError) -> SQLiteValue? {
        let statement = try cachedStatement(sql)
        defer { statement.reset() }
        try statement.bind(arguments)
        return try statement.step() ? statement.value(at: 0) : nil
    }

    private func pragmaString(_ sql: String) throws(SQLiteError) -> String {
        let statement = try prepare(sql)
        guard try statement.step() else { return "" }
        let value = statement.string(at: 0)
        try statement.run()
        return value
    }

    /// The value of a pragma that returns one value, e.g. `pragma("journal_mode")`.
    public func pragma(_ name: String) throws(SQLiteError) -> SQLiteValue? {
        let statement = try prepare("PRAGMA \(name)")
        guard try statement.step() else { return nil }
        let value = statement.value(at: 0)
        try statement.run()
        return value
    }

    // MARK: - State

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    public var changes: Int { handle.map { Int(sqlite3_changes64($0)) } ?? 0 }

    public var lastInsertRowID: Int64 { handle.map { sqlite3_last_insert_rowid($0) } ?? 0 }

    /// True outside a transaction. SQLite may end a transaction by itself after SQLITE_FULL, IOERR,
    /// BUSY or NOMEM; this tells whether one is still open.
    public var isAutocommit: Bool { handle.map { sqlite3_get_autocommit($0) != 0 } ?? true }

    /// The main database's data version (`SQLITE_FCNTL_DATA_VERSION`): it changes with every commit
    /// to the file, by this connection or by any other, in any process. Read inside a transaction
    /// begun `IMMEDIATE`, it accounts for every commit made before the transaction began. Nil when
    /// the connection is closed.
    public var dataVersion: UInt32? {
        guard let handle else { return nil }
        var version: UInt32 = 0
        return sqlite3_file_control(handle, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK ? version : nil
    }

    /// True when the main database was opened read-only (or fell back to read-only because the file
    /// is not writable).
    public var isReadOnly: Bool { handle.map { sqlite3_db_readonly($0, "main") == 1 } ?? true }

    // MARK: - Transactions

    /// Runs `body` in a transaction: committed when it returns, rolled back when it (or COMMIT) throws.
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        try run("BEGIN \(kind.rawValue)")
        let result: T
        do {
            result = try body()
            try run("COMMIT")
        } catch {
            rollbackIfNeeded()
            throw error
        }
        return result
    }

    /// Runs `body` inside a savepoint: released when it returns, rolled back to when it throws
    /// (the enclosing transaction stays open unless SQLite ended it).
    @discardableResult
    public func savepoint<T>(_ name: String = "sp", _ body: () throws -> T) throws -> T {
        try run("SAVEPOINT \(name)")
        do {
            let result = try body()
            try run("RELEASE \(name)")
            return result
        } catch {
            if !isAutocommit {
                // Both can only fail if the transaction is already gone, which the caller sees next.
                _ = try? run("ROLLBACK TO \(name)")
                _ = try? run("RELEASE \(name)")
            }
            throw error
        }
    }

    /// Rolls back the open transaction, if any. Callers that must be sure (after a storage fault)
    /// check `isAutocommit` afterwards and drop the connection if a transaction is somehow still open.
    public func rollbackIfNeeded() {
        guard !isAutocommit else { return }
        // ROLLBACK can only fail when SQLite already rolled back (then autocommit is back on).
        _ = try? run("ROLLBACK")
    }
}

// MARK: - WAL

/// `sqlite3_wal_checkpoint_v2` modes.
public enum CheckpointMode: Sendable {
    /// As much as possible without waiting for readers or writers; never blocks a writer.
    case passive
    /// Everything, waiting (busy handler) for readers of old frames; the next writer restarts the WAL.
    case restart
    /// As `restart`, and the WAL file is truncated to zero bytes.
    case truncate

    var code: Int32 {
        switch self {
        case .passive: SQLITE_CHECKPOINT_PASSIVE
        case .restart: SQLITE_CHECKPOINT_RESTART
        case .truncate: SQLITE_CHECKPOINT_TRUNCATE
        }
    }
}

/// What a checkpoint found and did, in WAL frames (pages).
public struct CheckpointResult: Sendable, Equatable {
    /// Frames in the WAL.
    public var walFrames: Int
    /// Frames copied into the database file so far (all of them: the WAL can restart).
    public var checkpointedFrames: Int
}

final class WALSize {
    var frames = 0
}

/// Runs after every commit on the connection's own thread (`cls` is the connection's `WALSize`).
private let walHook: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
    cls, _, _, frames in
    if let cls { Unmanaged<WALSize>.fromOpaque(cls).takeUnretainedValue().frames = Int(frames) }
    return SQLITE_OK
}

extension Connection {
    /// Takes checkpointing over from SQLite: automatic checkpoints (which run inside the commit that
    /// crosses 1000 frames and stall that writer for the whole copy and fsync) stop, and `walFrames`
    /// tells after each commit how large the WAL has grown, so the owner can checkpoint elsewhere.
    public func trackWALSize() throws(SQLiteError) {
        let db = try openHandle()
        let size = WALSize()
        walSize = size
        // Replaces the hook behind wal_autocheckpoint, which turns automatic checkpoints off.
        _ = sqlite3_wal_hook(db, walHook, Unmanaged.passUnretained(size).toOpaque())
    }

    /// Frames in the WAL after this connection's last commit (0 before any, or untracked).
    public var walFrames: Int { walSize?.frames ?? 0 }

    /// Checkpoints the main database. `busyTimeoutMilliseconds` bounds, for this call only, how long
    /// a `.restart`/`.truncate` waits for readers (and another checkpoint); past it the call throws
    /// `.busy` with the frames copied so far kept.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode, busyTimeoutMilliseconds timeout: Int? = nil) throws(SQLiteError) -> CheckpointResult {
        let db = try openHandle()
        if let timeout { sqlite3_busy_timeout(db, Int32(clamping: timeout)) }
        defer { if timeout != nil { sqlite3_busy_timeout(db, Int32(clamping: busyTimeoutMilliseconds)) } }
        var log: Int32 = 0
        var copied: Int32 = 0
        try check(sqlite3_wal_checkpoint_v2(db, nil, mode.code, &log, &copied), db, sql: "wal_checkpoint")
        return CheckpointResult(walFrames: Int(log), checkpointedFrames: Int(copied))
    }
}

@available(*, unavailable)
extension Connection: Sendable {}

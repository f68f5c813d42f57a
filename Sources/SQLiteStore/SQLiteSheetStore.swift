import Crypto
import SQLiteKit
public import SheetPolicy
public import SheetStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `PRAGMA synchronous` for the store's connections (WAL mode).
public enum SynchronousMode: String, Sendable, CaseIterable {
    /// A commit survives a crash of the process; a power loss may lose the last commits (never corrupts).
    case normal
    /// Every commit is fsynced: it survives a power loss too. Slower writes.
    case full

    /// Parses `normal` / `full` in any case (e.g. `SHEETD_SYNCHRONOUS`).
    public init?(configValue: String) {
        self.init(rawValue: configValue.lowercased())
    }

    var level: SynchronousLevel { self == .full ? .full : .normal }
}

/// The embedded SheetStore: one SQLite file in WAL mode. A façade over two pieces:
/// - `SQLiteGroupCommitWriter`: the single writer connection and the group-commit engine over it (one
///   transaction per batch, completed only after the commit; see `GroupCommitEngine`);
/// - `ReaderPool`: one read-only connection per thread, never waiting for writes.
/// Each user's state is one row (`UserStateSQL`), read in one lookup. The catalog, settings, stats,
/// experiments, sampling and erasure are `SQLSheetStore`'s, over `SQLiteSession`.
public final class SQLiteSheetStore: SQLSheetStore {
    public let path: String
    let writer: SQLiteGroupCommitWriter
    private let readers: ReaderPool
    private let closed = Atomic<Bool>(false)

    private init(path: String, options: Connection.Options, connection: Connection, shared: SnapshotCoordination, retention: StoreRetention) {
        self.path = path
        let readers = ReaderPool(path: path, options: options, shared: shared)
        self.readers = readers
        self.writer = SQLiteGroupCommitWriter(path: path, options: options, connection: connection, readers: readers, retention: retention)
    }

    deinit { close() }

    // MARK: - Opening, migrating

    /// Opens (creating it and its directory if needed) the database at `path`, applies pending
    /// migrations, and returns the store.
    ///
    /// - Throws: `.schemaTooNew`, `.checksumMismatch`, `.unavailable` (cannot open or write), `.failure`.
    public static func open(
        path: String, synchronous: SynchronousMode = .normal, busyTimeoutMilliseconds: Int = 5000, retention: StoreRetention = .default
    ) throws(StoreError) -> SQLiteSheetStore {
        try createParentDirectory(of: path)
        // Before anything touches the file: another process serving it refuses this one.
        let shared = try SnapshotCoordination.of(file: path)
        let options = Connection.Options(
            walJournal: true, synchronous: synchronous.level, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let connection = try mapErrors { try Connection(path: path, flags: [.readWrite, .create, .noMutex], options: options) }
        try migrations.migrate(connection)
        shared.recentStates.forgetAll()  // a migration may have rewritten rows another store of this process holds
        try mapErrors { try connection.trackWALSize() }
        let store = SQLiteSheetStore(path: path, options: options, connection: connection, shared: shared, retention: retention)
        // A prune step at start and then every `purgeEvery` commits. A read-only database still
        // opens (reads keep working); its writes report `unavailable`.
        try? store.prune(now: currentUnixTime())
        return store
    }

    /// The migration listing of the database at `path` (`sheetd migrate --status`); a missing file
    /// lists every migration as pending. Never writes.
    public static func migrationStatus(path: String) throws(StoreError) -> [MigrationStatus] {
        guard DatabaseFiles.exists(path) else { return migrations.statusOfEmptyDatabase() }
        let connection = try mapErrors {
            try Connection(path: path, flags: [.readOnly, .noMutex], options: .init(walJournal: false))
        }
        defer { connection.close() }
        return try mapErrors { try migrations.status(SQLiteSession(connection)) }
    }

    /// Applies the pending migrations to the database at `path` (creating it); returns the versions applied.
    @discardableResult
    public static func migrate(
        path: String, synchronous: SynchronousMode = .normal, busyTimeoutMilliseconds: Int = 5000
    ) throws(StoreError) -> [Int] {
        try createParentDirectory(of: path)
        // Before anything touches the file: another process serving it refuses this one.
        let shared = try SnapshotCoordination.of(file: path)
        let options = Connection.Options(
            walJournal: true, synchronous: synchronous.level, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let connection = try mapErrors { try Connection(path: path, flags: [.readWrite, .create, .noMutex], options: options) }
        defer {
            _ = try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
            withExtendedLifetime(shared) {}  // the lock is held until the connection is closed
        }
        defer { shared.recentStates.forgetAll() }
        return try migrations.migrate(connection)
    }

    /// The migrations compiled into this binary (`migrations/*.sql`).
    static let migrations = MigrationRunner(shippedMigrations)

    // MARK: - Users

    public func userState(userId: String) throws(StoreError) -> UserState {
        guard !closed.load(ordering: .acquiring) else { throw .unavailable("the store is closed") }
        // The hot read (every decision not cached): a state committed lately is in memory (most
        // decisions not cached follow the user's own event); else this thread's kept snapshot.
        if let bytes = readers.recentStates.bytes(of: userId), let state = try? UserStateCodec.decode(bytes) { return state }
        return try storedUserState(userId: userId)
    }

    /// The user's state as the database has it, in this thread's kept snapshot when still current.
    func storedUserState(userId: String) throws(StoreError) -> UserState {
        try readSnapshot { db in try UserStateSQL.load(userId: userId, db) }
    }

    public func update(
        userId: String, eventId: String?, _ body: (inout UserState, inout [SheetActivity]) throws -> [UInt8]
    ) throws -> EventResult {
        try writer.engine.update(userId: userId, eventId: eventId, body)
    }

    public func submit(
        userId: String, eventId: String?, _ body: @escaping @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8],
        completion: @escaping @Sendable (Result<EventResult, any Error>) -> Void
    ) {
        writer.enqueue(GroupCommitJob(userId: userId, eventId: eventId, body: body, completion: completion))
    }

    // MARK: - Maintenance

    /// One prune step of the retention (see `StoreRetention`), as the writer runs every few hundred commits.
    func prune(now: Int64) throws {
        try writer.engine.prune(now: now)
    }

    // MARK: - Operations

    /// Reads through this thread's connection, then lets the writer probe itself after a fault.
    public func ping() throws(StoreError) {
        try read { db in _ = try db.scalar("SELECT count(*) FROM schema_migrations") }
        try writer.probe()
    }

    /// Read transactions the decision reads began (tests: kept snapshots are reused).
    var readSnapshotsBegun: Int { readers.readSnapshotsBegun }
    /// The writer's batch reads answered from memory so far (tests).
    var writerRowsReadFromMemory: Int { writer.rowsReadFromMemory }

    /// How many updates committed in how many transactions so far.
    public var writeStatistics: WriteStatistics { writer.writeStatistics }

    /// Checkpoints the WAL (TRUNCATE) and closes every connection, readers first so that closing the
    /// writer (the last connection) removes the `-wal` and `-shm` files. Idempotent.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        writer.stopAccepting()
        readers.close()
        writer.closeConnection()
    }

    // MARK: - Plumbing

    func read<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        guard !closed.load(ordering: .acquiring) else { throw .unavailable("the store is closed") }
        return try readers.read(body)
    }

    private func readSnapshot<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        guard !closed.load(ordering: .acquiring) else { throw .unavailable("the store is closed") }
        return try readers.readSnapshot(body)
    }

    @discardableResult
    func write<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        guard !closed.load(ordering: .acquiring) else { throw .unavailable("the store is closed") }
        return try writer.write(body)
    }

    // MARK: - SQLSheetStore

    public func withReadSession<T>(_ body: (SQLiteSession) throws -> T) throws(StoreError) -> T {
        try read { db in try body(SQLiteSession(db)) }
    }

    public func withWriteSession<T>(_ body: (SQLiteSession) throws -> T) throws(StoreError) -> T {
        try write { db in try body(SQLiteSession(db)) }
    }

    /// Nothing: the writer connection's `BEGIN IMMEDIATE` runs catalog writes one at a time already.
    public func catalogWriteBegins(_ session: SQLiteSession) throws {}

    /// Nothing: one process serves the file (`SnapshotCoordination`), so there are no replicas to tell.
    public func catalogChanged(_ session: SQLiteSession) throws {}

    public func userErased(_ userId: String, _ session: SQLiteSession) throws {}
}

extension MigrationRunner {
    /// Applies the pending migrations on `db`; SQLite's errors turned into store errors.
    @discardableResult
    func migrate(_ db: Connection) throws(StoreError) -> [Int] {
        try mapErrors { try migrate(SQLiteSession(db)) }
    }
}

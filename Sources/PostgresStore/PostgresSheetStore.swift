import PostgresKit
public import SheetPolicy
public import SheetStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The SheetStore on PostgreSQL, for several stateless replicas sharing one database.
///
/// Reads go through a pool of connections (`readerConnections`). Updates are group-committed by a
/// few writer connections, each with its `GroupCommitEngine` (`PostgresWriterBackend`); a user's
/// updates always go to the same writer, so they keep their order within a replica, and the lock
/// on the user's `user_states` row orders them across replicas. When the database is down every call fails with `StoreError.unavailable`; connections
/// are made again on the next call, so the store recovers as soon as the database answers.
/// The catalog, settings, stats, experiments, sampling and erasure are `SQLSheetStore`'s, over `PostgresSession`.
public final class PostgresSheetStore: SQLSheetStore {
    let url: String
    /// Every session of the store (readers, writers, listener) is made here: one backoff, one count.
    let connector: PostgresConnector
    private let readers: PostgresPool
    private let writers: [GroupCommitEngine<PostgresWriterBackend>]
    private let statistics = WriteCounters()
    /// What the writers run with the catalog version of each batch (`checkCatalogVersionPerBatch`).
    private let catalogCheck = BatchCatalogVersionCheck()
    private let closed = Atomic<Bool>(false)
    /// The NOTIFY channel and this store's instance id (see `ChangeNotifier`).
    let notifier: ChangeNotifier
    /// The LISTEN session, once `listen` started it.
    private let listener = Mutex<PostgresListener?>(nil)

    private init(url: String, readerConnections: Int, writerConnections: Int, schema: String, retention: StoreRetention) {
        self.url = url
        let connector = PostgresConnector(url: url)
        self.connector = connector
        let notifier = ChangeNotifier(schema: schema)
        self.notifier = notifier
        readers = PostgresPool(connector: connector, capacity: readerConnections)
        writers = (0..<max(1, writerConnections)).map { [statistics, catalogCheck] _ in
            GroupCommitEngine(
                backend: PostgresWriterBackend(connector: connector, notifier: notifier, catalogCheck: catalogCheck),
                retention: retention, counters: statistics)
        }
    }

    deinit { close() }

    /// True when `database` (a `--db` value) selects this backend: `postgres://` or `postgresql://`.
    public static func isPostgresURL(_ database: String) -> Bool { PostgresURL.isPostgres(database) }

    /// `url` without its password, for logs and messages.
    public static func redacted(_ url: String) -> String { PostgresURL.redacted(url) }

    // MARK: - Opening, migrating

    /// Connects, applies pending migrations (once across replicas), and returns the store.
    ///
    /// - Throws: `.schemaTooNew`, `.checksumMismatch`, `.unavailable` (cannot connect), `.failure`.
    public static func open(
        url: String, readerConnections: Int, writerConnections: Int = 2, retention: StoreRetention = .default
    ) throws(StoreError) -> PostgresSheetStore {
        let schema = try mapPostgresErrors { () throws -> String in
            let db = try PostgresConnection(url: url)
            defer { db.close() }
            try migrations.migrate(db)
            return try db.scalar("SELECT current_schema()") ?? "public"
        }
        let store = PostgresSheetStore(
            url: url, readerConnections: readerConnections, writerConnections: writerConnections, schema: schema, retention: retention)
        try? store.writers[0].prune(now: currentUnixTime())
        return store
    }

    /// Applies the pending migrations; returns the versions applied now.
    @discardableResult
    public static func migrate(url: String) throws(StoreError) -> [Int] {
        let db = try mapPostgresErrors { try PostgresConnection(url: url) }
        defer { db.close() }
        return try migrations.migrate(db)
    }

    /// The migration listing (`sheetd migrate --status`). Never writes.
    public static func migrationStatus(url: String) throws(StoreError) -> [MigrationStatus] {
        let db = try mapPostgresErrors { try PostgresConnection(url: url) }
        defer { db.close() }
        return try mapPostgresErrors { try migrations.status(PostgresSession(db)) }
    }

    /// The migrations compiled into this binary (`migrations/postgres/*.sql`).
    static let migrations = MigrationRunner(shippedPostgresMigrations)

    // MARK: - Users

    public func userState(userId: String) throws(StoreError) -> UserState {
        try read { db in try PostgresUserStateSQL.load(userId: userId, db) }
    }

    public func update(
        userId: String, eventId: String?, _ body: (inout UserState, inout [SheetActivity]) throws -> [UInt8]
    ) throws -> EventResult {
        guard !closed.load(ordering: .acquiring) else { throw StoreError.unavailable("the store is closed") }
        return try writer(for: userId).update(userId: userId, eventId: eventId, body)
    }

    public func submit(
        userId: String, eventId: String?, _ body: @escaping @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8],
        completion: @escaping @Sendable (Result<EventResult, any Error>) -> Void
    ) {
        guard !closed.load(ordering: .acquiring) else { return completion(.failure(StoreError.unavailable("the store is closed"))) }
        writer(for: userId).enqueue(GroupCommitJob(userId: userId, eventId: eventId, body: body, completion: completion))
    }

    /// See `SharedSheetStore.checkCatalogVersionPerBatch`.
    public func checkCatalogVersionPerBatch(_ check: @escaping @Sendable (Int64) -> Void) {
        catalogCheck.set(check)
    }

    private func writer(for userId: String) -> GroupCommitEngine<PostgresWriterBackend> {
        writers[Self.writerIndex(for: userId, count: writers.count)]
    }

    /// FNV-1a of the user id: the same writer for a user for the life of the process.
    static func writerIndex(for userId: String, count: Int) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in userId.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return Int(hash % UInt64(count))
    }

    // MARK: - Operations

    /// A round trip through a pooled connection (connecting again if the last one was lost) that
    /// proves the server takes writes: a session whose server became read-only (a fenced or demoted
    /// primary) is dropped and the ping fails, so /readyz says not ready until a writable primary answers.
    public func ping() throws(StoreError) {
        try read { db in
            let rows = try db.query("SELECT max(version), current_setting('transaction_read_only') FROM schema_migrations")
            if rows.first?.string(at: 1) == "on" || db.serverIsReadOnly {
                db.closeAsReadOnly()
                throw PostgresError(sqlstate: "25006", message: "the database server is read-only (no writable primary)", connectionLost: true)
            }
        }
    }

    public var connectionStatistics: ConnectionStatistics? {
        let s = connector.statistics
        return ConnectionStatistics(
            connects: s.connects, failures: s.failures, readOnlySessions: s.readOnlySessions, backoffMilliseconds: s.backoffMilliseconds)
    }

    public var writeStatistics: WriteStatistics { statistics.current }

    /// Lets the writers finish what is queued, then closes every connection. Idempotent.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        listener.withLock { $0 }?.stop()
        for writer in writers {
            writer.close()
            writer.backend.closeConnection()
        }
        readers.close()
    }

    /// For tests: one prune step, as the writers run every few hundred commits.
    func prune(now: Int64) throws {
        try writers[0].prune(now: now)
    }

    // MARK: - Plumbing

    /// Keeps `new` as the store's listener unless one was started already (or the store is closed).
    func installListener(_ new: PostgresListener) -> Bool {
        listener.withLock { current in
            guard current == nil, !closed.load(ordering: .acquiring) else { return false }
            current = new
            return true
        }
    }

    var currentListener: PostgresListener? { listener.withLock { $0 } }

    /// Runs `body` on a pooled connection (reads, and the writes outside the update path).
    func read<T>(_ body: (PostgresConnection) throws -> T) throws(StoreError) -> T {
        guard !closed.load(ordering: .acquiring) else { throw .unavailable("the store is closed") }
        return try mapPostgresErrors { try readers.withConnection(body) }
    }

    static func transaction<T>(_ db: PostgresConnection, _ body: () throws -> T) throws -> T {
        try PostgresSession(db).transaction(body)
    }

    // MARK: - SQLSheetStore

    public func withReadSession<T>(_ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
        try read { db in try body(PostgresSession(db)) }
    }

    public func withWriteSession<T>(_ body: (PostgresSession) throws -> T) throws(StoreError) -> T {
        try read { db in try body(PostgresSession(db)) }
    }

    /// The catalog writes of every replica one at a time (a transaction-level advisory lock, "sheetdc"
    /// in ASCII), so that each reads what the one before committed.
    public func catalogWriteBegins(_ session: PostgresSession) throws {
        try session.execute("SELECT pg_advisory_xact_lock(\(0x73_6865_6574_6463))", [])
    }

    /// Every catalog write bumps the catalog version and notifies the replicas in its own transaction.
    public func catalogChanged(_ session: PostgresSession) throws {
        try notifier.catalogChanged(session.db)
    }

    public func userErased(_ userId: String, _ session: PostgresSession) throws {
        try notifier.notify(notifier.userPayloads([userId]), session.db)
    }
}

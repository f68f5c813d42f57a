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
public final class PostgresSheetStore: SheetStore {
    let url: String
    /// Every session of the store (readers, writers, listener) is made here: one backoff, one count.
    let connector: PostgresConnector
    private let readers: PostgresPool
    private let writers: [GroupCommitEngine<PostgresWriterBackend>]
    private let statistics = WriteCounters()
    /// What the writers run with the catalog version of each batch (`checkCatalogVersionPerBatch`).
    private let catalogCheck = CatalogCheck()
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
            try PostgresMigrator().migrate(db)
            return try db.scalar("SELECT current_schema()") ?? "public"
        }
        let store = PostgresSheetStore(
            url: url, readerConnections: readerConnections, writerConnections: writerConnections, schema: schema, retention: retention)
        try? store.writers[0].prune(now: currentUnixSeconds())
        return store
    }

    /// Applies the pending migrations; returns the versions applied now.
    @discardableResult
    public static func migrate(url: String) throws(StoreError) -> [Int] {
        let db = try mapPostgresErrors { try PostgresConnection(url: url) }
        defer { db.close() }
        return try PostgresMigrator().migrate(db)
    }

    /// The migration listing (`sheetd migrate --status`). Never writes.
    public static func migrationStatus(url: String) throws(StoreError) -> [MigrationStatus] {
        let db = try mapPostgresErrors { try PostgresConnection(url: url) }
        defer { db.close() }
        return try PostgresMigrator().status(db)
    }

    // MARK: - Catalog

    public func catalog() throws(StoreError) -> [StoredSheet] {
        try read { db in
            try db.query("SELECT id, definition FROM sheets ORDER BY id COLLATE \"C\"").map { row in
                StoredSheet(id: row.string(at: 0), json: row.string(at: 1))
            }
        }
    }

    // Every catalog write bumps the catalog version and notifies the replicas in its own transaction.

    public func putSheet(_ sheet: StoredSheet, record: CatalogWriteRecord) throws(StoreError) -> Bool {
        try catalogWrite(record, touching: .sheets([sheet.id])) { db in try Self.upsertSheet(sheet, db) }
    }

    public func putSheets(_ sheets: [StoredSheet], record: CatalogWriteRecord) throws(StoreError) {
        try catalogWrite(record, touching: .sheets(sheets.map(\.id))) { db in
            var changed = false
            for sheet in sheets where try Self.upsertSheet(sheet, db).changed { changed = true }
            return ((), changed)
        }
    }

    /// Whether the row was created (`xmax = 0` tells an insert from an update), and whether it
    /// changed at all (an identical definition is no change: the update's WHERE skips it).
    private static func upsertSheet(_ sheet: StoredSheet, _ db: PostgresConnection) throws -> (created: Bool, changed: Bool) {
        let rows = try db.query(
            """
            INSERT INTO sheets (id, definition) VALUES ($1, $2)
            ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, updated_at = now()
            WHERE sheets.definition IS DISTINCT FROM excluded.definition
            RETURNING xmax = 0
            """, [.text(sheet.id), .text(sheet.json)])
        return (rows.first?.string(at: 0) == "t", !rows.isEmpty)
    }

    public func deleteSheet(id: String, record: CatalogWriteRecord) throws(StoreError) -> Bool {
        try catalogWrite(record, touching: .sheets([id])) { db in
            let existed = try db.query("DELETE FROM sheets WHERE id = $1", [.text(id)]).affectedRows > 0
            return (existed, existed)
        }
    }

    public func adoptExperimentIdentities(_ identities: [ExperimentIdentity]) throws(StoreError) {
        guard !identities.isEmpty else { return }
        try read { db in try Self.transaction(db) { try ExperimentIdentitySQL.adopt(identities, PostgresSession(db)) } }
    }

    /// One catalog write in one transaction: the experiments' identities checked and recorded, the
    /// change, and, when it changed anything, the catalog version bumped (replicas notified) and its
    /// revision appended.
    func catalogWrite<T>(
        _ record: CatalogWriteRecord, touching touched: CatalogHistorySQL.Touched, _ change: (PostgresConnection) throws -> (T, changed: Bool)
    ) throws(StoreError) -> T {
        try read { db in
            try Self.transaction(db) {
                try ExperimentIdentitySQL.enforce(record.experiments, PostgresSession(db))
                let (result, changed) = try change(db)
                if changed {
                    try notifier.catalogChanged(db)
                    _ = try CatalogHistorySQL.append(
                        author: record.author, restoredFrom: nil, touched: touched, budget: record.budget, PostgresSession(db))
                }
                return result
            }
        }
    }

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

    public func deleteUser(userId: String) throws(StoreError) {
        // The event ids a part at a time, each part its own transaction (see `SheetStore.deleteUser`).
        let part = StoreRetention.eraseBatch
        while try read({ db in try db.query(PostgresSQL.eraseSomeEvents, [.text(userId), .int(Int64(part))]).affectedRows }) >= part {}
        try read { db in
            try Self.transaction(db) {
                // The row first: its lock waits for a writer holding the user, and a replica that
                // cached this user sees the version change (the row is gone: version 0).
                let rows = try db.query("DELETE FROM user_states WHERE user_id = $1 RETURNING state", [.text(userId)])
                var rollups = RollupDeltas()
                if let row = rows.first { rollups.erase(try PostgresUserStateSQL.state(row, at: 0)) }
                if let statement = PostgresBatchSQL.rollupsStatement(rollups) { try db.query(statement.sql, statement.parameters) }
                try db.query("DELETE FROM processed_events WHERE user_id = $1", [.text(userId)])
                try db.query(ExperimentSQL.erase, [.text(userId)])
                try notifier.notify(notifier.userPayloads([userId]), db)
            }
        }
    }

    // MARK: - Settings and stats

    public func settings() throws(StoreError) -> CampaignSettings {
        try read { db in try Self.storedSettings(db) }
    }

    private static func storedSettings(_ db: PostgresConnection) throws -> CampaignSettings {
        guard let row = try db.query("SELECT global_cap_max, global_cap_period_seconds, min_interval_seconds FROM settings WHERE id = 1").first
        else { return .off }
        return CampaignSettings(
            globalCap: row.optionalInt(at: 0).flatMap { max in row.optionalInt(at: 1).map { FrequencyCap(max: max, periodSeconds: $0) } },
            minIntervalSeconds: row.optionalInt(at: 2))
    }

    public func experimentCounts(experimentId: String) throws(StoreError) -> ExperimentCounts {
        try read { db in
            var counts = ExperimentCounts()
            for row in try db.query(ExperimentSQL.counts, [.text(experimentId)]) {
                counts.arms[row.string(at: 0)] = ExperimentArmCounts(
                    exposedUsers: row.int(at: 1), impressions: row.int(at: 2), convertedUsers: row.int(at: 3), conversions: row.int(at: 4))
            }
            if let row = try db.query(ExperimentSQL.unattributedCount, [.text(experimentId)]).first { counts.unattributed = row.int(at: 0) }
            return counts
        }
    }

    /// Like a catalog write: bumps the catalog version and notifies the replicas in its transaction
    /// (the settings travel with the catalog snapshot).
    public func putSettings(_ settings: CampaignSettings, record: CatalogWriteRecord) throws(StoreError) {
        try catalogWrite(record, touching: .sheets([])) { db in
            guard try Self.storedSettings(db) != settings else { return ((), false) }
            _ = try db.query(
                """
                INSERT INTO settings (id, global_cap_max, global_cap_period_seconds, min_interval_seconds) VALUES (1, $1, $2, $3)
                ON CONFLICT (id) DO UPDATE SET global_cap_max = excluded.global_cap_max,
                    global_cap_period_seconds = excluded.global_cap_period_seconds,
                    min_interval_seconds = excluded.min_interval_seconds
                """,
                [
                    settings.globalCap.map { .int(Int64($0.max)) } ?? .null,
                    settings.globalCap.map { .int(Int64($0.periodSeconds)) } ?? .null,
                    settings.minIntervalSeconds.map { .int(Int64($0)) } ?? .null,
                ])
            return ((), true)
        }
    }

    public func sheetStats(sheetId: String, since: Timestamp?) throws(StoreError) -> SheetStats {
        try read { db in
            let row = try db.query(PostgresSQL.rollupStats, [.text(sheetId), .int(RollupSQL.firstBucket(since: since))])[0]
            return RollupSQL.stats(from: RollupCounters.columns.indices.map { Int64(row.int(at: $0)) }, since: since)
        }
    }

    public func sheetStatsSeries(sheetId: String, range: RollupRange) throws(StoreError) -> [SheetStatsBucket] {
        try read { db in
            let rows = try db.query(PostgresSQL.rollupSeries, [.text(sheetId)] + RollupSQL.seriesArguments(range).map { .int($0) }).map { row in
                (bucket: Int64(row.int(at: 0)), values: RollupCounters.columns.indices.map { Int64(row.int(at: $0 + 1)) })
            }
            return RollupSQL.series(from: rows, range: range)
        }
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

    public func sampleUsers(from: String?, limit: Int) throws(StoreError) -> [(userId: String, state: UserState)] {
        guard limit > 0 else { return [] }
        // Every stored user has a `user_states` row (an erase removes it): its primary key's order
        // (the column's collation; byte order on a C-collated database, as on SQLite) keeps both
        // scans on the index.
        return try read { db in
            var from = from ?? ""
            if from.isEmpty, let users = try db.scalar("SELECT count(*) FROM user_states").flatMap({ Int64($0) }), users > 0 {
                from =
                    try db.scalar(
                        "SELECT user_id FROM user_states ORDER BY user_id OFFSET $1::bigint LIMIT 1", [.int(Int64.random(in: 0..<users))]) ?? ""
            }
            let rows = try db.query(
                """
                (SELECT user_id, state FROM user_states WHERE user_id >= $1 ORDER BY user_id LIMIT $2::int)
                UNION ALL
                (SELECT user_id, state FROM user_states WHERE user_id < $1 ORDER BY user_id LIMIT $2::int)
                """, [.text(from), .int(Int64(limit))])
            return try rows.prefix(limit).map { row in (row.string(at: 0), try PostgresUserStateSQL.state(row, at: 1)) }
        }
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
        try db.execute("BEGIN")
        do {
            let result = try body()
            try db.execute("COMMIT")
            return result
        } catch {
            db.rollbackIfNeeded()
            throw error
        }
    }
}

func currentUnixSeconds() -> Int64 { Int64(time(nil)) }

/// A PostgreSQL connection as the shared catalog SQL sees it.
struct PostgresSession: SQLSession {
    let db: PostgresConnection
    init(_ db: PostgresConnection) { self.db = db }

    func rows(_ sql: String, _ arguments: [ExperimentSQL.Write.Argument]) throws -> [[String?]] {
        let values: [PostgresValue] = arguments.map {
            switch $0 {
            case .text(let text): .text(text)
            case .integer(let n): .int(n)
            }
        }
        return try db.query(sql, values).map(\.values)
    }
}

import SQLiteKit
public import SheetPolicy
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
/// - `GroupCommitWriter`: the single writer connection and the group-commit engine over it (one
///   transaction per batch, completed only after the commit; see `GroupCommitEngine`);
/// - `ReaderPool`: one read-only connection per thread, never waiting for writes.
/// Each user's state is one row (`UserStateSQL`), read in one lookup.
public final class SQLiteSheetStore: SheetStore {
    public let path: String
    let writer: GroupCommitWriter
    private let readers: ReaderPool
    private let closed = Atomic<Bool>(false)

    private init(path: String, options: Connection.Options, connection: Connection, shared: SnapshotCoordination, retention: StoreRetention) {
        self.path = path
        let readers = ReaderPool(path: path, options: options, shared: shared)
        self.readers = readers
        self.writer = GroupCommitWriter(path: path, options: options, connection: connection, readers: readers, retention: retention)
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
        try Migrator().migrate(connection)
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
        guard DatabaseFiles.exists(path) else { return try Migrator().statusOfEmptyDatabase() }
        let connection = try mapErrors {
            try Connection(path: path, flags: [.readOnly, .noMutex], options: .init(walJournal: false))
        }
        defer { connection.close() }
        return try Migrator().status(connection)
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
        return try Migrator().migrate(connection)
    }

    // MARK: - Catalog

    public func catalog() throws(StoreError) -> [StoredSheet] {
        try read { db in
            try db.query("SELECT id, definition FROM sheets ORDER BY id") { row in
                StoredSheet(id: row.string(at: 0), json: row.string(at: 1))
            }
        }
    }

    public func putSheet(_ sheet: StoredSheet, record: CatalogWriteRecord) throws(StoreError) -> Bool {
        try catalogWrite(record, touching: .sheets([sheet.id])) { db in
            let (created, changed) = try Self.upsertSheet(sheet, db)
            return (created, changed)
        }
    }

    public func putSheets(_ sheets: [StoredSheet], record: CatalogWriteRecord) throws(StoreError) {
        try catalogWrite(record, touching: .sheets(sheets.map(\.id))) { db in
            var changed = false
            for sheet in sheets where try Self.upsertSheet(sheet, db).changed { changed = true }
            return ((), changed)
        }
    }

    /// Whether the row was created, and whether it changed at all (an identical definition is no change).
    private static func upsertSheet(_ sheet: StoredSheet, _ db: Connection) throws -> (created: Bool, changed: Bool) {
        let before = try db.scalar("SELECT definition FROM sheets WHERE id = ?1", [.text(sheet.id)])
        guard before != .text(sheet.json) else { return (false, false) }
        try db.run(
            """
            INSERT INTO sheets (id, definition, created_at, updated_at)
            VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
            ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
            """, [.text(sheet.id), .text(sheet.json)])
        return (before == nil, true)
    }

    public func deleteSheet(id: String, record: CatalogWriteRecord) throws(StoreError) -> Bool {
        try catalogWrite(record, touching: .sheets([id])) { db in
            let existed = try db.run("DELETE FROM sheets WHERE id = ?1", [.text(id)]) > 0
            return (existed, existed)
        }
    }

    public func adoptExperimentIdentities(_ identities: [ExperimentIdentity]) throws(StoreError) {
        guard !identities.isEmpty else { return }
        try write { db in try db.transaction(.immediate) { try ExperimentIdentitySQL.adopt(identities, SQLiteSession(db)) } }
    }

    /// One catalog write in one transaction: the experiments' identities checked and recorded, the
    /// change, and its revision when it changed anything.
    func catalogWrite<T>(
        _ record: CatalogWriteRecord, touching touched: CatalogHistorySQL.Touched, _ change: @escaping (Connection) throws -> (T, changed: Bool)
    ) throws(StoreError) -> T {
        try write { db in
            try db.transaction(.immediate) {
                try ExperimentIdentitySQL.enforce(record.experiments, SQLiteSession(db))
                let (result, changed) = try change(db)
                if changed {
                    _ = try CatalogHistorySQL.append(
                        author: record.author, restoredFrom: nil, touched: touched, budget: record.budget, SQLiteSession(db))
                }
                return result
            }
        }
    }

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

    public func deleteUser(userId: String) throws(StoreError) {
        // The event ids a part at a time, each part its own transaction, so that the writer takes
        // other users' batches in between; then the state and the rest in one.
        let part = StoreRetention.eraseBatch
        while try write({ db in
            try db.transaction(.immediate) { try db.run(ProcessedEventSQL.eraseSome, [.text(userId), .integer(Int64(part))]) }
        }) >= part {}
        try write { db in
            try db.transaction(.immediate) { try UserStateSQL.erase(userId: userId, db) }
        }
    }

    // MARK: - Settings and stats

    public func settings() throws(StoreError) -> CampaignSettings {
        try read { db in try Self.storedSettings(db) }
    }

    private static func storedSettings(_ db: Connection) throws -> CampaignSettings {
        try db.query("SELECT global_cap_max, global_cap_period_seconds, min_interval_seconds FROM settings WHERE id = 1") { row in
            CampaignSettings(
                globalCap: row.isNull(at: 0) || row.isNull(at: 1)
                    ? nil : FrequencyCap(max: Int(row.int64(at: 0)), periodSeconds: Int(row.int64(at: 1))),
                minIntervalSeconds: row.isNull(at: 2) ? nil : Int(row.int64(at: 2)))
        }.first ?? .off
    }

    public func putSettings(_ settings: CampaignSettings, record: CatalogWriteRecord) throws(StoreError) {
        try catalogWrite(record, touching: .sheets([])) { db in
            guard try Self.storedSettings(db) != settings else { return ((), false) }
            try db.run(
                """
                INSERT INTO settings (id, global_cap_max, global_cap_period_seconds, min_interval_seconds) VALUES (1, ?1, ?2, ?3)
                ON CONFLICT (id) DO UPDATE SET global_cap_max = excluded.global_cap_max,
                    global_cap_period_seconds = excluded.global_cap_period_seconds,
                    min_interval_seconds = excluded.min_interval_seconds
                """,
                [
                    settings.globalCap.map { .integer(Int64($0.max)) } ?? .null,
                    settings.globalCap.map { .integer(Int64($0.periodSeconds)) } ?? .null,
                    settings.minIntervalSeconds.map { .integer(Int64($0)) } ?? .null,
                ])
            return ((), true)
        }
    }

    public func sheetStats(sheetId: String, since: Timestamp?) throws(StoreError) -> SheetStats {
        try read { db in
            let values = try db.query(RollupSQL.stats, [.text(sheetId), .integer(RollupSQL.firstBucket(since: since))]) { row in
                RollupCounters.columns.indices.map { row.int64(at: $0) }
            }
            return RollupSQL.stats(from: values[0], since: since)
        }
    }

    public func sheetStatsSeries(sheetId: String, range: RollupRange) throws(StoreError) -> [SheetStatsBucket] {
        try read { db in
            let rows = try db.query(RollupSQL.series, [.text(sheetId)] + RollupSQL.seriesArguments(range).map { .integer($0) }) { row in
                (bucket: row.int64(at: 0), values: RollupCounters.columns.indices.map { row.int64(at: $0 + 1) })
            }
            return RollupSQL.series(from: rows, range: range)
        }
    }

    public func experimentCounts(experimentId: String) throws(StoreError) -> ExperimentCounts {
        try read { db in
            var counts = ExperimentCounts()
            for (arm, row) in try db.query(
                ExperimentSQL.sqlite(ExperimentSQL.counts), [.text(experimentId)],
                row: { row in
                    (row.string(at: 0), (0..<4).map { Int(row.int64(at: $0 + 1)) })
                })
            {
                counts.arms[arm] = ExperimentArmCounts(exposedUsers: row[0], impressions: row[1], convertedUsers: row[2], conversions: row[3])
            }
            if case .integer(let n)? = try db.scalar(ExperimentSQL.sqlite(ExperimentSQL.unattributedCount), [.text(experimentId)]) {
                counts.unattributed = Int(n)
            }
            return counts
        }
    }

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

    public func sampleUsers(from: String?, limit: Int) throws(StoreError) -> [(userId: String, state: UserState)] {
        guard limit > 0 else { return [] }
        // Two range scans of the primary key: beyond picking the start, the cost follows `limit`.
        return try read { db in
            var from = from ?? ""
            if from.isEmpty, case .integer(let users)? = try db.scalar("SELECT count(*) FROM user_states"), users > 0 {
                let offset = Int64.random(in: 0..<users)
                if case .text(let id)? = try db.scalar("SELECT user_id FROM user_states ORDER BY user_id LIMIT 1 OFFSET ?1", [.integer(offset)]) {
                    from = id
                }
            }
            func rows(_ sql: String, _ count: Int) throws -> [(userId: String, state: UserState)] {
                try db.query(sql, [.text(from), .integer(Int64(count))]) { row in
                    (row.string(at: 0), try UserStateCodec.decode(row.blob(at: 1)))
                }
            }
            var sample = try rows("SELECT user_id, state FROM user_states WHERE user_id >= ?1 ORDER BY user_id LIMIT ?2", limit)
            if sample.count < limit {
                sample += try rows("SELECT user_id, state FROM user_states WHERE user_id < ?1 ORDER BY user_id LIMIT ?2", limit - sample.count)
            }
            return sample
        }
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
}

/// A SQLite connection as the shared catalog SQL sees it (`$n` placeholders spelled `?n`).
struct SQLiteSession: SQLSession {
    let db: Connection
    init(_ db: Connection) { self.db = db }

    func rows(_ sql: String, _ arguments: [ExperimentSQL.Write.Argument]) throws -> [[String?]] {
        let values: [SQLiteValue] = arguments.map {
            switch $0 {
            case .text(let text): .text(text)
            case .integer(let n): .integer(n)
            }
        }
        return try db.query(ExperimentSQL.sqlite(sql), values) { row in
            (0..<row.columnCount).map { row.isNull(at: $0) ? nil : row.string(at: $0) }
        }
    }
}

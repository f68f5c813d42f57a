import Crypto
public import SQLiteKit

/// One migration as `sheetd migrate --status` lists it.
public struct MigrationStatus: Sendable, Equatable {
    public var version: Int
    public var name: String
    /// True when the database has a bookkeeping row for this version.
    public var applied: Bool
    /// When it was applied (ISO 8601, UTC), if it was.
    public var appliedAt: String?
    /// The SHA-256 (hex) of the shipped file, or the recorded one for a version this binary does not ship.
    public var checksum: String
    /// Whether this binary ships the migration (false: the database is newer than the binary).
    public var shipped: Bool
    /// For an applied, shipped migration: whether the recorded checksum matches the file. Nil otherwise.
    public var checksumMatches: Bool?
}

/// The shipped migrations against what a database's `schema_migrations` table records: the checks and
/// the status list every backend shares (only reading the rows and applying the files differ).
public struct MigrationBookkeeping: Sendable {
    /// One recorded row.
    public struct Applied: Sendable {
        public var name: String
        public var checksum: String
        public var appliedAt: String
        public init(name: String, checksum: String, appliedAt: String) {
            self.name = name
            self.checksum = checksum
            self.appliedAt = appliedAt
        }
    }

    /// Sorted by version.
    public let migrations: [EmbeddedMigration]

    public init(_ migrations: [EmbeddedMigration]) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// The highest version shipped.
    public var latestVersion: Int { migrations.last?.version ?? 0 }

    /// Refuses a database migrated by a newer binary or whose applied migrations were edited since.
    public func validate(_ applied: [Int: Applied]) throws(StoreError) {
        if let newest = applied.keys.max(), newest > latestVersion {
            throw .schemaTooNew(database: newest, binary: latestVersion)
        }
        for migration in migrations {
            if let row = applied[migration.version], row.checksum != SHA256.hex(migration.bytes) {
                throw .checksumMismatch(version: migration.version, name: migration.name)
            }
        }
        let shipped = Set(migrations.map(\.version))
        if let unknown = applied.keys.sorted().first(where: { !shipped.contains($0) }) {
            throw .failure("the database records migration \(unknown), which this binary does not ship")
        }
    }

    /// Every shipped migration, plus any recorded version this binary does not know.
    public func status(_ applied: [Int: Applied]) -> [MigrationStatus] {
        var list = migrations.map { migration in
            let checksum = SHA256.hex(migration.bytes)
            let row = applied[migration.version]
            return MigrationStatus(
                version: migration.version, name: migration.name, applied: row != nil, appliedAt: row?.appliedAt,
                checksum: checksum, shipped: true, checksumMatches: row.map { $0.checksum == checksum })
        }
        let shipped = Set(migrations.map(\.version))
        for (version, row) in applied where !shipped.contains(version) {
            list.append(
                MigrationStatus(
                    version: version, name: row.name, applied: true, appliedAt: row.appliedAt, checksum: row.checksum,
                    shipped: false, checksumMatches: nil))
        }
        return list.sorted { $0.version < $1.version }
    }
}

/// Applies the embedded `migrations/*.sql` in version order, each in one `BEGIN IMMEDIATE`
/// transaction together with its `schema_migrations` row.
public struct Migrator: Sendable {
    public let migrations: [EmbeddedMigration]

    public init(migrations: [EmbeddedMigration] = shippedMigrations) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    static let createTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version     INTEGER PRIMARY KEY,
            name        TEXT NOT NULL,
            checksum    TEXT NOT NULL,
            applied_at  TEXT NOT NULL
        )
        """

    /// The highest version this binary ships.
    public var latestVersion: Int { migrations.last?.version ?? 0 }

    typealias AppliedRow = MigrationBookkeeping.Applied

    func appliedRows(_ db: Connection) throws -> [Int: AppliedRow] {
        let exists = try db.scalar("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'")
        guard exists != nil else { return [:] }
        var rows: [Int: AppliedRow] = [:]
        _ = try db.query("SELECT version, name, checksum, applied_at FROM schema_migrations") { row in
            rows[row.int(at: 0)] = AppliedRow(name: row.string(at: 1), checksum: row.string(at: 2), appliedAt: row.string(at: 3))
        }
        return rows
    }

    /// Refuses a database migrated by a newer binary or whose applied migrations were edited since.
    func validate(_ applied: [Int: AppliedRow]) throws(StoreError) {
        try MigrationBookkeeping(migrations).validate(applied)
    }

    /// Lists every shipped migration, plus any recorded version this binary does not know.
    public func status(_ db: Connection) throws(StoreError) -> [MigrationStatus] {
        MigrationBookkeeping(migrations).status(try mapErrors { try appliedRows(db) })
    }

    /// Applies the pending migrations; returns the versions applied now (empty when up to date).
    @discardableResult
    public func migrate(_ db: Connection) throws(StoreError) -> [Int] {
        try mapErrors {
            var applied = try appliedRows(db)
            if applied.isEmpty {
                // Only create the table when it is missing: a read-only, up-to-date database must open.
                try db.transaction(.immediate) { try db.execute(Self.createTable) }
                applied = try appliedRows(db)
            }
            try validate(applied)
            var done: [Int] = []
            for migration in migrations where applied[migration.version] == nil {
                let didApply = try db.transaction(.immediate) { () throws -> Bool in
                    // Another process may have applied it since we looked; the write lock settles it.
                    let current = try appliedRows(db)
                    try validate(current)
                    guard current[migration.version] == nil else { return false }
                    try db.execute(migration.sql)
                    try db.run(
                        """
                        INSERT INTO schema_migrations (version, name, checksum, applied_at)
                        VALUES (?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                        """,
                        [.integer(Int64(migration.version)), .text(migration.name), .text(SHA256.hex(migration.bytes))])
                    return true
                }
                if didApply { done.append(migration.version) }
            }
            return done
        }
    }
}

/// Runs `body`, turning SQLite errors into store errors (StoreError passes through).
func mapErrors<T>(_ body: () throws -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch let error as StoreError {
        throw error
    } catch let error as SQLiteError {
        throw StoreError(error)
    } catch {
        throw .failure("\(error)")
    }
}

extension StoreError {
    /// Busy, locked, read-only, full, I/O and open failures are `unavailable` (503, retry later);
    /// anything else is a `failure`. The message names the SQL.
    init(_ error: SQLiteError) {
        self = error.isTransient ? .unavailable(error.description) : .failure(error.description)
    }
}

extension Migrator {
    func statusOfEmptyDatabase() throws(StoreError) -> [MigrationStatus] {
        migrations.map {
            MigrationStatus(
                version: $0.version, name: $0.name, applied: false, appliedAt: nil, checksum: Crypto.SHA256.hex($0.bytes),
                shipped: true, checksumMatches: nil)
        }
    }
}

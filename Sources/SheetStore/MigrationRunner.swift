import Crypto

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

/// Applies a backend's embedded migrations (`migrations/*.sql`, `migrations/postgres/*.sql`) in
/// version order, each in one write transaction together with its `schema_migrations` row; written
/// once over `SQLSession`. Several processes may migrate one database at once: each migration's
/// transaction checks again that it is still pending (SQLite's write lock settles it), and
/// PostgreSQL replicas take the dialect's `migrationLock` first (the first migrates, the others
/// wait, find nothing pending and go on).
public struct MigrationRunner: Sendable {
    public let migrations: [EmbeddedMigration]

    public init(_ migrations: [EmbeddedMigration]) {
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

    public typealias AppliedRow = MigrationBookkeeping.Applied

    /// What the database's `schema_migrations` records, by version (empty: no table yet).
    public func appliedRows(_ db: some SQLSession) throws -> [Int: AppliedRow] {
        guard try !db.query(db.dialect.tableExists, [.text("schema_migrations")]).isEmpty else { return [:] }
        var rows: [Int: AppliedRow] = [:]
        for row in try db.query("SELECT version, name, checksum, applied_at FROM schema_migrations", []) {
            rows[row.int(at: 0)] = AppliedRow(name: row.string(at: 1), checksum: row.string(at: 2), appliedAt: row.string(at: 3))
        }
        return rows
    }

    /// Refuses a database migrated by a newer binary or whose applied migrations were edited since.
    public func validate(_ applied: [Int: AppliedRow]) throws(StoreError) {
        try MigrationBookkeeping(migrations).validate(applied)
    }

    /// Lists every shipped migration, plus any recorded version this binary does not know. Never writes.
    public func status(_ db: some SQLSession) throws -> [MigrationStatus] {
        MigrationBookkeeping(migrations).status(try appliedRows(db))
    }

    /// The listing of a database that does not exist yet: every migration pending.
    public func statusOfEmptyDatabase() -> [MigrationStatus] {
        MigrationBookkeeping(migrations).status([:])
    }

    /// Applies the pending migrations; returns the versions applied now (empty when up to date).
    /// Refuses (`StoreError`) a database migrated by a newer binary or whose applied migrations were
    /// edited since; the backend's own errors pass through.
    @discardableResult
    public func migrate(_ db: some SQLSession) throws -> [Int] {
        if let lock = db.dialect.migrationLock {
            try db.execute(lock.lock, [])
        }
        defer { if let lock = db.dialect.migrationLock { _ = try? db.execute(lock.unlock, []) } }
        var applied = try appliedRows(db)
        if applied.isEmpty {
            // Only create the table when it is missing: a read-only, up-to-date database must open.
            try db.transaction { try db.executeScript(Self.createTable) }
            applied = try appliedRows(db)
        }
        try validate(applied)
        var done: [Int] = []
        for migration in migrations where applied[migration.version] == nil {
            let didApply = try db.transaction { () throws -> Bool in
                // Another process may have applied it since we looked; the write lock settles it.
                let current = try appliedRows(db)
                try validate(current)
                guard current[migration.version] == nil else { return false }
                try db.executeScript(migration.sql)
                try db.execute(
                    """
                    INSERT INTO schema_migrations (version, name, checksum, applied_at)
                    VALUES ($1, $2, $3, \(db.dialect.nowText))
                    """,
                    [.integer(Int64(migration.version)), .text(migration.name), .text(SHA256.hex(migration.bytes))])
                return true
            }
            if didApply { done.append(migration.version) }
        }
        return done
    }
}

import Crypto
import PostgresKit
public import SheetStore

/// Applies the embedded `migrations/postgres/*.sql` in version order, each in one transaction with
/// its `schema_migrations` row (the same bookkeeping as the SQLite `Migrator`). Replicas starting
/// together serialize on a session advisory lock: the first migrates, the others wait, find nothing
/// pending and go on.
public struct PostgresMigrator: Sendable {
    public let migrations: [EmbeddedMigration]

    public init(migrations: [EmbeddedMigration] = shippedPostgresMigrations) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    /// The advisory lock key ("sheetd" in ASCII): one per database, shared by every replica.
    static let lockKey: Int64 = 0x73_6865_6574_64

    static let createTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version     integer PRIMARY KEY,
            name        text NOT NULL,
            checksum    text NOT NULL,
            applied_at  text NOT NULL
        )
        """

    public var latestVersion: Int { migrations.last?.version ?? 0 }

    typealias AppliedRow = MigrationBookkeeping.Applied

    func appliedRows(_ db: PostgresConnection) throws -> [Int: AppliedRow] {
        guard try db.scalar("SELECT to_regclass('schema_migrations')::text") != nil else { return [:] }
        var rows: [Int: AppliedRow] = [:]
        for row in try db.query("SELECT version, name, checksum, applied_at FROM schema_migrations") {
            rows[row.int(at: 0)] = AppliedRow(name: row.string(at: 1), checksum: row.string(at: 2), appliedAt: row.string(at: 3))
        }
        return rows
    }

    /// Refuses a database migrated by a newer binary or whose applied migrations were edited since.
    func validate(_ applied: [Int: AppliedRow]) throws(StoreError) {
        try MigrationBookkeeping(migrations).validate(applied)
    }

    /// Lists every shipped migration, plus any recorded version this binary does not know. Never writes.
    func status(_ db: PostgresConnection) throws(StoreError) -> [MigrationStatus] {
        MigrationBookkeeping(migrations).status(try mapPostgresErrors { try appliedRows(db) })
    }

    /// Applies the pending migrations under the advisory lock; returns the versions applied now.
    @discardableResult
    func migrate(_ db: PostgresConnection) throws(StoreError) -> [Int] {
        try mapPostgresErrors {
            // Session lock: held across the per-migration transactions, released below or when the
            // connection ends (a crashed migrator never blocks the others for good).
            try db.query("SELECT pg_advisory_lock($1)", [.int(Self.lockKey)])
            defer { _ = try? db.query("SELECT pg_advisory_unlock($1)", [.int(Self.lockKey)]) }
            var applied = try appliedRows(db)
            if applied.isEmpty {
                try db.execute(Self.createTable)
                applied = try appliedRows(db)
            }
            try validate(applied)
            var done: [Int] = []
            for migration in migrations where applied[migration.version] == nil {
                try db.execute("BEGIN")
                do {
                    try db.execute(migration.sql)
                    try db.query(
                        """
                        INSERT INTO schema_migrations (version, name, checksum, applied_at)
                        VALUES ($1, $2, $3, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                        """, [.int(Int64(migration.version)), .text(migration.name), .text(SHA256.hex(migration.bytes))])
                    try db.execute("COMMIT")
                } catch {
                    db.rollbackIfNeeded()
                    throw error
                }
                done.append(migration.version)
            }
            return done
        }
    }
}

/// The PostgreSQL migrations compiled into this binary, in version order.
public let shippedPostgresMigrations: [EmbeddedMigration] = embeddedMigrations

/// Runs `body`, turning PostgreSQL errors into store errors (StoreError passes through).
func mapPostgresErrors<T>(_ body: () throws -> T) throws(StoreError) -> T {
    do {
        return try body()
    } catch {
        throw storeError(error)
    }
}

/// Connection losses and the other transient failures are `unavailable` (503, retry later);
/// anything else is a `failure` naming the SQL.
func storeError(_ error: any Error) -> StoreError {
    switch error {
    case let error as StoreError: error
    case let error as PostgresError: error.isTransient ? .unavailable(error.description) : .failure(error.description)
    default: .failure("\(error)")
    }
}

import MicroHTTP
import PostgresStore
import SQLiteStore
import SheetStore

/// Which store `--db` selects: a `postgres://` or `postgresql://` URL is PostgreSQL (through libpq),
/// anything else a SQLite file. The only place above the stores that knows both.
extension Configuration {
    var usesPostgres: Bool { PostgresSheetStore.isPostgresURL(databasePath) }

    /// The database as logs and messages may show it: a URL without its password.
    var databaseForDisplay: String { usesPostgres ? PostgresSheetStore.redacted(databasePath) : databasePath }

    /// Development secrets live beside the SQLite file, or in ./data with PostgreSQL.
    var developmentSecretsAnchor: String { usesPostgres ? "./data/sheetd.sqlite" : databasePath }

    /// Reader connections to PostgreSQL: `SHEETD_DB_POOL`, else two per HTTP worker.
    var postgresReaderConnections: Int { databasePool ?? 2 * http.threads }

    /// Opens (and migrates) the selected store.
    func openStore() throws(StoreError) -> any SheetStore {
        if usesPostgres {
            return try PostgresSheetStore.open(url: databasePath, readerConnections: postgresReaderConnections, retention: retention)
        }
        return try SQLiteSheetStore.open(path: databasePath, synchronous: synchronous, retention: retention)
    }

    /// `sheetd migrate`: applies the pending migrations of the selected store.
    func migrateDatabase() throws(StoreError) -> [Int] {
        if usesPostgres { return try PostgresSheetStore.migrate(url: databasePath) }
        return try SQLiteSheetStore.migrate(path: databasePath, synchronous: synchronous)
    }

    /// `sheetd migrate --status`.
    func databaseMigrationStatus() throws(StoreError) -> [MigrationStatus] {
        if usesPostgres { return try PostgresSheetStore.migrationStatus(url: databasePath) }
        return try SQLiteSheetStore.migrationStatus(path: databasePath)
    }
}

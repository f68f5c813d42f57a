import SQLiteStore
import SheetStore

/// `sheetd backup` and `sheetd restore` (SQLite only: PostgreSQL has pg_dump and pg_restore).
enum DatabaseCopy {
    static func backup(to file: String, _ configuration: Configuration) throws(ConfigurationError) -> Int32 {
        try refusePostgres(configuration, "backup", tool: "pg_dump")
        do {
            let report = try SQLiteSheetStore.backup(path: configuration.databasePath, to: file)
            print("backup of \(configuration.databasePath) written: \(describe(report))")
            return 0
        } catch {
            printError("sheetd backup: \(error)")
            return 1
        }
    }

    static func restore(from file: String, _ configuration: Configuration) throws(ConfigurationError) -> Int32 {
        try refusePostgres(configuration, "restore", tool: "pg_restore")
        do {
            let report = try SQLiteSheetStore.restore(path: configuration.databasePath, from: file)
            print("restored \(file) into \(describe(report))")
            return 0
        } catch {
            printError("sheetd restore: \(error)")
            return 1
        }
    }

    private static func describe(_ r: DatabaseCopyReport) -> String {
        "\(r.path) (\(r.bytes) bytes, \(r.users) users, schema version \(r.schemaVersion), integrity ok)"
    }

    private static func refusePostgres(_ c: Configuration, _ command: String, tool: String) throws(ConfigurationError) {
        if c.usesPostgres {
            throw ConfigurationError("\(command) copies SQLite databases; for PostgreSQL use \(tool) (docs/operations.md)")
        }
    }
}

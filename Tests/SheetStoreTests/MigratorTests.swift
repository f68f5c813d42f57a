import Foundation
import SQLiteKit
import TestSupport
import Testing

@testable import SQLiteStore
@testable import SheetStore

@Suite struct MigratorTests {
    /// An empty database gets every shipped migration, each recorded with its checksum.
    @Test func migratesAnEmptyDatabase() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let path = dir.file("nested/dir/db.sqlite")
        #expect(try SQLiteSheetStore.migrationStatus(path: path).allSatisfy { !$0.applied })
        #expect(!FileManager.default.fileExists(atPath: path), "--status never creates the database")

        #expect(try SQLiteSheetStore.migrate(path: path) == shippedMigrations.map(\.version))
        let status = try SQLiteSheetStore.migrationStatus(path: path)
        #expect(status.map(\.version) == shippedMigrations.map(\.version))
        #expect(status.allSatisfy { $0.applied && $0.checksumMatches == true && $0.shipped && $0.appliedAt != nil })
        #expect(status.first?.name == "initial")
    }

    /// A migration number missing from the middle (a version another branch adds) is no obstacle:
    /// a database with 1 to 6 gets 8, then a binary that also ships 7 applies 7 after it.
    @Test func aGapInTheNumbersIsFilledLater() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let db = try Connection(path: dir.file())
        defer { db.close() }
        let upToSix = shippedMigrations.filter { $0.version <= 6 }
        try MigrationRunner(upToSix).migrate(db)
        try db.run("INSERT INTO sheets (id, definition, created_at, updated_at) VALUES ('kept', '{}', 'x', 'x')")
        #expect(try MigrationRunner(shippedMigrations).migrate(db).contains(8))
        // Once version 7 ships in this binary too, the gap is gone and the rest has nothing to show.
        guard !shippedMigrations.contains(where: { $0.version == 7 }) else { return }
        let seven = EmbeddedMigration(shippedVersion: 7, name: "other", fileName: "0007_other.sql", bytes: Array("CREATE TABLE other (x);".utf8))
        #expect(try MigrationRunner(shippedMigrations + [seven]).migrate(db) == [7])
        #expect(try db.scalar("SELECT count(*) FROM sheets") == .integer(1))
        #expect(try db.scalar("SELECT count(*) FROM catalog_revisions") == .integer(0))
    }

    /// Opening or migrating an up-to-date database applies nothing.
    @Test func secondRunIsANoOp() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let store = try SQLiteSheetStore.open(path: dir.file())
        store.close()
        #expect(try SQLiteSheetStore.migrate(path: dir.file()) == [])
        let again = try SQLiteSheetStore.open(path: dir.file())
        again.close()
        let db = try Connection(path: dir.file())
        #expect(try db.scalar("SELECT count(*) FROM schema_migrations") == .integer(Int64(shippedMigrations.count)))
    }

    /// A shipped migration whose recorded checksum differs stops start-up.
    @Test func refusesATamperedChecksum() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        try SQLiteSheetStore.migrate(path: dir.file())
        let db = try Connection(path: dir.file())
        try db.run("UPDATE schema_migrations SET checksum = 'abc' WHERE version = 1")
        db.close()
        #expect(throws: StoreError.checksumMismatch(version: 1, name: "initial")) {
            _ = try SQLiteSheetStore.open(path: dir.file())
        }
        #expect(throws: StoreError.checksumMismatch(version: 1, name: "initial")) {
            try SQLiteSheetStore.migrate(path: dir.file())
        }
        let status = try SQLiteSheetStore.migrationStatus(path: dir.file())
        #expect(status.first?.checksumMatches == false)
    }

    /// A database migrated by a newer binary stops start-up.
    @Test func refusesANewerSchema() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        try SQLiteSheetStore.migrate(path: dir.file())
        let db = try Connection(path: dir.file())
        try db.run("INSERT INTO schema_migrations VALUES (9999, 'future', 'x', '2030-01-01T00:00:00Z')")
        db.close()
        let latest = shippedMigrations.last!.version
        #expect(throws: StoreError.schemaTooNew(database: 9999, binary: latest)) {
            _ = try SQLiteSheetStore.open(path: dir.file())
        }
        let status = try SQLiteSheetStore.migrationStatus(path: dir.file())
        #expect(status.last?.version == 9999)
        #expect(status.last?.shipped == false)
    }

    /// A failing migration leaves neither its schema changes nor its bookkeeping row behind.
    @Test func failingMigrationIsAtomic() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let good = EmbeddedMigration(version: 1, name: "one", fileName: "0001_one.sql", bytes: Array("CREATE TABLE a (x);".utf8))
        let bad = EmbeddedMigration(
            version: 2, name: "two", fileName: "0002_two.sql", bytes: Array("CREATE TABLE b (x); SELECT nope FROM a;".utf8))
        let db = try Connection(path: dir.file())
        defer { db.close() }
        #expect(throws: StoreError.self) { try MigrationRunner([good, bad]).migrate(db) }
        #expect(db.isAutocommit)
        #expect(try db.query("SELECT version FROM schema_migrations") { $0.int(at: 0) } == [1])
        #expect(try db.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'b'") == .integer(0))
        #expect(try db.scalar("SELECT count(*) FROM sqlite_schema WHERE name = 'a'") == .integer(1))
        #expect(try MigrationRunner([good]).migrate(db) == [], "the applied one stays applied")
    }

    /// The embedded migrations are byte for byte the files in the top-level migrations/ directory,
    /// and the migrated schema equals the one those files build when run directly.
    @Test func schemaComesFromExactlyTheSQLFiles() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../migrations").standardizedFileURL
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".sql") }.sorted()
        #expect(files == shippedMigrations.map(\.fileName))
        for (file, migration) in zip(files, shippedMigrations) {
            let bytes = try [UInt8](Data(contentsOf: directory.appendingPathComponent(file)))
            #expect(bytes == migration.bytes, "\(file) differs from the embedded copy: rebuild")
        }

        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        try SQLiteSheetStore.migrate(path: dir.file("migrated.sqlite"))
        let reference = try Connection(path: dir.file("reference.sqlite"))
        for file in files {
            try reference.execute(String(decoding: try Data(contentsOf: directory.appendingPathComponent(file)), as: UTF8.self))
        }
        let migrated = try Connection(path: dir.file("migrated.sqlite"))
        let schemaSQL = "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name <> 'schema_migrations' ORDER BY type, name"
        let row: (Statement) -> String = { "\($0.string(at: 0)) \($0.string(at: 1)) \($0.string(at: 2)) \($0.string(at: 3))" }
        let expected = try reference.query(schemaSQL, row: row)
        #expect(expected.count >= 4)  // sheets, processed_events and its index, user_states
        #expect(try migrated.query(schemaSQL, row: row) == expected)
    }
}

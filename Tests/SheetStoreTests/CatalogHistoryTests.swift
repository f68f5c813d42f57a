import Foundation
import PostgresKit
import SQLiteKit
import SheetPolicy
import Testing

@testable import PostgresStore
@testable import SQLiteStore
@testable import SheetStore

/// Catalog history on both backends (`CatalogHistorySQL`): a revision stores the sheets it changed,
/// so a one-sheet change costs about that sheet's bytes whatever the catalog's size; the byte budget
/// drops the oldest revisions (never the newest); every kept revision still reads as the whole
/// catalog it recorded; history written by version 10 (copies) converts without loss.
@Suite(.serialized) struct CatalogHistoryTests {
    /// A sheet definition of about `size` bytes (valid JSON, as the `sheets` table checks).
    static func sheet(_ id: String, size: Int, version: Int = 0) -> StoredSheet {
        let head = #"{"kind":"cards","v":\#(version),"pad":""#
        return StoredSheet(id: id, json: head + String(repeating: "x", count: max(0, size - head.utf8.count - 2)) + #""}"#)
    }

    static func record(keep: Int = 1000, bytes: Int64 = CatalogRevision.defaultHistoryBytes, _ actor: String = "alice") -> CatalogWriteRecord {
        CatalogWriteRecord(author: RevisionAuthor(actor: actor, comment: "test"), keep: keep, historyBytes: bytes)
    }

    static func historyBytes(_ store: any SheetStore) throws -> Int64 {
        switch store {
        case let store as SQLiteSheetStore: return try store.catalogHistoryBytes()
        case let store as PostgresSheetStore: return try store.catalogHistoryBytes()
        default: throw StoreError.failure("unknown store")
        }
    }

    /// What the database file or schema takes, in bytes (SQLite pages; PostgreSQL relation sizes).
    static func databaseBytes(_ store: any SheetStore, _ database: TestDatabase) throws -> Int64 {
        switch database.backend {
        case .sqlite:
            let db = try Connection(path: database.location)
            defer { db.close() }
            guard case .integer(let pages)? = try db.scalar("PRAGMA page_count"), case .integer(let size)? = try db.scalar("PRAGMA page_size")
            else { throw StoreError.failure("no page count") }
            return pages * size
        case .postgres:
            let db = try PostgresConnection(url: database.location)
            defer { db.close() }
            let sql = """
                SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c
                JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind = 'r'
                """
            return Int64(try db.query(sql)[0].string(at: 0)) ?? 0
        }
    }

    /// Every kept revision reads as the catalog it recorded.
    static func expectKept(_ store: any SheetStore, _ expected: [Int64: [StoredSheet]]) throws {
        for revision in try store.catalogRevisions(before: nil, limit: 10_000) {
            let whole = try #require(try store.catalogRevision(revision.number))
            let want = try #require(expected[revision.number], "revision \(revision.number) was never made")
            #expect(whole.sheets == want, "revision \(revision.number)")
            #expect(whole.sheetCount == want.count && revision.sheetCount == want.count)
        }
    }

    static func sorted(_ catalog: [String: StoredSheet]) -> [StoredSheet] {
        catalog.values.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }

    /// 40 sheets of 16 KiB (a 640 KiB catalog), then 20 one-sheet changes: each adds about that
    /// sheet's bytes to the history (copies added the whole catalog), also as the database measures it.
    @Test(arguments: Backend.available) func aOneSheetRevisionCostsAboutThatSheet(_ backend: Backend) throws {
        try withStore(backend) { store, database throws in
            let size = 16 * 1024
            var catalog: [String: StoredSheet] = [:]
            for i in 0..<40 { catalog["s\(i)"] = Self.sheet("s\(i)", size: size) }
            try store.putSheets(Self.sorted(catalog), record: Self.record())
            var expected = [try store.catalogRevisions(before: nil, limit: 1)[0].number: Self.sorted(catalog)]
            let historyBefore = try Self.historyBytes(store)
            #expect(historyBefore >= Int64(40 * size) && historyBefore < Int64(41 * size))
            let databaseBefore = try Self.databaseBytes(store, database)
            for change in 1...20 {
                let changed = Self.sheet("s\(change % 40)", size: size, version: change)
                #expect(try !store.putSheet(changed, record: Self.record()))
                catalog[changed.id] = changed
                expected[try store.catalogRevisions(before: nil, limit: 1)[0].number] = Self.sorted(catalog)
            }
            let perChange = (try Self.historyBytes(store) - historyBefore) / 20
            #expect(perChange == Int64(size), "history bytes per one-sheet change: \(perChange)")
            // The database grows by about the sheet too (pages, indexes and MVCC slack: under 3 sheets).
            let databasePerChange = (try Self.databaseBytes(store, database) - databaseBefore) / 20
            #expect(databasePerChange < Int64(3 * size), "database bytes per one-sheet change: \(databasePerChange)")
            try Self.expectKept(store, expected)
        }
    }

    /// Deletions, settings-only revisions and restores read back as they were, with the count limit.
    @Test(arguments: Backend.available) func deletionsSettingsAndRestoresReadBack(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            var catalog: [String: StoredSheet] = [:]
            var expected: [Int64: [StoredSheet]] = [:]
            func made() throws { expected[try store.catalogRevisions(before: nil, limit: 1)[0].number] = Self.sorted(catalog) }
            for id in ["b", "a", "c"] {
                catalog[id] = Self.sheet(id, size: 200)
                _ = try store.putSheet(catalog[id]!, record: Self.record(keep: 6))
                try made()
            }
            #expect(try store.deleteSheet(id: "a", record: Self.record(keep: 6)))
            catalog["a"] = nil
            try made()
            let withoutA = try store.catalogRevisions(before: nil, limit: 1)[0].number
            try store.putSettings(
                CampaignSettings(globalCap: FrequencyCap(max: 2, periodSeconds: 60), minIntervalSeconds: 5), record: Self.record(keep: 6))
            try made()
            catalog["a"] = Self.sheet("a", size: 300, version: 2)
            _ = try store.putSheet(catalog["a"]!, record: Self.record(keep: 6))
            try made()
            catalog["b"] = nil
            _ = try store.deleteSheet(id: "b", record: Self.record(keep: 6))
            try made()
            // Restore the catalog without "a" (b and c as they were then); settings as then (off).
            let restored = try #require(try store.restoreCatalogRevision(withoutA, record: Self.record(keep: 6)))
            #expect(restored.restoredFrom == withoutA && restored.settings == .off)
            catalog = Dictionary(uniqueKeysWithValues: expected[withoutA]!.map { ($0.id, $0) })
            try made()
            #expect(try store.catalog() == Self.sorted(catalog))
            #expect(try store.settings() == .off)
            let kept = try store.catalogRevisions(before: nil, limit: 100)
            #expect(kept.count == 6, "the count limit still holds")
            try Self.expectKept(store, expected)
        }
    }

    /// A byte budget of about five sheets: the oldest revisions go first, every kept one still reads
    /// whole, the history stays within the budget; a budget smaller than the catalog keeps the newest.
    @Test(arguments: Backend.available) func theByteBudgetDropsTheOldestRevisions(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            let size = 4096
            let budget = Int64(5 * size + size / 2)
            var catalog: [String: StoredSheet] = [:]
            var expected: [Int64: [StoredSheet]] = [:]
            for change in 0..<12 {
                let sheet = Self.sheet("s\(change % 3)", size: size, version: change)
                catalog[sheet.id] = sheet
                _ = try store.putSheet(sheet, record: Self.record(bytes: budget))
                let newest = try store.catalogRevisions(before: nil, limit: 1)[0].number
                expected[newest] = Self.sorted(catalog)
                #expect(try Self.historyBytes(store) <= budget)
            }
            let kept = try store.catalogRevisions(before: nil, limit: 100).map(\.number)
            // Three sheets make the oldest kept revision's catalog; two more changes fit beside it.
            #expect(kept.count == 3, "kept \(kept)")
            #expect(kept == Array(expected.keys.sorted().suffix(3).reversed()), "the newest are kept")
            try Self.expectKept(store, expected)

            let tiny = Self.sheet("s0", size: size, version: 99)
            _ = try store.putSheet(tiny, record: Self.record(bytes: 1))
            catalog[tiny.id] = tiny
            let only = try store.catalogRevisions(before: nil, limit: 100)
            #expect(only.count == 1, "the newest revision is always kept")
            #expect(try store.catalogRevision(only[0].number)?.sheets == Self.sorted(catalog))
        }
    }

    // MARK: - Migration 11

    /// Version 10 history (copies of every sheet per revision): adds, a change, a deletion, a
    /// settings-only revision, a restore.
    static let version10: [(revision: Int, comment: String?, restoredFrom: Int?, cap: Int?, sheets: [(String, String)])] = [
        (1, "first", nil, nil, [("a", #"{"v":1}"#), ("b", #"{"v":1}"#)]),
        (2, nil, nil, nil, [("a", #"{"v":2}"#), ("b", #"{"v":1}"#), ("c", #"{"v":1}"#)]),
        (3, "drop b", nil, nil, [("a", #"{"v":2}"#), ("c", #"{"v":1}"#)]),
        (5, "settings", nil, 3, [("a", #"{"v":2}"#), ("c", #"{"v":1}"#)]),
        (6, "restore 1", 1, nil, [("a", #"{"v":1}"#), ("b", #"{"v":1}"#)]),
    ]

    static func populateVersion10(_ database: TestDatabase) throws {
        func quoted(_ text: String?) -> String { text.map { "'\($0)'" } ?? "NULL" }
        // The numbers as given (a PostgreSQL identity column takes them when told to).
        let overriding = database.backend == .postgres ? "OVERRIDING SYSTEM VALUE " : ""
        var statements: [String] = []
        for r in version10 {
            statements.append(
                """
                INSERT INTO catalog_revisions (revision, created_at, actor, comment, restored_from, global_cap_max, global_cap_period_seconds)
                \(overriding)VALUES (\(r.revision), '2026-11-0\(r.revision)T10:00:00.123Z', 'alice', \(quoted(r.comment)),
                    \(r.restoredFrom.map(String.init) ?? "NULL"), \(r.cap.map(String.init) ?? "NULL"), \(r.cap == nil ? "NULL" : "60"))
                """)
            for (id, json) in r.sheets {
                statements.append("INSERT INTO catalog_revision_sheets (revision, id, definition) VALUES (\(r.revision), '\(id)', '\(json)')")
            }
        }
        switch database.backend {
        case .sqlite:
            let db = try Connection(path: database.location)
            defer { db.close() }
            _ = try MigrationRunner(shippedMigrations.filter { $0.version <= 10 }).migrate(db)
            for sql in statements { try db.run(sql) }
        case .postgres:
            let db = try PostgresConnection(url: database.location)
            defer { db.close() }
            _ = try MigrationRunner(shippedPostgresMigrations.filter { $0.version <= 10 }).migrate(db)
            for sql in statements { try db.execute(sql) }
            try db.execute("SELECT setval(pg_get_serial_sequence('catalog_revisions', 'revision'), 6)")
        }
    }

    @Test(arguments: Backend.available) func version10HistoryConvertsWithoutLoss(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        try Self.populateVersion10(database)
        let store = try database.open()
        defer { store.close() }
        let listed = try store.catalogRevisions(before: nil, limit: 100)
        #expect(listed.map(\.number) == [6, 5, 3, 2, 1])
        for r in Self.version10 {
            let revision = try #require(try store.catalogRevision(Int64(r.revision)))
            #expect(revision.sheets == r.sheets.map { StoredSheet(id: $0.0, json: $0.1) }, "revision \(r.revision)")
            #expect(revision.sheetCount == r.sheets.count)
            #expect(revision.comment == r.comment && revision.actor == "alice")
            #expect(revision.restoredFrom == r.restoredFrom.map(Int64.init))
            #expect(revision.settings.globalCap == r.cap.map { FrequencyCap(max: $0, periodSeconds: 60) })
            #expect(revision.createdAt == "2026-11-0\(r.revision)T10:00:00.123Z")
        }
        // Changes, not copies: a and b; a and c; b's deletion; none; a and b back, c's deletion.
        #expect(try Self.historyBytes(store) == Int64(6 * #"{"v":1}"#.utf8.count))
        // And the history goes on from there.
        _ = try store.putSheet(StoredSheet(id: "c", json: #"{"v":3}"#), record: Self.record())
        let newest = try store.catalogRevisions(before: nil, limit: 1)[0]
        #expect(newest.number == 7)
        #expect(
            try store.catalogRevision(7)?.sheets
                == [StoredSheet(id: "a", json: #"{"v":1}"#), StoredSheet(id: "b", json: #"{"v":1}"#), StoredSheet(id: "c", json: #"{"v":3}"#)])
    }
}

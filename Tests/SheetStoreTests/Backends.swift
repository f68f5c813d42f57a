import Foundation
import PostgresKit
import SheetPolicy
import TestSupport
import Testing

@testable import PostgresStore
@testable import SQLiteStore
@testable import SheetStore

/// The store backends the contract tests run on. PostgreSQL needs `SHEETD_TEST_POSTGRES_URL` to name
/// a server the tests may create schemas in (`make test` starts one with scripts/postgres.sh, as
/// does scripts/with-postgres.sh); without it every PostgreSQL test fails, saying so: none is skipped.
enum Backend: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite, postgres

    var testDescription: String { rawValue }

    static let available: [Backend] = allCases

    static let postgresURL: String? = {
        let url = ProcessInfo.processInfo.environment["SHEETD_TEST_POSTGRES_URL"]
        return url?.isEmpty == false ? url : nil
    }()

    /// The test server's URL, or a failure that says how to get one.
    static func requirePostgresURL(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(postgresURL, missingPostgres, sourceLocation: sourceLocation)
    }

    static let missingPostgres: Comment =
        "SHEETD_TEST_POSTGRES_URL is not set: run make test, or scripts/with-postgres.sh swift test --skip-build (PostgreSQL tests never skip)"
}

/// A database of its own for one test: a temporary SQLite file, or a fresh schema on the test
/// server (selected through `search_path` in the URL, so every connection of the store uses it).
struct TestDatabase: Sendable {
    let backend: Backend
    /// The SQLite path or the PostgreSQL URL.
    let location: String
    private let cleanup: @Sendable () -> Void

    init(_ backend: Backend) throws {
        self.backend = backend
        switch backend {
        case .sqlite:
            let dir = try TemporaryDirectory(prefix: "store-contract")
            location = dir.file()
            cleanup = { dir.remove() }
        case .postgres:
            let admin = try Backend.requirePostgresURL()
            let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
            let db = try PostgresConnection(url: admin)
            try db.execute("CREATE SCHEMA \(schema)")
            db.close()
            let separator = admin.contains("?") ? "&" : "?"
            location = admin + separator + "options=-csearch_path%3D\(schema)&application_name=\(schema)"
            cleanup = {
                if let db = try? PostgresConnection(url: admin) {
                    _ = try? db.execute("DROP SCHEMA \(schema) CASCADE")
                    db.close()
                }
            }
        }
    }

    /// Opens (and migrates) a store on this database; several may be open at once (replicas).
    func open(readers: Int = 4, retention: StoreRetention = .default) throws -> any SheetStore {
        switch backend {
        case .sqlite: try SQLiteSheetStore.open(path: location, retention: retention)
        case .postgres: try PostgresSheetStore.open(url: location, readerConnections: readers, retention: retention)
        }
    }

    /// One prune step of `store`'s retention at `now` (Unix seconds), as its writer runs them.
    func prune(_ store: any SheetStore, now: Int64) throws {
        switch store {
        case let store as SQLiteSheetStore: try store.prune(now: now)
        case let store as PostgresSheetStore: try store.prune(now: now)
        default: Issue.record("unknown store")
        }
    }

    func remove() { cleanup() }
}

/// A store on a fresh database of `backend`, closed and removed afterwards.
func withStore<T>(_ backend: Backend, _ body: (any SheetStore, TestDatabase) throws -> T) throws -> T {
    let database = try TestDatabase(backend)
    defer { database.remove() }
    let store = try database.open()
    defer { store.close() }
    return try body(store, database)
}

struct BodyFailed: Error, Equatable {}

/// Runs `body(i)` for i in 0..<count, each on its own OS thread (as the HTTP workers are), and waits.
func runOnThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let thread = Thread {
            body(i)
            group.leave()
        }
        thread.start()
    }
    group.wait()
}

let sampleState = UserState(
    containers: [
        ContainerKey(containerId: "accounts", filter: ""): ContainerCount(count: 3, seq: 7),
        ContainerKey(containerId: "accounts", filter: "savings"): ContainerCount(count: 1, seq: nil),
        ContainerKey(containerId: "offers"): ContainerCount(count: 0, seq: 2),
    ],
    latches: ["offer-cards": 3, "tips": 0],
    stack: [
        StackEntry(sheetId: "b-bottom", mode: .push), StackEntry(sheetId: "a-middle", mode: .push),
        StackEntry(sheetId: "c-top", mode: .replace, replacedSheetId: "a-middle"),
    ],
    contentHeights: [
        HeightKey(sheetId: "offer-cards", platform: .ios): 312.5,
        HeightKey(sheetId: "offer-cards", platform: .android): 290.125,
    ])

/// Catalog writes as the store tests make them: every one records its revision, by `tests`.
extension CatalogStore {
    static var testRecord: CatalogWriteRecord { CatalogWriteRecord(author: RevisionAuthor(actor: "tests"), keep: 1000) }

    @discardableResult
    func putSheet(_ sheet: StoredSheet) throws(StoreError) -> Bool { try putSheet(sheet, record: Self.testRecord) }
    func putSheets(_ sheets: [StoredSheet]) throws(StoreError) { try putSheets(sheets, record: Self.testRecord) }
    @discardableResult
    func deleteSheet(id: String) throws(StoreError) -> Bool { try deleteSheet(id: id, record: Self.testRecord) }
    func putSettings(_ settings: CampaignSettings) throws(StoreError) { try putSettings(settings, record: Self.testRecord) }
}

import SheetPolicy
import Testing

@testable import PostgresStore
@testable import SQLiteStore
@testable import SheetStore

/// The one SQL session both backends adapt (`SQLSession`): shared SQL reads the same on both.
@Suite struct SQLSessionTests {
    @Test func sqliteSpellsPlaceholdersOutsideQuotesOnly() {
        let sql = "SELECT '$1', \"$2\", x FROM t WHERE a = $1 AND b = $12 AND c = 'it''s $3' AND d = $"
        #expect(SQLDialect.sqlite.spell(sql) == "SELECT '$1', \"$2\", x FROM t WHERE a = ?1 AND b = ?12 AND c = 'it''s $3' AND d = $")
        #expect(SQLDialect.postgres.spell(sql) == sql)
    }

    /// Integers, text, blobs and NULL come back typed from both backends, whatever the column's
    /// origin (a literal, a count, a stored column).
    @Test(arguments: Backend.available) func rowsAreTypedOnBothBackends(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            _ = try store.update(userId: "u1", eventId: nil) { state in
                state = sampleState
                return []
            }
            let rows = try query(
                store, "SELECT count(*), CAST($1 AS TEXT), NULL, (SELECT state FROM user_states WHERE user_id = $2) FROM user_states",
                [.text("héllo"), .text("u1")])
            #expect(rows.count == 1)
            let row = try #require(rows.first)
            #expect(row.values[0] == .integer(1))
            #expect(row.string(at: 1) == "héllo")
            #expect(row.isNull(at: 2))
            #expect(try UserStateCodec.decode(row.blob(at: 3)) == sampleState)
            #expect(try query(store, "SELECT 1 WHERE 1 = $1", [.integer(2)]).isEmpty)
        }
    }

    /// A transaction that throws leaves nothing behind on either backend (the store reports the
    /// error as a `StoreError`).
    @Test(arguments: Backend.available) func aFailedTransactionRollsBack(_ backend: Backend) throws {
        try withStore(backend) { store, _ throws in
            struct Abort: Error {}
            #expect(throws: StoreError.failure("\(Abort())")) {
                try write(store) { db in
                    try db.transaction {
                        try db.execute("INSERT INTO settings (id, min_interval_seconds) VALUES (1, $1)", [.integer(60)])
                        throw Abort()
                    }
                }
            }
            #expect(try store.settings() == .off)
        }
    }

    private func query(_ store: any SheetStore, _ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        switch store {
        case let store as SQLiteSheetStore: try store.withReadSession { try $0.query(sql, arguments) }
        case let store as PostgresSheetStore: try store.withReadSession { try $0.query(sql, arguments) }
        default: throw StoreError.failure("unknown store")
        }
    }

    private func write(_ store: any SheetStore, _ body: (any SQLSession) throws -> Void) throws {
        switch store {
        case let store as SQLiteSheetStore: try store.withWriteSession { try body($0) }
        case let store as PostgresSheetStore: try store.withWriteSession { try body($0) }
        default: throw StoreError.failure("unknown store")
        }
    }
}

public import SQLiteKit
public import SheetStore

/// A SQLite connection as the store code written once for both backends sees it (see `SQLSession`):
/// `$n` placeholders spelled `?n`, write transactions begun IMMEDIATE, SQLite's errors passed through.
public struct SQLiteSession: SQLSession {
    public let db: Connection
    public init(_ db: Connection) { self.db = db }

    /// BEGIN IMMEDIATE: the write lock first, so the transaction never fails to upgrade a read.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try db.transaction(.immediate, body)
    }

    public var dialect: SQLDialect { .sqlite }

    @discardableResult
    public func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try db.run(dialect.spell(sql), arguments.map(Self.value))
    }

    public func executeScript(_ sql: String) throws { try db.execute(sql) }

    public func query(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        try db.query(dialect.spell(sql), arguments.map(Self.value)) { row in
            SQLRow(
                (0..<row.columnCount).map { column in
                    switch row.value(at: column) {
                    case .integer(let value): .integer(value)
                    case .real(let value): .text(String(value))
                    case .text(let text): .text(text)
                    case .blob(let bytes): .blob(bytes)
                    case .null: .null
                    }
                })
        }
    }

    static func value(_ value: SQLValue) -> SQLiteValue {
        switch value {
        case .text(let text): .text(text)
        case .integer(let value): .integer(value)
        case .blob(let bytes): .blob(bytes)
        case .null: .null
        }
    }
}

/// The migrations compiled into this binary (`migrations/*.sql`), in version order.
public let shippedMigrations: [EmbeddedMigration] = embeddedMigrations

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

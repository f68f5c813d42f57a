/// A value bound to a statement's parameter or read from a row's column.
public enum SQLValue: Sendable, Equatable, Hashable {
    case text(String)
    case integer(Int64)
    case blob([UInt8])
    case null

    /// The value as text, as the rows of `SQLSession.rows` carry it (nil for NULL; a blob's bytes as UTF-8).
    public var text: String? {
        switch self {
        case .text(let text): text
        case .integer(let value): String(value)
        case .blob(let bytes): String(decoding: bytes, as: UTF8.self)
        case .null: nil
        }
    }
}

/// One row of a query, its columns typed where the backend knows their type (SQLite always;
/// PostgreSQL for integers and `bytea`, other columns as text). The accessors read either form, so
/// shared code reads a count or a sum the same way on both backends.
public struct SQLRow: Sendable, Equatable {
    public var values: [SQLValue]

    public init(_ values: [SQLValue]) { self.values = values }

    public var count: Int { values.count }
    public func isNull(at column: Int) -> Bool { values[column] == .null }
    public func optionalString(at column: Int) -> String? { values[column].text }
    public func string(at column: Int) -> String { values[column].text ?? "" }

    public func optionalInt64(at column: Int) -> Int64? {
        switch values[column] {
        case .integer(let value): value
        case .text(let text): Int64(text)
        case .blob, .null: nil
        }
    }
    public func int64(at column: Int) -> Int64 { optionalInt64(at: column) ?? 0 }
    public func optionalInt(at column: Int) -> Int? { optionalInt64(at: column).map { Int($0) } }
    public func int(at column: Int) -> Int { Int(int64(at: column)) }

    public func blob(at column: Int) -> [UInt8] {
        switch values[column] {
        case .blob(let bytes): bytes
        case .text(let text): Array(text.utf8)
        case .integer, .null: []
        }
    }
}

/// What differs in the SQL of the two backends, beyond what both accept as written: the
/// placeholder spelling and a few expressions. Shared SQL is written with PostgreSQL's `$n`
/// placeholders; `spell` gives a backend's spelling (SQLite's `?n`).
public struct SQLDialect: Sendable {
    /// The character a backend's numbered placeholders begin with (`$` or `?`).
    public let placeholder: Character
    /// The current time as a column of `sheets` stores it.
    public let now: String
    /// The current time as ISO 8601 text in UTC, with milliseconds (`schema_migrations.applied_at`).
    public let nowText: String
    /// A query with one row when the table `$1` exists in the database (the current schema).
    public let tableExists: String
    /// Appended to an `ORDER BY` column of text: order by bytes whatever the database's collation.
    public let byteOrder: String
    /// Statements run before and after the migrations of one process, so that replicas starting
    /// together migrate one at a time (nil: the migrations' write transactions serialize already).
    public let migrationLock: (lock: String, unlock: String)?

    public static let postgres = SQLDialect(
        placeholder: "$", now: "now()", nowText: "to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
        tableExists: "SELECT 1 WHERE to_regclass($1) IS NOT NULL", byteOrder: " COLLATE \"C\"",
        // A session lock ("sheetd" in ASCII): held across the migrations' transactions, released
        // after them or when the connection ends (a crashed migrator never blocks the others for good).
        migrationLock: ("SELECT pg_advisory_lock(\(0x73_6865_6574_64))", "SELECT pg_advisory_unlock(\(0x73_6865_6574_64))"))

    public static let sqlite = SQLDialect(
        placeholder: "?", now: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')", nowText: "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')",
        tableExists: "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = $1", byteOrder: "", migrationLock: nil)

    /// `sql` (written with `$n` placeholders) in this dialect: each `$` followed by a digit, outside
    /// string literals and quoted names, begins with `placeholder` instead.
    public func spell(_ sql: String) -> String {
        guard placeholder != "$" else { return sql }
        var out = ""
        out.reserveCapacity(sql.utf8.count)
        var quote: Character?
        var previous: Character?
        for character in sql {
            if let open = quote {
                if character == open { quote = nil }
            } else if character == "'" || character == "\"" {
                quote = character
            } else if previous == "$", character.isNumber {
                out.removeLast()
                out.append(placeholder)
            }
            out.append(character)
            previous = character
        }
        return out
    }
}

/// One connection of a backend as the store code written once for both backends sees it.
///
/// Layering: `SQLiteKit` and `PostgresKit` wrap the C libraries and know nothing of the store; each
/// backend module (`SQLiteStore`, `PostgresStore`) adapts its kit's connection to this protocol
/// (`SQLiteSession`, `PostgresSession`), and `SheetStore` writes the catalog, settings, stats,
/// experiment counts, user sampling, erasure, prune and migration code once over it (`SQLSheetStore`,
/// `StorePruning`, `MigrationRunner`), as GRDB writes its features once over `Database`. Only what
/// differs stays in a backend: its connections (reader pool, writer), the group-commit batch SQL,
/// the replica versions and notifications (PostgreSQL), the WAL and files (SQLite).
///
/// SQL passed here is written with `$n` placeholders; a session spells them for its backend
/// (`dialect`). Errors are the kit's own (`SQLiteError`, `PostgresError`): the store around the
/// session turns them into `StoreError` and notes storage faults.
public protocol SQLSession {
    /// The backend's SQL spelling.
    var dialect: SQLDialect { get }
    /// Runs one statement; returns the rows it inserted, updated or deleted.
    @discardableResult
    func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int
    /// Runs several statements without parameters (a migration's file).
    func executeScript(_ sql: String) throws
    /// Runs one statement; returns its rows.
    func query(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow]
    /// Runs `body` in one write transaction: committed when it returns, rolled back when it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T
    /// Runs one statement; returns its rows as text (SQL NULL as nil).
    func rows(_ sql: String, _ arguments: [ExperimentSQL.Write.Argument]) throws -> [[String?]]
}

extension SQLSession {
    public func rows(_ sql: String, _ arguments: [ExperimentSQL.Write.Argument]) throws -> [[String?]] {
        try query(sql, arguments).map { $0.values.map(\.text) }
    }

    /// The first column of the first row (nil: no row, or NULL).
    public func scalar(_ sql: String, _ arguments: [SQLValue] = []) throws -> SQLValue? {
        guard let value = try query(sql, arguments).first?.values.first, value != .null else { return nil }
        return value
    }
}

extension Optional where Wrapped == Int64 {
    /// An optional integer as a parameter (NULL for nil).
    public var sqlValue: SQLValue { map { .integer($0) } ?? .null }
}

extension Optional where Wrapped == String {
    /// An optional text as a parameter (NULL for nil).
    public var sqlValue: SQLValue { map { .text($0) } ?? .null }
}

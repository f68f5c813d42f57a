internal import CSQLite

/// A prepared statement. Owns its `sqlite3_stmt`, finalized in `deinit`.
///
/// Indexes are 1-based for parameters (as in SQL `?1`) and 0-based for result columns, as in the C API.
public final class Statement {
    let handle: OpaquePointer
    /// The SQL this statement was prepared from (named in every error).
    public let sql: String

    init(database: OpaquePointer, sql: String, persistent: Bool) throws(SQLiteError) {
        var statement: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sqlite3_prepare_v3(database, sql, -1, flags, &statement, nil)
        try check(rc, database, sql: sql)
        // > If the input text contains no SQL (if the input is an empty string or a comment) then
        // > *ppStmt is set to NULL.
        guard let statement else { throw SQLiteError(code: .misuse, message: "no SQL statement in the text", sql: sql) }
        self.handle = statement
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    private var database: OpaquePointer? { sqlite3_db_handle(handle) }

    // MARK: - Binding

    public func bind(_ value: Int64, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, Int32(index), value), database, sql: sql)
    }

    public func bind(_ value: Int, at index: Int) throws(SQLiteError) { try bind(Int64(value), at: index) }

    public func bind(_ value: Double, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, Int32(index), value), database, sql: sql)
    }

    /// Binds the string's UTF-8 bytes (copied: the C pointer only lives for the call). The empty string stays a
    /// string, never NULL.
    public func bind(_ value: String, at index: Int) throws(SQLiteError) {
        let length = Int32(value.utf8.count)
        let rc = value.withCString { sqlite3_bind_text(handle, Int32(index), $0, length, csqlite_transient()) }
        try check(rc, database, sql: sql)
    }

    /// Binds bytes as a BLOB (copied). An empty array is a zero-length BLOB, never NULL.
    public func bind(_ value: [UInt8], at index: Int) throws(SQLiteError) {
        let rc: Int32 =
            value.isEmpty
            ? sqlite3_bind_zeroblob(handle, Int32(index), 0)
            : value.withUnsafeBytes { sqlite3_bind_blob(handle, Int32(index), $0.baseAddress, Int32($0.count), csqlite_transient()) }
        try check(rc, database, sql: sql)
    }

    public func bindNull(at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, Int32(index)), database, sql: sql)
    }

    public func bind(_ value: Int?, at index: Int) throws(SQLiteError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    public func bind(_ value: String?, at index: Int) throws(SQLiteError) {
        if let value { try bind(value, at: index) } else { try bindNull(at: index) }
    }

    public func bind(_ value: SQLiteValue, at index: Int) throws(SQLiteError) {
        switch value {
        case .integer(let v): try bind(v, at: index)
        case .real(let v): try bind(v, at: index)
        case .text(let v): try bind(v, at: index)
        case .blob(let v): try bind(v, at: index)
        case .null: try bindNull(at: index)
        }
    }

    /// Binds `values` to parameters 1...n.
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() { try bind(value, at: offset + 1) }
    }

    // MARK: - Running

    /// Advances to the next row: true when a row is available, false when the statement is done.
    ///
    /// On failure the statement is reset before the error is thrown, so it holds no lock or open
    /// read transaction afterwards.
    @discardableResult
    public func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = makeError(rc, database, sql: sql)
        // > If the most recent call to sqlite3_step(S) ... indicated an error, then sqlite3_reset(S)
        // > returns an appropriate error code. (The same error, already being thrown.)
        sqlite3_reset(handle)
        throw error
    }

    /// Steps to the end (for statements that return no row, or whose rows are ignored, such as
    /// `UPSERT ... RETURNING`: a statement left mid-way keeps its transaction open).
    public func run() throws(SQLiteError) {
        while try step() {}
    }

    /// Makes the statement ready to run again and clears its bindings.
    ///
    /// The return code of `sqlite3_reset` repeats the last `sqlite3_step` error, which `step()` has
    /// already thrown; `sqlite3_clear_bindings` always returns SQLITE_OK.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: - Columns of the current row

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }

    public func isNull(at index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }

    public func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }

    public func int(at index: Int) -> Int { Int(sqlite3_column_int64(handle, Int32(index))) }

    public func optionalInt(at index: Int) -> Int? { isNull(at: index) ? nil : int(at: index) }

    public func double(at index: Int) -> Double { sqlite3_column_double(handle, Int32(index)) }

    /// The column as UTF-8 text ("" for NULL).
    public func string(at index: Int) -> String {
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    public func optionalString(at index: Int) -> String? { isNull(at: index) ? nil : string(at: index) }

    /// The column as bytes (empty for NULL or a zero-length BLOB).
    public func blob(at index: Int) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        guard count > 0, let bytes = sqlite3_column_blob(handle, Int32(index)) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }

    /// The column with its storage class.
    public func value(at index: Int) -> SQLiteValue {
        switch sqlite3_column_type(handle, Int32(index)) {
        case SQLITE_INTEGER: .integer(int64(at: index))
        case SQLITE_FLOAT: .real(double(at: index))
        case SQLITE_TEXT: .text(string(at: index))
        case SQLITE_BLOB: .blob(blob(at: index))
        default: .null
        }
    }
}

@available(*, unavailable)
extension Statement: Sendable {}

/// A value bound to or read from SQLite, by storage class.
public enum SQLiteValue: Sendable, Equatable, Hashable {
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
    case null
}

// Deliberately not ExpressibleByNilLiteral: `nil` compared with a `SQLiteValue?` would silently
// mean `.null` instead of "no row".
extension SQLiteValue: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByStringLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(stringLiteral value: String) { self = .text(value) }
}

// MARK: - The one checkpoint for C return codes

/// Throws when `rc` is not SQLITE_OK, with SQLite's message for `database` and the SQL being run.
@inline(__always)
func check(_ rc: Int32, _ database: OpaquePointer?, sql: String?) throws(SQLiteError) {
    guard rc == SQLITE_OK else { throw makeError(rc, database, sql: sql) }
}

func makeError(_ rc: Int32, _ database: OpaquePointer?, sql: String?) -> SQLiteError {
    // sqlite3_errmsg describes the most recent failing call on this connection; the connection is
    // confined to one thread (or its lock held), so that is the call that returned `rc`.
    let message = database.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
    return SQLiteError(code: ResultCode(rawValue: rc), message: message, sql: sql)
}

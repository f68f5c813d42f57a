public import PostgresKit
public import SheetStore

/// A PostgreSQL connection as the store code written once for both backends sees it (see
/// `SQLSession`): integer and `bytea` columns typed, the rest as text; PostgreSQL's errors passed through.
public struct PostgresSession: SQLSession {
    public let db: PostgresConnection
    public init(_ db: PostgresConnection) { self.db = db }

    public var dialect: SQLDialect { .postgres }

    public func query(_ sql: String, _ arguments: [SQLValue]) throws -> [SQLRow] {
        let result = try db.query(sql, arguments.map(Self.value))
        return result.map { row in
            SQLRow(
                result.columnTypes.indices.map { column in
                    guard let text = row.optionalString(at: column) else { return .null }
                    switch result.columnTypes[column] {
                    case PostgresType.bytea: return .blob(row.bytes(at: column))
                    case PostgresType.int2, PostgresType.int4, PostgresType.int8: return Int64(text).map { .integer($0) } ?? .text(text)
                    default: return .text(text)
                    }
                })
        }
    }

    /// One statement's affected rows (`PQcmdTuples`).
    @discardableResult
    public func execute(_ sql: String, _ arguments: [SQLValue]) throws -> Int {
        try db.query(sql, arguments.map(Self.value)).affectedRows
    }

    public func executeScript(_ sql: String) throws { try db.execute(sql) }

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try db.execute("BEGIN")
        do {
            let result = try body()
            try db.execute("COMMIT")
            return result
        } catch {
            db.rollbackIfNeeded()
            throw error
        }
    }

    /// A parameter as libpq takes it: in text format, but bytes (`bytea`) in binary.
    static func value(_ value: SQLValue) -> PostgresValue {
        if case .integer(let number) = value { return .int(number) }
        if case .blob(let bytes) = value { return .bytes(bytes) }
        return value.text.map { .text($0) } ?? .null
    }
}

/// The PostgreSQL migrations compiled into this binary, in version order.
public let shippedPostgresMigrations: [EmbeddedMigration] = embeddedMigrations

extension MigrationRunner {
    /// Applies the pending migrations on `db`; PostgreSQL's errors turned into store errors.
    @discardableResult
    func migrate(_ db: PostgresConnection) throws(StoreError) -> [Int] {
        try mapPostgresErrors { try migrate(PostgresSession(db)) }
    }
}

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

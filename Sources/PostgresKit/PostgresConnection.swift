internal import CLibPQ
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value bound to a statement parameter. Text, numbers and NULL go in libpq's text format;
/// bytes go in binary format (no escaping), so the parameter must be a `bytea` in the statement.
public enum PostgresValue: Sendable, Equatable {
    case text(String)
    case int(Int64)
    case double(Double)
    case bytes([UInt8])
    case null
}

/// One libpq connection (`PGconn`), owned here and finished in `deinit`.
///
/// Not thread-safe: libpq allows one thread per connection at a time, so a connection is used by the
/// thread that holds it (see `PostgresPool`). Statements are prepared once per connection on first
/// use; a new connection (after a loss) prepares them again, so a stale prepared name never
/// reaches the server.
public final class PostgresConnection {
    /// Internal, not private: the listener's extension (in PostgresListener.swift) polls it.
    var handle: OpaquePointer?
    /// SQL text → prepared statement name, for this connection only.
    private var prepared: [String: String] = [:]
    /// A statement failed with SQLSTATE 25006: the server no longer takes writes (a fenced or demoted
    /// primary), so the session is dropped like a broken one and the next finds the writable host.
    private var refusedAsReadOnly = false
    /// The connector's counters, when a connector made this connection.
    private let counters: PostgresConnector.Counters?

    /// Default connection parameters; the URL's own (and libpq's PG* variables) win over these,
    /// except that a connection never waits forever. sheetd writes, so it wants the writable server:
    /// of a multi-host URL's hosts, libpq takes the first that is not read-only.
    static let defaults: [(String, String)] = [
        ("connect_timeout", "2"), ("application_name", "sheetd"), ("target_session_attrs", "read-write"),
    ]

    /// Connects to `url` (a `postgres://` or `postgresql://` URI or a `key=value` string). libpq's own
    /// conventions apply: PGPASSFILE/.pgpass, PG* variables, `sslmode` and friends in the URL.
    ///
    /// - Throws: `PostgresError` with `connectionLost` set when the server cannot be reached or
    ///   refuses the login.
    /// `parameters` are libpq keywords applied before the URL's (the listener's TCP keepalives).
    /// A session on a read-only server (a standby, or `default_transaction_read_only`; possible when
    /// the URL sets `target_session_attrs` to something else) is refused with SQLSTATE 25006.
    public convenience init(url: String, parameters: [(String, String)] = []) throws(PostgresError) {
        try self.init(url: url, parameters: parameters, counters: nil)
    }

    init(url: String, parameters: [(String, String)], counters: PostgresConnector.Counters?) throws(PostgresError) {
        self.counters = counters
        // Later entries win (libpq processes the arrays in order), so the URL comes last.
        let pairs = Self.defaults + parameters + [("dbname", url)]
        let keywords = pairs.map { strdup($0.0) }
        let values = pairs.map { strdup($0.1) }
        defer {
            for pointer in keywords { free(pointer) }
            for pointer in values { free(pointer) }
        }
        let keywordPointers = keywords.map { UnsafePointer($0) } + [nil]
        let valuePointers = values.map { UnsafePointer($0) } + [nil]
        let connection = PQconnectdbParams(keywordPointers, valuePointers, 1)
        // > Note that these functions will always return a non-null object pointer, unless perhaps
        // > there is too little memory even to allocate the PGconn object.
        guard let connection else {
            throw PostgresError(sqlstate: "", message: "out of memory connecting to PostgreSQL", connectionLost: true)
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = Self.trimmed(PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresError(sqlstate: "", message: message, connectionLost: true)
        }
        cpq_silence_notices(connection)
        handle = connection
        if serverIsReadOnly {
            close()
            throw PostgresError(
                sqlstate: Self.readOnlySQLState,
                message: "the server is read-only (a standby, or default_transaction_read_only); sheetd needs the writable primary",
                connectionLost: true)
        }
    }

    /// SQLSTATE read_only_sql_transaction.
    static let readOnlySQLState = "25006"

    /// True when the server says this session cannot write: a standby (`in_hot_standby`, PostgreSQL
    /// 14+) or `default_transaction_read_only` on. libpq keeps both current from the server's
    /// ParameterStatus messages, which arrive with the answers to statements: no round trip here.
    public var serverIsReadOnly: Bool {
        guard let handle else { return false }
        for name in ["in_hot_standby", "default_transaction_read_only"] {
            if let value = PQparameterStatus(handle, name), String(cString: value) == "on" { return true }
        }
        return false
    }

    /// Drops the session because its server turned out read-only (counted by the connector).
    public func closeAsReadOnly() {
        if handle != nil { counters?.readOnlySessions.add(1, ordering: .relaxed) }
        close()
    }

    deinit { close() }

    /// Closes the connection (idempotent); every later call throws `connectionLost`.
    public func close() {
        if let handle { PQfinish(handle) }
        handle = nil
        prepared = [:]
    }

    /// True while the connection is open, not known to be broken, and not refused as read-only.
    public var isHealthy: Bool {
        guard let handle, !refusedAsReadOnly else { return false }
        return PQstatus(handle) == CONNECTION_OK
    }

    /// True when the server ended this idle session since it was last used: `pg_terminate_backend`, a
    /// restart or a failover leave a FATAL notice or an end of file on the socket, which libpq only
    /// notices on the next query. Checked on checkout (one `poll` that does not wait), so that a pool
    /// opens a new session rather than failing the first request after the database came back.
    public var endedWhileIdle: Bool {
        guard let handle, PQstatus(handle) == CONNECTION_OK else { return true }
        var poller = pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) > 0 else { return false }
        // Something arrived on an idle session: read it (a notice keeps the session, an end ends it).
        return PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK
    }

    /// True when a transaction is open (or failed and not yet rolled back).
    public var inTransaction: Bool {
        guard let handle else { return false }
        return PQtransactionStatus(handle) != PQTRANS_IDLE
    }

    /// The server's process id for this session (tests end sessions with `pg_terminate_backend`).
    public var backendPID: Int32 {
        guard let handle else { return 0 }
        return PQbackendPID(handle)
    }

    /// Runs one or more statements without parameters (simple query protocol: migrations, BEGIN,
    /// COMMIT). Returns the rows of the last statement.
    @discardableResult
    public func execute(_ sql: String) throws(PostgresError) -> PostgresRows {
        let handle = try open(sql)
        return try check(PQexec(handle, sql), sql: sql, handle: handle)
    }

    /// Runs one statement with `$1...` parameters through a prepared statement kept for this
    /// connection. Results come back in text format.
    @discardableResult
    public func query(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> PostgresRows {
        let handle = try open(sql)
        let name = try preparedName(sql, handle)
        return try withParameters(parameters) { values, lengths, formats throws(PostgresError) in
            try check(
                PQexecPrepared(handle, name, Int32(parameters.count), values, lengths, formats, 0), sql: sql, handle: handle)
        }
    }

    /// Runs `statements` in pipeline mode (libpq 14+): every statement is sent before any result is
    /// read, so the whole list costs one round trip. Each statement is prepared (once per connection)
    /// like `query`'s. Returns one result per statement, in order: after the first failing statement
    /// the server skips the rest (they fail with SQLSTATE "" and message "pipeline aborted").
    /// A `BEGIN` ... `COMMIT` inside the list is one transaction; a failure inside it leaves the
    /// transaction failed (`inTransaction`), for the caller to roll back.
    ///
    /// - Throws: `PostgresError` with `connectionLost` when the connection breaks on the way (the
    ///   outcome of the statements is then unknown).
    public func pipeline(
        _ statements: [(sql: String, parameters: [PostgresValue])]
    ) throws(PostgresError)
        -> [Result<PostgresRows, PostgresError>]
    {
        guard let first = statements.first else { return [] }
        let handle = try open(first.sql)
        var names: [String] = []
        names.reserveCapacity(statements.count)
        for statement in statements {
            if let existing = prepared[statement.sql] {
                names.append(existing)
            } else {
                let name = "s\(prepared.count)"
                _ = try check(PQprepare(handle, name, statement.sql, 0, nil), sql: statement.sql, handle: handle)
                prepared[statement.sql] = name
                names.append(name)
            }
        }
        func lost(_ sql: String?) -> PostgresError {
            PostgresError(sqlstate: "", message: Self.trimmed(PQerrorMessage(handle)), sql: sql, connectionLost: true)
        }
        // Non-blocking while sending, so that a long pipeline never waits on a full socket while
        // the server waits on us to read its results.
        guard PQsetnonblocking(handle, 1) == 0, PQenterPipelineMode(handle) == 1 else {
            PQsetnonblocking(handle, 0)
            throw lost(first.sql)
        }
        var broken = false
        defer {
            if broken {
                close()
            } else {
                PQexitPipelineMode(handle)
                PQsetnonblocking(handle, 0)
            }
        }
        for (index, statement) in statements.enumerated() {
            let sent = try withParameters(statement.parameters) { values, lengths, formats throws(PostgresError) in
                PQsendQueryPrepared(handle, names[index], Int32(statement.parameters.count), values, lengths, formats, 0)
            }
            if sent != 1 {
                broken = true
                throw lost(statement.sql)
            }
        }
        guard PQpipelineSync(handle) == 1 else {
            broken = true
            throw lost(nil)
        }
        // Flush everything, reading whatever the server sends meanwhile.
        while true {
            let flushed = PQflush(handle)
            if flushed == 0 { break }
            if flushed < 0 {
                broken = true
                throw lost(nil)
            }
            var poller = pollfd(fd: PQsocket(handle), events: Int16(POLLIN | POLLOUT), revents: 0)
            _ = poll(&poller, 1, 1000)
            if poller.revents & Int16(POLLIN) != 0 && PQconsumeInput(handle) == 0 {
                broken = true
                throw lost(nil)
            }
        }
        var results: [Result<PostgresRows, PostgresError>] = []
        results.reserveCapacity(statements.count)
        for statement in statements {
            // One result per statement, then a NULL.
            guard let result = PQgetResult(handle) else {
                broken = true
                throw lost(statement.sql)
            }
            if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                PQclear(result)
                results.append(.failure(PostgresError(sqlstate: "", message: "pipeline aborted", sql: statement.sql, connectionLost: false)))
            } else {
                do throws(PostgresError) {
                    results.append(.success(try check(result, sql: statement.sql, handle: handle)))
                } catch {
                    results.append(.failure(error))
                }
            }
            while let extra = PQgetResult(handle) { PQclear(extra) }
        }
        // The sync point closes the pipeline.
        guard let sync = PQgetResult(handle) else {
            broken = true
            throw lost(nil)
        }
        let synced = PQresultStatus(sync) == PGRES_PIPELINE_SYNC
        PQclear(sync)
        guard synced, PQstatus(handle) == CONNECTION_OK else {
            broken = true
            throw lost(nil)
        }
        return results
    }

    /// The first column of the first row, if any.
    public func scalar(_ sql: String, _ parameters: [PostgresValue] = []) throws(PostgresError) -> String? {
        let rows = try query(sql, parameters)
        return rows.isEmpty ? nil : rows[0].optionalString(at: 0)
    }

    /// Rolls back an open or failed transaction; a connection where that fails is closed.
    public func rollbackIfNeeded() {
        guard inTransaction else { return }
        if (try? execute("ROLLBACK")) == nil { close() }
    }

    // MARK: - Plumbing

    private func open(_ sql: String) throws(PostgresError) -> OpaquePointer {
        guard let handle else {
            throw PostgresError(sqlstate: "", message: "the connection is closed", sql: sql, connectionLost: true)
        }
        return handle
    }

    /// The name of `sql`'s prepared statement on this connection, preparing it on first use.
    private func preparedName(_ sql: String, _ handle: OpaquePointer) throws(PostgresError) -> String {
        if let existing = prepared[sql] { return existing }
        let name = "s\(prepared.count)"
        _ = try check(PQprepare(handle, name, sql, 0, nil), sql: sql, handle: handle)
        prepared[sql] = name
        return name
    }

    /// A successful result, or the error it (or its absence) stands for, the result cleared.
    private func validated(_ result: OpaquePointer?, sql: String, handle: OpaquePointer) throws(PostgresError) -> OpaquePointer {
        guard let result else {
            throw PostgresError(
                sqlstate: "", message: Self.trimmed(PQerrorMessage(handle)), sql: sql, connectionLost: PQstatus(handle) != CONNECTION_OK)
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_EMPTY_QUERY else {
            let sqlstate = PQresultErrorField(result, cpq_diag_sqlstate()).map { String(cString: $0) } ?? ""
            if sqlstate == Self.readOnlySQLState && !refusedAsReadOnly {
                refusedAsReadOnly = true
                counters?.readOnlySessions.add(1, ordering: .relaxed)
            }
            let lost = PQstatus(handle) != CONNECTION_OK || refusedAsReadOnly
            let error = PostgresError(sqlstate: sqlstate, message: Self.trimmed(PQresultErrorMessage(result)), sql: sql, connectionLost: lost)
            PQclear(result)
            throw error
        }
        return result
    }

    /// The one checkpoint for libpq results: copies the rows out and clears the result, or throws.
    private func check(_ result: OpaquePointer?, sql: String, handle: OpaquePointer) throws(PostgresError) -> PostgresRows {
        let result = try validated(result, sql: sql, handle: handle)
        defer { PQclear(result) }
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var rows: [PostgresRow] = []
        rows.reserveCapacity(rowCount)
        for r in 0..<rowCount {
            var values: [String?] = []
            values.reserveCapacity(columnCount)
            for c in 0..<columnCount {
                if PQgetisnull(result, Int32(r), Int32(c)) != 0 {
                    values.append(nil)
                } else {
                    values.append(String(cString: PQgetvalue(result, Int32(r), Int32(c))))
                }
            }
            rows.append(PostgresRow(values: values))
        }
        let affected = Int(String(cString: PQcmdTuples(result))) ?? 0
        let types = (0..<columnCount).map { PQftype(result, Int32($0)) }
        return PostgresRows(rows: rows, affectedRows: affected, columnTypes: types)
    }

    /// Lays the parameters out in one buffer (each NUL-terminated) and hands libpq pointers into it.
    private func withParameters<R>(
        _ parameters: [PostgresValue],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?) throws(PostgresError) -> R
    ) throws(PostgresError) -> R {
        if parameters.isEmpty { return try body(nil, nil, nil) }
        var buffer: [CChar] = []
        var offsets: [Int?] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        for parameter in parameters {
            var bytes: [UInt8]?
            var format: Int32 = 0
            switch parameter {
            case .text(let s): bytes = Array(s.utf8)
            case .int(let n): bytes = Array(String(n).utf8)
            case .double(let d): bytes = Array("\(d)".utf8)
            case .bytes(let b): bytes = b; format = 1
            case .null: bytes = nil
            }
            if let bytes {
                offsets.append(buffer.count)
                buffer.append(contentsOf: bytes.map { CChar(bitPattern: $0) })
                buffer.append(0)
                lengths.append(Int32(bytes.count))
            } else {
                offsets.append(nil)
                lengths.append(0)
            }
            formats.append(format)
        }
        if buffer.isEmpty { buffer.append(0) }
        return try buffer.withUnsafeBufferPointer { (base) throws(PostgresError) -> R in
            let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in offset.map { base.baseAddress! + $0 } }
            return try pointers.withUnsafeBufferPointer { (values) throws(PostgresError) -> R in
                try body(values.baseAddress, lengths, formats)
            }
        }
    }

    private static func trimmed(_ message: UnsafePointer<CChar>?) -> String {
        guard let message else { return "unknown libpq error" }
        var text = String(cString: message)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return text.isEmpty ? "unknown libpq error" : text
    }
}

@available(*, unavailable)
extension PostgresConnection: Sendable {}

/// The rows of one result, copied out of libpq (the `PGresult` is cleared before they are returned).
public struct PostgresRows: Sendable, RandomAccessCollection {
    public let rows: [PostgresRow]
    /// Rows inserted, updated or deleted (`PQcmdTuples`), 0 for other statements.
    public let affectedRows: Int
    /// Each column's type OID (`PQftype`; see `PostgresType`).
    public let columnTypes: [UInt32]
    public var startIndex: Int { rows.startIndex }
    public var endIndex: Int { rows.endIndex }
    public subscript(position: Int) -> PostgresRow { rows[position] }
}

/// The type OIDs (`pg_type.oid`) that callers read other than as text.
public enum PostgresType {
    public static let bool: UInt32 = 16
    public static let bytea: UInt32 = 17
    public static let int8: UInt32 = 20
    public static let int2: UInt32 = 21
    public static let int4: UInt32 = 23
    public static let oid: UInt32 = 26
}

/// One row in text format.
public struct PostgresRow: Sendable {
    public let values: [String?]

    public func optionalString(at column: Int) -> String? { values[column] }
    public func string(at column: Int) -> String { values[column] ?? "" }
    public func optionalInt(at column: Int) -> Int? { values[column].flatMap { Int($0) } }
    public func int(at column: Int) -> Int { optionalInt(at: column) ?? 0 }
    public func double(at column: Int) -> Double { values[column].flatMap { Double($0) } ?? 0 }

    /// A `bytea` column (text format `\x` followed by hex digits).
    public func bytes(at column: Int) -> [UInt8] {
        guard let text = values[column] else { return [] }
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x") else { return utf8 }
        var out: [UInt8] = []
        out.reserveCapacity((utf8.count - 2) / 2)
        var index = 2
        while index + 1 < utf8.count {
            out.append(Self.nibble(utf8[index]) << 4 | Self.nibble(utf8[index + 1]))
            index += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8 {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: 0
        }
    }
}

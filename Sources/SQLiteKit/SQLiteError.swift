internal import CSQLite

/// An SQLite result code, primary (`SQLITE_BUSY`) or extended (`SQLITE_BUSY_SNAPSHOT`).
///
/// Pattern matching with a primary code matches its whole family:
/// `case .busy = error.extendedCode` is true for `SQLITE_BUSY_SNAPSHOT` too.
public struct ResultCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// The primary code (the low byte of an extended code).
    public var primary: ResultCode { ResultCode(rawValue: rawValue & 0xff) }
    public var isPrimary: Bool { rawValue == rawValue & 0xff }

    public static let ok = ResultCode(rawValue: SQLITE_OK)
    public static let error = ResultCode(rawValue: SQLITE_ERROR)
    public static let `internal` = ResultCode(rawValue: SQLITE_INTERNAL)
    public static let perm = ResultCode(rawValue: SQLITE_PERM)
    public static let abort = ResultCode(rawValue: SQLITE_ABORT)
    public static let busy = ResultCode(rawValue: SQLITE_BUSY)
    public static let locked = ResultCode(rawValue: SQLITE_LOCKED)
    public static let nomem = ResultCode(rawValue: SQLITE_NOMEM)
    public static let readonly = ResultCode(rawValue: SQLITE_READONLY)
    public static let interrupt = ResultCode(rawValue: SQLITE_INTERRUPT)
    public static let ioerr = ResultCode(rawValue: SQLITE_IOERR)
    public static let corrupt = ResultCode(rawValue: SQLITE_CORRUPT)
    public static let notFound = ResultCode(rawValue: SQLITE_NOTFOUND)
    public static let full = ResultCode(rawValue: SQLITE_FULL)
    public static let cantopen = ResultCode(rawValue: SQLITE_CANTOPEN)
    public static let `protocol` = ResultCode(rawValue: SQLITE_PROTOCOL)
    public static let schema = ResultCode(rawValue: SQLITE_SCHEMA)
    public static let tooBig = ResultCode(rawValue: SQLITE_TOOBIG)
    public static let constraint = ResultCode(rawValue: SQLITE_CONSTRAINT)
    public static let mismatch = ResultCode(rawValue: SQLITE_MISMATCH)
    public static let misuse = ResultCode(rawValue: SQLITE_MISUSE)
    public static let range = ResultCode(rawValue: SQLITE_RANGE)
    public static let notADatabase = ResultCode(rawValue: SQLITE_NOTADB)
    public static let row = ResultCode(rawValue: SQLITE_ROW)
    public static let done = ResultCode(rawValue: SQLITE_DONE)

    /// A primary pattern matches every extended code of its family; an extended pattern matches exactly.
    public static func ~= (pattern: ResultCode, value: ResultCode) -> Bool {
        pattern.isPrimary ? pattern.rawValue == value.primary.rawValue : pattern.rawValue == value.rawValue
    }

    /// SQLite's own English text for the code.
    public var description: String { String(cString: sqlite3_errstr(rawValue)) + " (\(rawValue))" }
}

/// A failed SQLite call: the result code, SQLite's message and the SQL being run.
///
/// `description` never contains bound values, only the SQL text, so it is safe to log.
public struct SQLiteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The primary result code (`.busy`, `.readonly`, ...).
    public var code: ResultCode { extendedCode.primary }
    /// The extended result code (connections open with extended codes enabled).
    public let extendedCode: ResultCode
    /// `sqlite3_errmsg` at the time of the failure, or the code's text.
    public let message: String
    /// The statement being prepared or run, when there was one.
    public let sql: String?

    public init(code: ResultCode, message: String? = nil, sql: String? = nil) {
        self.extendedCode = code
        self.message = message ?? String(cString: sqlite3_errstr(code.rawValue))
        self.sql = sql
    }

    /// The storage cannot serve right now but may later by itself: busy, locked, read-only, full,
    /// I/O errors and files that cannot be opened.
    public var isTransient: Bool {
        switch code {
        case .busy, .locked, .readonly, .full, .ioerr, .cantopen, .perm, .nomem, .interrupt: true
        default: false
        }
    }

    public var description: String {
        var text = "SQLite error \(extendedCode.rawValue) (\(String(cString: sqlite3_errstr(code.rawValue)))): \(message)"
        if let sql { text += " [SQL: \(sql)]" }
        return text
    }

    /// Matches an error whose code is in `pattern`'s family: `case ResultCode.busy = error`.
    public static func ~= (pattern: ResultCode, error: SQLiteError) -> Bool {
        pattern ~= error.extendedCode
    }
}

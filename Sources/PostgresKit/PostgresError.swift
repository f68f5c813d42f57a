/// A libpq failure: the server's SQLSTATE when it sent one, the message, and the SQL it ran.
///
/// A lost connection has no SQLSTATE (libpq reports it client-side, e.g. "server closed the
/// connection unexpectedly"), so `connectionLost` is judged from the connection's status instead.
public struct PostgresError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Five-character SQLSTATE, or "" for client-side errors (connection refused or lost).
    public var sqlstate: String
    /// libpq's message, trimmed. Never contains the password (libpq does not echo it).
    public var message: String
    /// The statement that failed, without its parameters.
    public var sql: String?
    /// The connection is unusable afterwards (or could not be made): drop it and connect again.
    public var connectionLost: Bool

    public init(sqlstate: String, message: String, sql: String? = nil, connectionLost: Bool) {
        self.sqlstate = sqlstate
        self.message = message
        self.sql = sql
        self.connectionLost = connectionLost
    }

    /// Errors a client may retry after a moment: the database is down, restarting, overloaded,
    /// read-only (a standby), or the transaction lost a deadlock or serialization race.
    public var isTransient: Bool {
        if connectionLost || sqlstate.isEmpty { return true }
        let sqlClass = sqlstate.prefix(2)
        switch sqlClass {
        case "08", "53", "57", "58": return true  // connection, resources, operator intervention, system
        default: break
        }
        return ["40001", "40P01", "55P03", "25006"].contains(sqlstate)
    }

    /// The server would not write: read_only_sql_transaction, from a standby or a read-only primary.
    public var isReadOnly: Bool { sqlstate == "25006" }

    public var description: String {
        var text = sqlstate.isEmpty ? message : "\(message) (SQLSTATE \(sqlstate))"
        if let sql { text += " in: \(sql)" }
        return text
    }
}

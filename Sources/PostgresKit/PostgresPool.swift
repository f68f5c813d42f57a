import Concurrency

/// At most `capacity` connections to one database, made on demand and handed to one thread at a
/// time. A connection that broke, or was left inside a transaction, is closed instead of returned:
/// the next caller connects again, which is how the pool recovers once the database is back.
public final class PostgresPool: Sendable {
    private struct State {
        var idle: [PostgresConnection] = []
        var open = 0
        var closed = false
    }
    /// A connection taken from `idle` belongs to the calling thread until it is handed back.
    private let state = ConditionLock(State())
    public let capacity: Int
    private let connector: PostgresConnector
    /// How long a caller waits for a busy pool before failing.
    private let waitSeconds: Int

    public convenience init(url: String, capacity: Int, waitSeconds: Int = 5) {
        self.init(connector: PostgresConnector(url: url), capacity: capacity, waitSeconds: waitSeconds)
    }

    /// Connections made by `connector` (shared with the process's other sessions of the database).
    public init(connector: PostgresConnector, capacity: Int, waitSeconds: Int = 5) {
        self.connector = connector
        self.capacity = max(1, capacity)
        self.waitSeconds = waitSeconds
    }

    deinit {
        close()
    }

    /// Runs `body` with a connection of the pool.
    ///
    /// - Throws: what `body` throws; `PostgresError` with `connectionLost` when no connection can be
    ///   made, the pool stays exhausted for `waitSeconds`, or the pool is closed.
    public func withConnection<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let connection = try checkOut()
        do {
            let result = try body(connection)
            checkIn(connection)
            return result
        } catch {
            checkIn(connection)
            throw error
        }
    }

    /// Closes the idle connections and refuses new work; connections in use close when handed back.
    public func close() {
        let connections = state.withLock(wake: .all) { s in
            s.closed = true
            defer { s.idle = [] }
            s.open -= s.idle.count
            return s.idle
        }
        for connection in connections { connection.close() }
    }

    /// What a caller found when the pool had something for it.
    private enum Turn {
        case closed
        case idle(PostgresConnection)
        /// A slot is reserved: connect outside the lock.
        case connect
    }

    private func checkOut() throws(PostgresError) -> PostgresConnection {
        let turn = state.wait(until: { $0.closed || !$0.idle.isEmpty || $0.open < capacity }, timeout: .seconds(waitSeconds)) {
            s -> Turn in
            if s.closed { return .closed }
            if let connection = s.idle.popLast() { return .idle(connection) }
            s.open += 1
            return .connect
        }
        switch turn {
        case .none:
            throw PostgresError(
                sqlstate: "", message: "all \(capacity) database connections stayed busy for \(waitSeconds) s", connectionLost: true)
        case .closed:
            throw PostgresError(sqlstate: "", message: "the connection pool is closed", connectionLost: true)
        case .idle(let connection):
            guard connection.endedWhileIdle else { return connection }
            // The server ended it while it waited: a new session in its slot.
            connection.close()
            return try connectInReservedSlot()
        case .connect:
            return try connectInReservedSlot()
        }
    }

    /// A new session for a slot counted in `open`; the slot is given back when connecting fails.
    private func connectInReservedSlot() throws(PostgresError) -> PostgresConnection {
        do {
            return try connector.connect()
        } catch {
            state.withLock(wake: .one) { $0.open -= 1 }
            throw error
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        connection.rollbackIfNeeded()
        let keep = connection.isHealthy
        let discard = state.withLock(wake: .one) { s in
            let discard = !keep || s.closed
            if discard { s.open -= 1 } else { s.idle.append(connection) }
            return discard
        }
        if discard { connection.close() }
    }
}

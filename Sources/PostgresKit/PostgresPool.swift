#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// At most `capacity` connections to one database, made on demand and handed to one thread at a
/// time. A connection that broke, or was left inside a transaction, is closed instead of returned:
/// the next caller connects again, which is how the pool recovers once the database is back.
public final class PostgresPool: @unchecked Sendable {
    // Invariant: `idle`, `open` and `closed` are only touched with `mutex` held; a connection taken
    // from `idle` belongs to the calling thread until it is handed back.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let available = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var idle: [PostgresConnection] = []
    private var open = 0
    private var closed = false
    public let capacity: Int
    private let url: String
    /// How long a caller waits for a busy pool before failing.
    private let waitSeconds: Int

    public init(url: String, capacity: Int, waitSeconds: Int = 5) {
        self.url = url
        self.capacity = max(1, capacity)
        self.waitSeconds = waitSeconds
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(available, nil)
    }

    deinit {
        close()
        pthread_cond_destroy(available)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        available.deallocate()
    }

    /// Connections open right now (idle or in use).
    public var openConnections: Int {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return open
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
        pthread_mutex_lock(mutex)
        closed = true
        let connections = idle
        idle = []
        open -= connections.count
        pthread_cond_broadcast(available)
        pthread_mutex_unlock(mutex)
        for connection in connections { connection.close() }
    }

    private func checkOut() throws(PostgresError) -> PostgresConnection {
        pthread_mutex_lock(mutex)
        var deadline = timespec()
        clock_gettime(CLOCK_REALTIME, &deadline)
        deadline.tv_sec += waitSeconds
        while true {
            if closed {
                pthread_mutex_unlock(mutex)
                throw PostgresError(sqlstate: "", message: "the connection pool is closed", connectionLost: true)
            }
            if let connection = idle.popLast() {
                pthread_mutex_unlock(mutex)
                return connection
            }
            if open < capacity {
                open += 1
                pthread_mutex_unlock(mutex)
                do {
                    return try PostgresConnection(url: url)
                } catch {
                    pthread_mutex_lock(mutex)
                    open -= 1
                    pthread_cond_signal(available)
                    pthread_mutex_unlock(mutex)
                    throw error
                }
            }
            if pthread_cond_timedwait(available, mutex, &deadline) == ETIMEDOUT {
                pthread_mutex_unlock(mutex)
                throw PostgresError(
                    sqlstate: "", message: "all \(capacity) database connections stayed busy for \(waitSeconds) s",
                    connectionLost: true)
            }
        }
    }

    private func checkIn(_ connection: PostgresConnection) {
        connection.rollbackIfNeeded()
        let keep = connection.isHealthy
        pthread_mutex_lock(mutex)
        let discard = !keep || closed
        if discard { open -= 1 } else { idle.append(connection) }
        pthread_cond_signal(available)
        pthread_mutex_unlock(mutex)
        if discard { connection.close() }
    }
}

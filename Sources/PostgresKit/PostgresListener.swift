internal import CLibPQ
import Concurrency
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One notification (`NOTIFY channel, 'payload'`) as libpq delivered it.
public struct PostgresNotification: Sendable, Equatable {
    public var channel: String
    public var payload: String
    /// The notifying session's backend process id.
    public var senderPID: Int32
}

extension PostgresConnection {
    /// Waits up to `timeoutMilliseconds` for input on the connection's socket, reads what arrived and
    /// returns the notifications it carried (possibly none: input may be other protocol messages).
    ///
    /// - Throws: `connectionLost` when the socket failed or the server closed the session.
    public func waitForNotifications(timeoutMilliseconds: Int32) throws(PostgresError) -> [PostgresNotification] {
        try waitForNotifications(timeoutMilliseconds: timeoutMilliseconds, orReadable: -1).notifications
    }

    /// The same, and returns early when `descriptor` (when not negative) becomes readable: `woken`
    /// says whether it is.
    public func waitForNotifications(
        timeoutMilliseconds: Int32, orReadable descriptor: Int32
    ) throws(PostgresError) -> (notifications: [PostgresNotification], woken: Bool) {
        guard let handle else { throw PostgresError(sqlstate: "", message: "the connection is closed", connectionLost: true) }
        var pending = drainNotifications(handle)
        if !pending.isEmpty { return (pending, false) }
        var descriptors = [
            pollfd(fd: PQsocket(handle), events: Int16(POLLIN), revents: 0),
            pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
        ]
        guard descriptors[0].fd >= 0 else { throw lost(handle) }
        let ready = poll(&descriptors, descriptor >= 0 ? 2 : 1, timeoutMilliseconds)
        if ready < 0 && errno != EINTR { throw lost(handle) }
        if ready > 0 && descriptors[0].revents != 0 {
            // > PQconsumeInput normally returns 1 indicating "no error", but returns 0 if there was some
            // > kind of trouble. (A closed socket is trouble: the server ended the session.)
            if PQconsumeInput(handle) == 0 || PQstatus(handle) != CONNECTION_OK { throw lost(handle) }
        }
        pending = drainNotifications(handle)
        return (pending, ready > 0 && descriptor >= 0 && descriptors[1].revents != 0)
    }

    /// The notifications libpq buffered while a command ran on this connection.
    public func bufferedNotifications() -> [PostgresNotification] {
        guard let handle else { return [] }
        return drainNotifications(handle)
    }

    /// Every notification libpq has buffered (after any command on this connection too).
    private func drainNotifications(_ handle: OpaquePointer) -> [PostgresNotification] {
        var out: [PostgresNotification] = []
        while let note = PQnotifies(handle) {
            out.append(
                PostgresNotification(
                    channel: String(cString: note.pointee.relname), payload: String(cString: note.pointee.extra),
                    senderPID: note.pointee.be_pid))
            PQfreemem(note)
        }
        return out
    }

    private func lost(_ handle: OpaquePointer) -> PostgresError {
        var message = String(cString: PQerrorMessage(handle))
        while let last = message.last, last.isWhitespace { message.removeLast() }
        return PostgresError(sqlstate: "", message: message.isEmpty ? "the listener connection was lost" : message, connectionLost: true)
    }
}

/// The one LISTEN connection of a process: a thread that keeps a session listening on one channel,
/// hands every notification to `handler`, and notices a lost session.
///
/// Loss is noticed at once when the server closes the session (restart, `pg_terminate_backend`): the
/// socket reads EOF. A silent network loss is noticed by the keepalive (`SELECT 1` after a second
/// without input) under libpq's TCP keepalives and `tcp_user_timeout` (10 s). A server that reports
/// itself read-only (a fenced primary; a standby is refused at connect) counts as lost: its session
/// would hear nothing of the writes made on the new primary. After a loss the listener connects
/// again, to the writable host of a multi-host URL (backoff 10 ms doubling to 500 ms), and LISTENs again; notifications sent in
/// between are lost, which `handler` is told twice: `.lost` when the session went, `.listening` once
/// it listens again (a handler flushes its caches on both).
public final class PostgresListener: Sendable {
    public enum Event: Sendable, Equatable {
        /// The session listens (first time, or again after a loss).
        case listening
        /// The session was lost; nothing is heard until `.listening`.
        case lost
        case notification(PostgresNotification)
    }

    private struct Barriers {
        /// Waiting for the next round trip.
        var waiting: [@Sendable (Bool) -> Void] = []
        /// The session listens and `.listening` was handled: a round trip now proves what was heard.
        var listening = false
    }

    private let connector: PostgresConnector
    private let channel: String
    private let handler: @Sendable (Event) -> Void
    private let stopped = Atomic<Bool>(false)
    /// `run()` is on its thread; `stop()` waits on it for the thread to leave.
    private let running = ConditionLock(false)
    private let barriers = Mutex(Barriers())
    /// A pipe that wakes the listener's wait when a barrier is asked for, or on `stop()`: [read
    /// end, write end]. The listener never sleeps on a clock alone: every wait also watches this.
    private let wake: (read: Int32, write: Int32)
    private let roundTrips = Atomic<Int>(0)
    /// How long a barrier round trip waits, once asked for, for more requests to share it.
    static let gatherMicroseconds: UInt32 = 100
    /// Barrier round trips made (`sync`), for tests and metrics.
    public var barrierRoundTrips: Int { roundTrips.load(ordering: .relaxed) }
    /// The listening session's backend pid (0 while not connected), for tests that end it.
    private let pid = Atomic<Int32>(0)

    /// libpq keywords for a session that must notice a dead peer without traffic of its own.
    static let keepaliveParameters: [(String, String)] = [
        ("keepalives", "1"), ("keepalives_idle", "5"), ("keepalives_interval", "2"), ("keepalives_count", "3"),
        ("tcp_user_timeout", "10000"), ("application_name", "sheetd-listener"),
    ]

    /// `channel` is quoted as an identifier for LISTEN (any text works).
    public convenience init(url: String, channel: String, handler: @escaping @Sendable (Event) -> Void) {
        self.init(connector: PostgresConnector(url: url), channel: channel, handler: handler)
    }

    /// Sessions made by `connector` (counted with the process's others; the listener keeps its own
    /// backoff, so it does not wait for the connector's).
    public init(connector: PostgresConnector, channel: String, handler: @escaping @Sendable (Event) -> Void) {
        self.connector = connector
        self.channel = channel
        self.handler = handler
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
            _ = fcntl(ends[0], F_SETFD, FD_CLOEXEC)
            _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)
        }
        wake = (ends[0], ends[1])
    }

    deinit {
        if wake.read >= 0 { close(wake.read) }
        if wake.write >= 0 { close(wake.write) }
    }

    /// Calls `completion(true)` once every notification committed before this call has been handed
    /// to the handler (and the handler returned), or `completion(false)` when that cannot be
    /// promised: the session is not listening, or was lost on the way. Runs on the listener's thread.
    ///
    /// How: a round trip on the listening session itself, started after this call. PostgreSQL sends
    /// the listening session every notification of a transaction that committed before the round
    /// trip's query was read before its ReadyForQuery (postgres.c: "if any notifies were received
    /// during the just-finished transaction, they'll be seen by the client before ReadyForQuery is";
    /// the committing session signals listeners at commit, before its own client hears of it), and
    /// libpq hands them over in order. One round trip serves every call made before it started.
    public func sync(_ completion: @escaping @Sendable (Bool) -> Void) {
        enum Outcome { case refused, wakeUp, queued }
        let outcome = barriers.withLock { b -> Outcome in
            guard b.listening, wake.write >= 0 else { return .refused }
            b.waiting.append(completion)
            return b.waiting.count == 1 ? .wakeUp : .queued
        }
        switch outcome {
        case .refused: completion(false)
        case .wakeUp:
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
        case .queued: break  // a wake-up is on its way already
        }
    }

    /// The backend pid of the listening session, 0 while it is not connected.
    public var backendPID: Int32 { pid.load(ordering: .acquiring) }

    /// Runs the listener on the calling thread until `stop()`. Call it on a thread of its own.
    public func run() {
        running.withLock { $0 = true }
        defer { running.withLock(wake: .all) { $0 = false } }
        var backoffMilliseconds = 10
        var quoted = "\""
        for character in channel { quoted += character == "\"" ? "\"\"" : String(character) }
        quoted += "\""
        while !stopped.load(ordering: .acquiring) {
            let connection: PostgresConnection
            do {
                connection = try connector.connect(parameters: Self.keepaliveParameters, honoringBackoff: false)
                try connection.execute("LISTEN \(quoted)")
            } catch {
                waitForWakeUp(milliseconds: backoffMilliseconds)
                backoffMilliseconds = min(500, backoffMilliseconds * 2)
                continue
            }
            backoffMilliseconds = 10
            pid.store(connection.backendPID, ordering: .releasing)
            handler(.listening)
            barriers.withLock { $0.listening = true }
            listen(on: connection)
            // Nothing heard from now on: no barrier may succeed, the waiting ones fail.
            let failed = barriers.withLock { b in
                b.listening = false
                defer { b.waiting.removeAll() }
                return b.waiting
            }
            for completion in failed { completion(false) }
            pid.store(0, ordering: .releasing)
            connection.close()
            if !stopped.load(ordering: .acquiring) { handler(.lost) }
        }
    }

    /// Until the session is lost, its server turns read-only, or the listener stopped.
    private func listen(on connection: PostgresConnection) {
        // A second without input ends with a keepalive round trip.
        var keepaliveAt = monotonicMilliseconds() + Self.keepaliveMilliseconds
        while !stopped.load(ordering: .acquiring) {
            // A primary fenced or demoted under a live session says so in a ParameterStatus message
            // (read with the keepalive's answer at the latest): the writes, and so the notifications,
            // now happen elsewhere, so the session goes and the next one finds the writable host.
            if connection.serverIsReadOnly {
                connection.closeAsReadOnly()
                return
            }
            do {
                // Until input, a barrier or `stop()` (both write the wake-up pipe), or the keepalive.
                let wait = Int32(clamping: max(0, keepaliveAt - monotonicMilliseconds()))
                let (notes, woken) = try connection.waitForNotifications(timeoutMilliseconds: wait, orReadable: wake.read)
                for note in notes { handler(.notification(note)) }
                if stopped.load(ordering: .acquiring) { return }
                if woken {
                    try roundTrip(on: connection)
                    keepaliveAt = monotonicMilliseconds() + Self.keepaliveMilliseconds
                    continue
                }
                if !notes.isEmpty {
                    keepaliveAt = monotonicMilliseconds() + Self.keepaliveMilliseconds
                    continue
                }
                if monotonicMilliseconds() >= keepaliveAt {
                    // Keepalive: a round trip proves the session; notifications that arrive with
                    // its answer are buffered by libpq and drained on the next wait.
                    try connection.execute("SELECT 1")
                    keepaliveAt = monotonicMilliseconds() + Self.keepaliveMilliseconds
                }
            } catch {
                return
            }
        }
    }

    /// How long the session may stay silent before a keepalive round trip.
    static let keepaliveMilliseconds = 1000

    /// Waits `milliseconds` (a reconnect's backoff) unless `stop()` ends the wait sooner.
    private func waitForWakeUp(milliseconds: Int) {
        guard wake.read >= 0 else { return }
        var descriptor = pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, Int32(milliseconds))
    }

    /// One barrier round trip for every `sync` waiting: an empty query, then the notifications that
    /// came before its answer, then the waiters.
    private func roundTrip(on connection: PostgresConnection) throws(PostgresError) {
        // Requests keep arriving while the previous round trip was out: wait a little for more, so
        // that one round trip serves them all (fewer round trips, less CPU here and in PostgreSQL, for
        // a tenth of a millisecond of latency; see BENCHMARKS.md).
        usleep(Self.gatherMicroseconds)
        var drained = [UInt8](repeating: 0, count: 64)
        while read(wake.read, &drained, drained.count) > 0 {}
        let waiting = barriers.withLock { b in
            defer { b.waiting.removeAll() }
            return b.waiting
        }
        guard !waiting.isEmpty else { return }
        roundTrips.add(1, ordering: .relaxed)
        do {
            try connection.execute("")
        } catch {
            for completion in waiting { completion(false) }
            throw error
        }
        for note in connection.bufferedNotifications() { handler(.notification(note)) }
        for completion in waiting { completion(true) }
    }

    /// Asks `run()` to return (at once, unless a connect or a round trip is under way); waits for it
    /// up to 2 s.
    public func stop() {
        stopped.store(true, ordering: .releasing)
        if wake.write >= 0 {
            // Left unread: every later wait of the thread returns at once, until it leaves.
            var byte: UInt8 = 1
            _ = write(wake.write, &byte, 1)
        }
        _ = running.wait(until: { !$0 }, timeout: .seconds(2)) { _ in }
    }
}

/// Monotonic milliseconds, for the listener's keepalive.
private func monotonicMilliseconds() -> Int { Timers.now() / 1000 }

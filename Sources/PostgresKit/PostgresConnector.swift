import Synchronization

/// What a process's connection attempts to one database came to, for /metrics.
public struct PostgresConnectStatistics: Sendable, Equatable {
    /// Sessions opened on a writable server.
    public var connects = 0
    /// Attempts that found no writable server (refused, timed out, only standbys answered).
    public var failures = 0
    /// Sessions dropped because their server was, or became, read-only (a standby, a demoted or
    /// fenced primary: `in_hot_standby`, `default_transaction_read_only`, SQLSTATE 25006).
    public var readOnlySessions = 0
    /// How long new attempts wait now after the last failure (0 once one succeeded).
    public var backoffMilliseconds = 0

    public init() {}
}

/// Opens every session of one database URL for a process (its pool, its writers, its listener), so
/// that attempts are bounded and counted in one place.
///
/// Only a writable server will do: `target_session_attrs=read-write` is the default (a multi-host URL
/// finds the primary among its hosts; the URL may say otherwise), and a session on a read-only server
/// is refused (see `PostgresConnection`). After a failed attempt the next one waits for a backoff
/// (25 ms, doubling to 500 ms), and until one succeeds only one attempt runs at a time; calls in
/// between fail at once without connecting. So while no writable
/// server answers (a failover, an outage) a process makes at most a few attempts a second however
/// many requests arrive, and notices a new primary at most half a second after it accepts writes.
public final class PostgresConnector: Sendable {
    public let url: String
    private let firstBackoffMilliseconds: Int
    private let maxBackoffMilliseconds: Int

    private struct Backoff {
        var notBefore: ContinuousClock.Instant?
        var milliseconds = 0
        var lastError = ""
        /// An attempt after a failure is under way (the others fail at once meanwhile).
        var probing = false
    }

    private let backoff = Mutex(Backoff())
    let counters = Counters()

    /// `backoffMilliseconds`: the first wait after a failure and the longest (tests lengthen them).
    public init(url: String, backoffMilliseconds: (first: Int, max: Int) = (25, 500)) {
        self.url = url
        firstBackoffMilliseconds = max(1, backoffMilliseconds.first)
        maxBackoffMilliseconds = max(firstBackoffMilliseconds, backoffMilliseconds.max)
    }

    /// A new session on a writable server. `parameters` are libpq keywords applied before the URL's.
    /// A caller with its own retry loop (the listener) passes `honoringBackoff: false`.
    ///
    /// - Throws: `PostgresError` with `connectionLost` when no writable server answered, or (at
    ///   once) while the backoff after the last failure lasts.
    public func connect(parameters: [(String, String)] = [], honoringBackoff: Bool = true) throws(PostgresError) -> PostgresConnection {
        let refusal = honoringBackoff ? backoff.withLock { b in Self.refusal(&b) } : nil
        if let refusal {
            throw PostgresError(
                sqlstate: "", message: "no writable PostgreSQL server answered the last attempt (\(refusal)); retrying shortly",
                connectionLost: true)
        }
        do {
            let connection = try PostgresConnection(url: url, parameters: parameters, counters: counters)
            counters.connects.add(1, ordering: .relaxed)
            backoff.withLock { $0 = Backoff() }
            return connection
        } catch {
            counters.failures.add(1, ordering: .relaxed)
            if error.isReadOnly { counters.readOnlySessions.add(1, ordering: .relaxed) }
            backoff.withLock { b in
                if honoringBackoff { b.probing = false }
                // Concurrent failures of one window lengthen it once.
                if let notBefore = b.notBefore, ContinuousClock.now < notBefore { return }
                b.milliseconds = b.milliseconds == 0 ? firstBackoffMilliseconds : min(maxBackoffMilliseconds, b.milliseconds * 2)
                b.notBefore = ContinuousClock.now + .milliseconds(b.milliseconds)
                b.lastError = error.message
            }
            throw error
        }
    }

    /// Why a caller may not attempt now (nil: it may, and after a failure it is the one probing).
    private static func refusal(_ b: inout Backoff) -> String? {
        guard b.milliseconds > 0 else { return nil }  // the last attempt succeeded: connect freely
        if b.probing { return "another attempt is under way" }
        if let notBefore = b.notBefore, ContinuousClock.now < notBefore { return b.lastError }
        b.probing = true  // after a failure, one attempt at a time
        return nil
    }

    public var statistics: PostgresConnectStatistics {
        var s = PostgresConnectStatistics()
        s.connects = counters.connects.load(ordering: .relaxed)
        s.failures = counters.failures.load(ordering: .relaxed)
        s.readOnlySessions = counters.readOnlySessions.load(ordering: .relaxed)
        s.backoffMilliseconds = backoff.withLock { $0.milliseconds }
        return s
    }

    /// Shared with the connections this connector made (they count the read-only sessions they drop).
    final class Counters: Sendable {
        let connects = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let readOnlySessions = Atomic<Int>(0)
    }
}

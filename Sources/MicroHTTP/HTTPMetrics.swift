import Concurrency
import Observability
import Synchronization

/// Request metrics for the Prometheus text format: requests by route template and status, a latency
/// histogram per route, and in-flight requests. Recording is lock-free (relaxed atomics in a per-route
/// slot the router resolves once at start); only `renderPrometheus()` and slot creation take a lock.
public final class HTTPMetrics: Sendable {
    /// Histogram upper bounds in microseconds (rendered in seconds): 0.5 ms … 10 s.
    static let bucketBoundsMicros: [Int] = [
        500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000,
        250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000,
    ]
    /// The route label for requests whose path matched no route.
    public static let unmatchedRoute = "unmatched"

    private let inFlightCount = Atomic<Int>(0)
    /// libmicrohttpd's log lines by `DaemonLog.Kind` (client, other).
    private let daemonMessages = AtomicCounters(count: DaemonLog.Kind.allCases.count)
    private let slots = Mutex<[String: RouteMetrics]>([:])
    let unmatched: RouteMetrics

    public init() {
        unmatched = RouteMetrics(route: HTTPMetrics.unmatchedRoute)
        slots.withLock { $0[HTTPMetrics.unmatchedRoute] = unmatched }
    }

    /// Requests received (headers read) and not yet completely answered, across all servers using this.
    public var inFlight: Int { inFlightCount.load(ordering: .relaxed) }

    /// libmicrohttpd's log lines of `kind` so far (those a client causes are not logged one by one).
    func daemonMessages(_ kind: DaemonLog.Kind) -> Int { daemonMessages.load(Self.daemonIndex(kind)) }

    func daemonMessage(_ kind: DaemonLog.Kind) { daemonMessages.add(1, at: Self.daemonIndex(kind)) }

    private static func daemonIndex(_ kind: DaemonLog.Kind) -> Int { DaemonLog.Kind.allCases.firstIndex(of: kind)! }

    func requestStarted() { inFlightCount.wrappingAdd(1, ordering: .relaxed) }
    func requestFinished() { inFlightCount.wrappingSubtract(1, ordering: .relaxed) }

    /// The slot for a route template (created on first use; the router resolves slots once at start).
    func slot(for route: String) -> RouteMetrics {
        slots.withLock { s in
            if let m = s[route] { return m }
            let m = RouteMetrics(route: route)
            s[route] = m
            return m
        }
    }

    /// Counts one answered request (used by the server; public so other front ends can feed the same
    /// metrics). `route` is a template or `HTTPMetrics.unmatchedRoute`.
    public func record(route: String, status: Int, durationMicros: Int) {
        slot(for: route).record(status: status, durationMicros: durationMicros)
    }

    /// The metrics in the Prometheus text exposition format (version 0.0.4), ending in a newline.
    /// Serve with `Content-Type: text/plain; version=0.0.4; charset=utf-8`; append further families.
    public func renderPrometheus() -> String {
        let routes = slots.withLock { s in s.values.sorted { $0.route < $1.route } }
        var out = PrometheusText(reservingCapacity: 1024 + routes.count * 1024)
        out.family("http_requests_total", type: .counter, help: "HTTP requests answered, by route template and status.")
        for r in routes {
            for status in 100...599 {
                let n = r.count(status: status)
                if n > 0 { out.sample("http_requests_total", [("route", r.route), ("status", String(status))], n) }
            }
        }
        out.family(
            "http_request_duration_seconds", type: .histogram, help: "Time from the request headers to the queued response.")
        for r in routes {
            let total = r.total
            if total == 0 { continue }
            var cumulative = 0
            for (i, bound) in HTTPMetrics.bucketBoundsMicros.enumerated() {
                cumulative += r.bucket(i)
                out.sample("http_request_duration_seconds_bucket", [("route", r.route), ("le", PrometheusText.seconds(bound))], cumulative)
            }
            out.sample("http_request_duration_seconds_bucket", [("route", r.route), ("le", "+Inf")], total)
            out.sample("http_request_duration_seconds_sum", [("route", r.route)], PrometheusText.seconds(r.sumMicros))
            out.sample("http_request_duration_seconds_count", [("route", r.route)], total)
        }
        out.family("http_requests_in_flight", type: .gauge, help: "HTTP requests being handled or sent.")
        out.sample("http_requests_in_flight", [], inFlight)
        out.family(
            "http_daemon_messages_total", type: .counter,
            help: "libmicrohttpd log messages, by kind: client (a client reset, closed or sent a malformed request; not logged one by one) or other.")
        for kind in DaemonLog.Kind.allCases { out.sample("http_daemon_messages_total", [("kind", kind.rawValue)], daemonMessages(kind)) }
        return out.text
    }
}

/// Counters for one route template.
final class RouteMetrics: Sendable {
    let route: String
    private static let statusBase = 100
    private static let statusCount = 500  // 100...599
    private static let bucketBase = statusCount
    private static let bucketCount = HTTPMetrics.bucketBoundsMicros.count + 1  // + overflow
    private static let sumIndex = bucketBase + bucketCount
    private static let totalIndex = sumIndex + 1
    private static let cellCount = totalIndex + 1

    private let cells = AtomicCounters(count: RouteMetrics.cellCount)

    init(route: String) {
        self.route = route
    }

    func record(status: Int, durationMicros: Int) {
        let s = (100...599).contains(status) ? status : 500
        cells.add(1, at: s - RouteMetrics.statusBase)
        var b = 0
        let bounds = HTTPMetrics.bucketBoundsMicros
        while b < bounds.count && durationMicros > bounds[b] { b += 1 }
        cells.add(1, at: RouteMetrics.bucketBase + b)
        cells.add(max(0, durationMicros), at: RouteMetrics.sumIndex)
        cells.add(1, at: RouteMetrics.totalIndex)
    }

    func count(status: Int) -> Int { cells.load(status - RouteMetrics.statusBase) }
    func bucket(_ i: Int) -> Int { cells.load(RouteMetrics.bucketBase + i) }
    var sumMicros: Int { cells.load(RouteMetrics.sumIndex) }
    var total: Int { cells.load(RouteMetrics.totalIndex) }
}

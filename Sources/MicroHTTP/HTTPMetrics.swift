import Concurrency
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
    private let slots = Mutex<[String: RouteMetrics]>([:])
    let unmatched: RouteMetrics

    public init() {
        unmatched = RouteMetrics(route: HTTPMetrics.unmatchedRoute)
        slots.withLock { $0[HTTPMetrics.unmatchedRoute] = unmatched }
    }

    /// Requests received (headers read) and not yet completely answered, across all servers using this.
    public var inFlight: Int { inFlightCount.load(ordering: .relaxed) }

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
        var out = ""
        out.reserveCapacity(1024 + routes.count * 1024)
        out += "# HELP http_requests_total HTTP requests answered, by route template and status.\n"
        out += "# TYPE http_requests_total counter\n"
        for r in routes {
            let label = escapeLabel(r.route)
            for status in 100...599 {
                let n = r.count(status: status)
                if n > 0 { out += "http_requests_total{route=\"\(label)\",status=\"\(status)\"} \(n)\n" }
            }
        }
        out += "# HELP http_request_duration_seconds Time from the request headers to the queued response.\n"
        out += "# TYPE http_request_duration_seconds histogram\n"
        for r in routes {
            let total = r.total
            if total == 0 { continue }
            let label = escapeLabel(r.route)
            var cumulative = 0
            for (i, bound) in HTTPMetrics.bucketBoundsMicros.enumerated() {
                cumulative += r.bucket(i)
                out += "http_request_duration_seconds_bucket{route=\"\(label)\",le=\"\(seconds(bound))\"} \(cumulative)\n"
            }
            out += "http_request_duration_seconds_bucket{route=\"\(label)\",le=\"+Inf\"} \(total)\n"
            out += "http_request_duration_seconds_sum{route=\"\(label)\"} \(seconds(r.sumMicros))\n"
            out += "http_request_duration_seconds_count{route=\"\(label)\"} \(total)\n"
        }
        out += "# HELP http_requests_in_flight HTTP requests being handled or sent.\n"
        out += "# TYPE http_requests_in_flight gauge\n"
        out += "http_requests_in_flight \(inFlight)\n"
        return out
    }
}

/// Microseconds as a decimal number of seconds without exponent ("0.0005", "2.5", "12.345678").
func seconds(_ micros: Int) -> String {
    let whole = micros / 1_000_000
    var frac = micros % 1_000_000
    if frac == 0 { return String(whole) }
    var digits = 6
    while frac % 10 == 0 { frac /= 10; digits -= 1 }
    let f = String(frac)
    return "\(whole)." + String(repeating: "0", count: digits - f.count) + f
}

private func escapeLabel(_ s: String) -> String {
    var out = ""
    for c in s.unicodeScalars {
        switch c {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        default: out.unicodeScalars.append(c)
        }
    }
    return out
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

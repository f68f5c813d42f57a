import Concurrency
import Observability
import Synchronization

/// libmicrohttpd's own log lines, kept from flooding the log: MHD writes a line for every client that
/// resets its connection or sends a request it refuses, which anyone can cause at will (about 11 000
/// lines in 5 s from one client, also with the access log off).
///
/// Each line is counted in its server's metrics (`http_daemon_messages_total`, by kind). Lines a
/// client causes (`Kind.client`: a reset or close mid-request, a failed send to a client gone, a
/// malformed request MHD answered itself) are debug lines only. The others stay warnings, at most
/// `burst` of them per `interval` for the whole process. Whatever was counted and not written as a
/// warning in an interval is told in one summary line when it ends (`"libmicrohttpd messages"`, info),
/// and at the latest when a server stops.
enum DaemonLog {
    enum Kind: String, CaseIterable, Sendable {
        /// Caused by a client: not the server's problem, and anybody can repeat it.
        case client
        /// Anything else (resource limits, internal errors): worth a warning.
        case other
    }

    /// Warnings written verbatim per interval; the rest are counted into the summary.
    static let burst = 5
    static let interval = Duration.seconds(10)

    private struct Window {
        var warnings = 0
        var client = 0
        var suppressed = 0
        var summaryScheduled = false
    }
    private static let window = Mutex(Window())

    /// The starts of MHD 0.9.75's messages that a client causes (connection.c, daemon.c).
    static let clientPrefixes = [
        "Socket has been disconnected when reading request",
        "Connection socket is closed when reading request",
        "Connection was closed by remote side with incomplete request",
        "Failed to send data in request for",
        "Failed to send the response headers for the request for",
        "Failed to send the response body for the request for",
        "Failed to send the chunked response body for the request for",
        "Failed to send the footers for the request for",
        "Error processing request (HTTP response code is",
        "Too late to send an error response",
        "Too late for error response",
        "Too large value of 'Content-Length' header",
        "Failed to parse `Content-Length' header",
        "Received HTTP/1.1 request without `Host' header",
        "Not enough memory in pool to allocate header record",
        "Not enough memory in pool to parse cookies",
        "Error accepting connection",
        "Connection rejected by application",
    ]

    static func kind(of message: String) -> Kind {
        clientPrefixes.contains { message.hasPrefix($0) } ? .client : .other
    }

    /// One message of MHD's (without its line end), for the server whose metrics are `metrics`.
    static func record(_ message: String, metrics: HTTPMetrics) {
        let kind = kind(of: message)
        metrics.daemonMessage(kind)
        enum Outcome { case warn, debug, counted }
        let (outcome, schedule) = window.withLock { w -> (Outcome, Bool) in
            let outcome: Outcome
            if kind == .client {
                w.client += 1
                outcome = .debug
            } else if w.warnings < burst {
                w.warnings += 1
                outcome = .warn
            } else {
                w.suppressed += 1
                outcome = .counted
            }
            let schedule = !w.summaryScheduled
            w.summaryScheduled = true
            return (outcome, schedule)
        }
        if schedule { TimerThread.shared.schedule(after: interval) { flush() } }
        switch outcome {
        case .warn: Log.write(.warn, "libmicrohttpd", [("detail", .string(message))])
        case .debug: if Log.isEnabled(.debug) { Log.write(.debug, "libmicrohttpd", [("detail", .string(message))]) }
        case .counted: break
        }
    }

    /// Ends the interval: one summary line when client messages or warnings beyond the burst were
    /// counted in it (a timer at its end, and every server's `stop`).
    static func flush() {
        let ended = window.withLock { w -> Window in
            defer { w = Window() }
            return w
        }
        guard ended.client > 0 || ended.suppressed > 0 else { return }
        Log.write(
            .info, "libmicrohttpd messages",
            [
                ("client_caused", .int(ended.client)), ("warnings_not_written", .int(ended.suppressed)),
                ("metric", .string("http_daemon_messages_total")),
            ])
    }
}

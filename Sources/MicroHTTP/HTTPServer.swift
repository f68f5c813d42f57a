internal import CMicroHTTPD
import Concurrency
import Observability
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why `HTTPServer.start()` failed, in one human-readable line.
public struct HTTPServerError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public var description: String { message }
}

/// libmicrohttpd, one daemon per worker thread in external mode (epoll), each run by its own
/// `EventLoop`; all of them accept from one listening socket, and one connection's callbacks always
/// run on the loop that accepted it. Running the loops ourselves is what lets work queued during a
/// loop turn run once at its end (`LoopTurn`: the group commit of a turn's events). Lifecycle:
/// `init` → `start()` → (`beginDraining()`) → `stop(drainTimeout:)`.
public final class HTTPServer: Sendable {
    private enum Phase {
        case idle
        case running(loops: [EventLoop], core: Unmanaged<ServerCore>)
        case stopping
        case stopped
    }

    /// `@unchecked Sendable` invariant: the loops' daemons are only used under `state`'s lock or after
    /// being moved out of it by exactly one `stop` call; MHD's daemon API is thread-safe for the calls
    /// made (`get_daemon_info`, `stop_daemon` once, after the loop stopped).
    private struct State: @unchecked Sendable {
        var phase: Phase = .idle
    }

    private let configuration: HTTPServerConfiguration
    private let router: Router
    private let metrics: HTTPMetrics
    private let state = Mutex(State())
    private let boundPort = Atomic<Int>(0)
    private let drainingFlag = Atomic<Bool>(false)
    /// How long in-flight must stay at zero during a drain before idle keep-alive connections are cut.
    static let drainQuietMicros = 200_000

    public init(configuration: HTTPServerConfiguration, router: Router, metrics: HTTPMetrics) {
        self.configuration = configuration
        self.router = router
        self.metrics = metrics
    }

    deinit {
        stop(drainTimeout: .zero)
    }

    /// The bound port (after `start()`; resolves port 0), 0 before.
    public var port: Int { boundPort.load(ordering: .relaxed) }

    /// Streaming responses open now.
    public var openStreamCount: Int {
        state.withLock { s in
            if case .running(_, let core) = s.phase { return core.takeUnretainedValue().streams.count }
            return 0
        }
    }

    /// Whether `beginDraining()` (or `stop`) was called.
    public var isDraining: Bool { drainingFlag.load(ordering: .relaxed) }

    /// Binds and starts serving. Freezes the router.
    /// - Throws: `HTTPServerError` for an invalid configuration, a bad host, a port in use, …
    public func start() throws {
        let c = configuration
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        guard inet_pton(AF_INET, c.host, &address.sin_addr) == 1 else {
            throw HTTPServerError(message: "invalid host \"\(c.host)\": an IPv4 address such as 127.0.0.1 or 0.0.0.0 is required")
        }
        guard (0...65535).contains(c.port) else { throw HTTPServerError(message: "invalid port \(c.port): must be 0…65535") }
        address.sin_port = in_port_t(UInt16(c.port).bigEndian)
        guard c.threads >= 1 && c.threads <= 1024 else { throw HTTPServerError(message: "invalid thread count \(c.threads): must be 1…1024") }
        guard c.maxBodyBytes >= 0 else { throw HTTPServerError(message: "invalid body limit \(c.maxBodyBytes)") }
        guard c.listenBacklog >= 1 else { throw HTTPServerError(message: "invalid listen backlog \(c.listenBacklog)") }
        guard c.idleTimeoutSeconds >= 0 else { throw HTTPServerError(message: "invalid idle timeout \(c.idleTimeoutSeconds)") }
        guard c.headerMemoryLimit >= 4096 else {
            throw HTTPServerError(message: "invalid header memory limit \(c.headerMemoryLimit): at least 4096 bytes")
        }
        guard c.maxQueryParameters >= 1 && c.maxQueryParameters <= 1024 else {
            throw HTTPServerError(message: "invalid query parameter limit \(c.maxQueryParameters): must be 1…1024")
        }
        guard c.connectionLimit >= c.threads else {
            throw HTTPServerError(message: "invalid connection limit \(c.connectionLimit): at least one per thread (\(c.threads))")
        }

        // Keep MHD's connection limit below the open-file limit (listen socket, epoll and ITC fds per
        // worker, the database files and some slack stay free).
        let files = raiseOpenFileLimit()
        if files.after > files.before {
            Log.write(.info, "raised the open-file limit", [("from", .int(files.before)), ("to", .int(files.after))])
        }
        let reserve = 64 + 4 * c.threads
        var connectionLimit = c.connectionLimit
        if files.after - reserve < connectionLimit {
            connectionLimit = max(c.threads, files.after - reserve)
            Log.write(
                .warn, "connection limit lowered to fit the open-file limit",
                [
                    ("configured", .int(c.connectionLimit)), ("effective", .int(connectionLimit)),
                    ("open_file_limit", .int(files.after)),
                ])
        }
        // A write to a closed socket or stdout pipe must not kill the process (MHD uses MSG_NOSIGNAL,
        // log writes do not).
        signal(SIGPIPE, SIG_IGN)
        DaemonAnswers.install()

        try state.withLock { s in
            guard case .idle = s.phase else { throw HTTPServerError(message: "the server was already started") }
            let table = RouteTable(entries: router.freeze(), metrics: metrics)
            let core = ServerCore(table: table, metrics: metrics, configuration: c, draining: drainingFlag.load(ordering: .relaxed))
            let context = Unmanaged.passRetained(core)
            let cls = context.toOpaque()
            // External mode: no thread of MHD's own; `EventLoop` runs each daemon.
            let flags =
                MHD_USE_EPOLL.rawValue | MHD_USE_ITC.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue | MHD_USE_ERROR_LOG.rawValue
            // The first daemon binds the listening socket; the others accept from that same socket
            // (as MHD's own thread pool would), and each gets its share of the connection limit.
            var daemons: [OpaquePointer] = []
            var listenSocket: Int32 = -1
            var failure: String?
            for index in 0..<c.threads {
                let share = connectionLimit / c.threads + (index < connectionLimit % c.threads ? 1 : 0)
                let daemon: OpaquePointer? = withUnsafeMutablePointer(to: &address) { addr in
                    var options: [MHD_OptionItem] = [
                        // First, so errors while applying the others and binding reach the log.
                        cmhd_option_logger(daemonLogCallback, cls),
                        index == 0 ? cmhd_option_sock_addr(addr) : cmhd_option_int(.LISTEN_SOCKET, Int(listenSocket)),
                        cmhd_option_int(.CONNECTION_LIMIT, share),
                        cmhd_option_int(.LISTEN_BACKLOG_SIZE, c.listenBacklog),
                        cmhd_option_int(.CONNECTION_TIMEOUT, c.idleTimeoutSeconds),
                        cmhd_option_int(.CONNECTION_MEMORY_LIMIT, c.headerMemoryLimit),
                        cmhd_option_uri_log(uriLogCallback, cls),
                        cmhd_option_notify_completed(requestCompletedCallback, cls),
                        cmhd_option_identity_unescape(),
                        cmhd_option_end(),
                    ]
                    let savedErrno = errno
                    errno = 0
                    let d = options.withUnsafeMutableBufferPointer { opts in
                        cmhd_start_daemon(UInt32(flags), UInt16(c.port), acceptPolicyCallback, cls, accessHandlerCallback, cls, opts.baseAddress)
                    }
                    if d != nil { errno = savedErrno }
                    return d
                }
                guard let daemon else {
                    let code = errno
                    failure = core.lastDaemonMessage.withLock { $0 } ?? (code != 0 ? String(cString: strerror(code)) : "unknown error")
                    break
                }
                daemons.append(daemon)
                if index == 0 { listenSocket = cmhd_daemon_listen_fd(daemon) }
            }
            var loops: [EventLoop] = []
            if failure == nil {
                for (index, daemon) in daemons.enumerated() {
                    guard let loop = EventLoop(daemon: daemon, name: "http-loop-\(index)", afterTurn: { core.turnEnded() }) else {
                        failure = "cannot start the event loop threads"
                        break
                    }
                    loops.append(loop)
                }
            }
            if let failure {
                for loop in loops { loop.stop() }
                Self.stopDaemons(daemons)
                context.release()
                throw HTTPServerError(message: "cannot listen on \(c.host):\(c.port): \(failure)")
            }
            s.phase = .running(loops: loops, core: context)
            boundPort.store(Int(cmhd_bound_port(daemons[0])), ordering: .relaxed)
        }
    }

    /// Stops daemons whose loops ended: those sharing the first one's listening socket give it up
    /// first (MHD_quiesce_daemon), so that only the first closes it.
    private static func stopDaemons(_ daemons: [OpaquePointer]) {
        for daemon in daemons.dropFirst() {
            _ = MHD_quiesce_daemon(daemon)
            MHD_stop_daemon(daemon)
        }
        if let first = daemons.first { MHD_stop_daemon(first) }
    }

    /// From now on, refuse new connections (accept policy) and send `Connection: close` with every
    /// response, so keep-alive clients go away after their current request.
    public func beginDraining() {
        drainingFlag.store(true, ordering: .relaxed)
        state.withLock { s in
            if case .running(_, let core) = s.phase {
                core.takeUnretainedValue().draining.store(true, ordering: .relaxed)
            }
        }
    }

    /// Drains, then stops: waits until no connection is open, or no request has been in flight for
    /// 200 ms (idle keep-alive connections are then cut), or `drainTimeout` passed; then
    /// `MHD_stop_daemon` closes what is left and joins the workers. Idempotent; safe from any thread.
    public func stop(drainTimeout: Duration) {
        beginDraining()
        let running: ([EventLoop], Unmanaged<ServerCore>)? = state.withLock { s in
            guard case .running(let loops, let c) = s.phase else { return nil }
            s.phase = .stopping
            return (loops, c)
        }
        guard let (loops, context) = running else { return }
        let core = context.takeUnretainedValue()
        // Streams never go idle by themselves: end them now (after what their owners queued, such as
        // a final shutdown event), so the drain below sees them complete.
        core.streams.endAll()
        let (secs, attos) = drainTimeout.components
        let timeoutMicros = max(0, Int(secs) * 1_000_000 + Int(attos / 1_000_000_000_000))
        let drainStart = monotonicMicros()
        let deadline = drainStart + timeoutMicros
        // Woken by every loop turn while draining (`ServerCore.turnEnded`): a connection closed or a
        // request completed; otherwise asleep until the quiet period or the deadline ends.
        var turns = core.drainProgress.withLock { $0 }
        while true {
            let now = monotonicMicros()
            if now >= deadline || loops.allSatisfy({ $0.connections == 0 }) { break }
            var wakeAt = deadline
            if core.inFlight.load(ordering: .relaxed) == 0 {
                let quietSince = max(drainStart, core.lastCompletionMicros.load(ordering: .relaxed))
                if now - quietSince >= HTTPServer.drainQuietMicros { break }
                wakeAt = min(deadline, quietSince + HTTPServer.drainQuietMicros)
            }
            let seen = turns
            turns = core.drainProgress.wait(until: { $0 != seen }, timeout: .microseconds(wakeAt - now)) { $0 } ?? seen
        }
        // MHD aborts when stopped with a suspended connection: whatever still waits for its deferred
        // response is answered now (the connection is closed by the stop, so the client sees no answer
        // and may retry; idempotent event ids make that safe).
        let abandoned = core.parked.settleAll()
        if abandoned > 0 {
            Log.write(.warn, "requests still waiting at shutdown were abandoned", [("count", .int(abandoned))])
        }
        // The loops end after their current turn (whose deferred work, such as a group commit, runs
        // first); MHD_stop_daemon then closes what is left on the stopping thread.
        for loop in loops { loop.stop() }
        Self.stopDaemons(loops.map(\.daemon))
        core.peerMonitor.stop()
        DaemonLog.flush()
        context.release()
        state.withLock { $0.phase = .stopped }
    }
}

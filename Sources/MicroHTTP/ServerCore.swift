internal import CMicroHTTPD
import Concurrency
import Observability
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Everything the MHD callbacks need, immutable after start except the atomics. Passed to MHD as the
/// callback context (retained by `HTTPServer` from start until after `MHD_stop_daemon`). Tests drive
/// its request lifecycle through a fake connection (TestSupport's `FakeConnectionDriver`).
@_spi(Testing) public final class ServerCore: Sendable {
    let responder: Responder
    let metrics: HTTPMetrics
    let maxBodyBytes: Int
    let maxQueryArguments: Int
    /// MHD's per-connection memory pool (`headerMemoryLimit`).
    let headerMemory: Int
    let accessLog: Bool
    let gzipMinimumBytes: Int
    let draining: Atomic<Bool>
    /// Requests of this server between the first access-handler call and NOTIFY_COMPLETED.
    let inFlight = Atomic<Int>(0)
    /// While draining: counts the loops' turns (each may have closed connections or completed
    /// requests), so that `HTTPServer.stop` waits on it instead of polling.
    let drainProgress = ConditionLock<UInt64>(0)
    /// While draining: when a request last completed (monotonic µs), for the drain's quiet period.
    let lastCompletionMicros = Atomic<Int>(0)
    /// The last MHD log line, for start-up errors ("Failed to bind to port …").
    let lastDaemonMessage = Mutex<String?>(nil)
    /// Requests suspended while their deferred response is produced.
    let parked: ParkedRequests
    /// Long-lived streaming responses still open.
    let streams = OpenStreams()
    /// Notices clients of waiting streams (and long waits) that go away.
    let peerMonitor = StreamPeerMonitor()
    /// What all streams may buffer together.
    let streamBudget: StreamBufferBudget
    /// Worker threads on which MHD just failed to build an answer's header section (see
    /// `answerHeaderFailed`); at most one entry per worker, and only for an instant.
    private let unansweredOn = Mutex<[pthread_t]>([])

    /// Bytes of MHD's pool (0.9.75) per header field: a `struct MHD_HTTP_Header` record.
    static let fieldRecordBytes = 48
    /// Bytes of the pool a head must leave free: the largest header section of an answer (status line,
    /// Date, Content-Type, Content-Length, X-Request-Id, ETag, Cache-Control, WWW-Authenticate,
    /// Connection) with room to spare, and for a stream the buffer of its first chunks.
    static let answerReserve = 1024

    init(table: RouteTable, metrics: HTTPMetrics, configuration: HTTPServerConfiguration, draining: Bool) {
        self.responder = Responder(table: table)
        self.metrics = metrics
        self.maxBodyBytes = configuration.maxBodyBytes
        self.maxQueryArguments = configuration.maxQueryParameters
        self.headerMemory = configuration.headerMemoryLimit
        self.accessLog = configuration.accessLog
        self.gzipMinimumBytes = configuration.gzipMinimumBytes
        self.draining = Atomic(draining)
        self.parked = ParkedRequests(monitor: peerMonitor)
        self.streamBudget = StreamBufferBudget(limit: configuration.streamBufferBudgetBytes)
    }

    /// A core for `router`'s routes as they are now, outside any server (socket-free tests).
    @_spi(Testing) public convenience init(router: Router, configuration: HTTPServerConfiguration) {
        let metrics = HTTPMetrics()
        self.init(
            table: RouteTable(entries: router.entries, metrics: metrics), metrics: metrics, configuration: configuration, draining: false)
    }
}

/// Per-request state in MHD's `*req_cls`, created by the URI log callback and released in
/// NOTIFY_COMPLETED (which also runs on timeouts, aborts and shutdown). Confined to the connection's
/// worker thread: MHD never runs one connection's callbacks concurrently. Everything the request
/// accumulates is in its machine's state.
@_spi(Testing) public final class RequestState {
    let startMicros: Int
    /// The query of the request line as received (after `?`, not decoded); libmicrohttpd never sees it.
    let query: [UInt8]
    /// How many query arguments it has.
    let queryArguments: Int
    var machine: RequestStateMachine

    init(startMicros: Int, query: [UInt8], queryArguments: Int, machine: RequestStateMachine) {
        self.startMicros = startMicros
        self.query = query
        self.queryArguments = queryArguments
        self.machine = machine
    }
}

@available(*, unavailable, message: "RequestState is confined to its connection's worker thread")
extension RequestState: Sendable {}

// MARK: - C callbacks (global constants: they capture nothing; the context arrives as `cls`)

let accessHandlerCallback: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadSize, reqCls in
    guard let cls, let connection, let url, let method, let uploadSize, let reqCls else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let request: RequestState
    if let existing = reqCls.pointee {
        request = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
    } else {
        // Without the URI log callback (not expected): start here.
        request = core.begin(query: [])
        reqCls.pointee = Unmanaged.passRetained(request).toOpaque()
    }
    // Body bytes are always consumed.
    let upload = uploadData.map { UnsafeRawBufferPointer(start: $0, count: uploadSize.pointee) }
    uploadSize.pointee = 0
    let proceed = core.handle(MHDConnection(pointer: connection), request, method: method, url: url, version: version, upload: upload)
    if proceed && request.machine.startStallWatch() { StalledBodies.watch(request, connection) }
    return proceed ? .YES : .NO
}

/// A new request line (before MHD parses its query arguments): takes a copy of the query and hides it
/// from MHD (`cmhd_hide_query`: MHD would keep every argument in the connection's memory pool, and
/// cannot answer when that allocation fails), counts its arguments and creates the request's state,
/// which MHD hands back as `*req_cls`.
let uriLogCallback: cmhd_uri_log_callback = { cls, uri, _ in
    guard let cls else { return nil }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    var query: [UInt8] = []
    if let uri, let q = cmhd_query_of(uri) {
        query = Array(UnsafeRawBufferPointer(start: q, count: strlen(q)))
        cmhd_hide_query(q)
    }
    return Unmanaged.passRetained(core.begin(query: query)).toOpaque()
}

let requestCompletedCallback: MHD_RequestCompletedCallback = { cls, connection, reqCls, termination in
    guard let cls else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    // Taken on every failed completion, so the note never outlives the request it was made for.
    let unanswered = termination == .REQUEST_TERMINATED_WITH_ERROR && core.takeUnanswered()
    guard let reqCls, let p = reqCls.pointee else { return }
    let state = Unmanaged<RequestState>.fromOpaque(p)
    if unanswered, let connection {
        let request = state.takeUnretainedValue()
        core.answerOnSocket(request.machine.answerNotSent(), socket: cmhd_connection_fd(connection))
    }
    core.completed(state.takeUnretainedValue())
    state.release()
    reqCls.pointee = nil
}

extension ServerCore {
    /// MHD's message when, in the START_REPLY state, the answer's header section does not fit in what
    /// the head left of the connection's memory pool (connection.c, `build_header_response`): MHD then
    /// closes the connection without sending anything. It logs this line and then, on the same worker,
    /// completes the request (NOTIFY_COMPLETED, `WITH_ERROR`) with the socket still open. This line is
    /// the only sign of it libmicrohttpd 0.9.75 gives (no connection information or callback tells an
    /// unsent answer from a client that went away), so the log callback notes it for the completion,
    /// which turns it into the machine's `answerNotSent` event.
    static let answerHeaderFailed = "Closing connection (failed to create response header)"

    /// The log callback saw `answerHeaderFailed` on this worker.
    func noteUnanswered() {
        let me = pthread_self()
        unansweredOn.withLock { if !$0.contains(me) { $0.append(me) } }
    }

    /// Whether `noteUnanswered` ran on this worker since (and forgets it).
    func takeUnanswered() -> Bool {
        let me = pthread_self()
        return unansweredOn.withLock { list in
            guard let i = list.firstIndex(of: me) else { return false }
            list.remove(at: i)
            return true
        }
    }

    /// Carries out the machine's `answerOnSocket`: writes the complete answer to `socket` itself (it
    /// needs none of MHD's pool), and shuts the socket down when the reason says so (MHD then closes
    /// the connection at its next turn). Any other action is ignored.
    func answerOnSocket(_ action: RequestStateMachine.Action, socket fd: Int32) {
        guard case .answerOnSocket(let problem, let requestId, let reason) = action, fd >= 0 else { return }
        let id = requestId ?? RequestID.next()
        let sent = writeProblem(problem, requestId: id, to: fd)
        let message =
            switch reason {
            case .bodyStalled: "the head left no memory to read the body; sent \(problem.status) instead"
            case .answerDidNotFit: "the answer did not fit in the connection's memory; sent \(problem.status) instead"
            }
        Log.write(.warn, message, [("request_id", .string(id)), ("sent", .bool(sent))])
        if reason == .bodyStalled { _ = shutdown(fd, Int32(SHUT_RDWR)) }
    }
}

/// Refuses new connections while draining (MHD closes them at once; clients see a reset instead of
/// hanging in the backlog). Replaces MHD_quiesce_daemon, which can abort with a thread pool and epoll.
let acceptPolicyCallback: MHD_AcceptPolicyCallback = { cls, _, _ in
    guard let cls else { return .YES }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    return core.draining.load(ordering: .relaxed) ? .NO : .YES
}

/// MHD's error log, as JSON `warn` lines instead of raw stderr text.
let daemonLogCallback: MHD_LogCallback = { cls, format, args in
    guard let format, let args else { return }
    var buffer = [CChar](repeating: 0, count: 512)
    let n = buffer.withUnsafeMutableBufferPointer { vsnprintf($0.baseAddress, $0.count, format, args) }
    guard n >= 0 else { return }
    var message = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    while message.last == "\n" || message.last == "\r" { message.removeLast() }
    if let cls {
        let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
        core.lastDaemonMessage.withLock { $0 = message }
        if message.hasPrefix(ServerCore.answerHeaderFailed) { core.noteUnanswered() }
    }
    if let reason = ExpectedConnectionClose.take(for: message) {
        switch reason {
        case .peerClosed: Log.write(.debug, "stream closed by its client")
        case .readerTooSlow: Log.write(.info, "stream cut: its reader fell behind (it may reconnect with Last-Event-ID)")
        case .budgetExhausted: Log.write(.warn, "stream cut: the server's budget for buffered stream bytes is spent")
        }
        return
    }
    guard let cls else { return Log.write(.warn, "libmicrohttpd", [("detail", .string(message))]) }
    DaemonLog.record(message, metrics: Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().metrics)
}

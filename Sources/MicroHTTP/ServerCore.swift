internal import CMicroHTTPD
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Everything the MHD callbacks need, immutable after start except the atomics. Passed to MHD as the
/// callback context (retained by `HTTPServer` from start until after `MHD_stop_daemon`).
final class ServerCore: Sendable {
    let responder: Responder
    let metrics: HTTPMetrics
    let maxBodyBytes: Int
    let maxQueryArguments: Int
    let accessLog: Bool
    let draining: Atomic<Bool>
    /// Requests of this server between the first access-handler call and NOTIFY_COMPLETED.
    let inFlight = Atomic<Int>(0)
    /// The last MHD log line, for start-up errors ("Failed to bind to port …").
    let lastDaemonMessage = Mutex<String?>(nil)
    /// Requests suspended while their deferred response is produced.
    let parked = ParkedRequests()
    /// Long-lived streaming responses still open.
    let streams = OpenStreams()
    /// Notices clients of waiting streams that go away.
    let peerMonitor = StreamPeerMonitor()

    init(table: RouteTable, metrics: HTTPMetrics, configuration: HTTPServerConfiguration, draining: Bool) {
        self.responder = Responder(table: table)
        self.metrics = metrics
        self.maxBodyBytes = configuration.maxBodyBytes
        self.maxQueryArguments = configuration.maxQueryParameters
        self.accessLog = configuration.accessLog
        self.draining = Atomic(draining)
    }
}

/// Per-request state in MHD's `*req_cls`, created by the URI log callback and released in
/// NOTIFY_COMPLETED (which also runs on timeouts, aborts and shutdown). Confined to the connection's
/// worker thread: MHD never runs one connection's callbacks concurrently.
final class RequestState {
    let startMicros: Int
    /// How many query arguments the request line had (before the cap).
    let queryArguments: Int
    var machine: RequestStateMachine
    var body: [UInt8] = []
    /// While parked: the promise that will carry the response, and what labels it.
    var deferred: (promise: ResponsePromise, target: RouteTable.Target, requestId: String)?
    /// The body of a streaming response; told when the connection completes.
    var stream: EventStream?

    init(startMicros: Int, queryArguments: Int, machine: RequestStateMachine) {
        self.startMicros = startMicros
        self.queryArguments = queryArguments
        self.machine = machine
    }
}

// MARK: - C callbacks (global constants: they capture nothing; the context arrives as `cls`)

let accessHandlerCallback: MHD_AccessHandlerCallback = { cls, connection, url, method, version, uploadData, uploadSize, reqCls in
    guard let cls, let connection, let url, let method, let uploadSize, let reqCls else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    return core.handle(connection, url, method, version, uploadData, uploadSize, reqCls)
}

/// A new request line (before MHD parses its query arguments): caps the arguments and creates the
/// request's state, which MHD hands back as `*req_cls`.
let uriLogCallback: cmhd_uri_log_callback = { cls, uri, _ in
    guard let cls else { return nil }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let arguments = uri.map { cmhd_cap_query_arguments($0, core.maxQueryArguments) } ?? 0
    return Unmanaged.passRetained(core.begin(queryArguments: arguments)).toOpaque()
}

let requestCompletedCallback: MHD_RequestCompletedCallback = { cls, _, reqCls, _ in
    guard let cls, let reqCls, let p = reqCls.pointee else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue()
    let state = Unmanaged<RequestState>.fromOpaque(p)
    state.takeUnretainedValue().stream?.markCompleted()
    state.release()
    reqCls.pointee = nil
    core.inFlight.wrappingSubtract(1, ordering: .relaxed)
    core.metrics.requestFinished()
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
        Unmanaged<ServerCore>.fromOpaque(cls).takeUnretainedValue().lastDaemonMessage.withLock { $0 = message }
    }
    Log.write(.warn, "libmicrohttpd", [("detail", .string(message))])
}

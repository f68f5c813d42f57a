internal import CMicroHTTPD
import Concurrency
import Dispatch
import Synchronization

/// The answer to a request whose handler returned `HTTPResponse.deferred`: settled exactly once,
/// from any thread (e.g. a storage writer after its commit). Meanwhile the connection is parked with
/// `MHD_suspend_connection`, so the worker thread serves other connections instead of blocking.
///
/// Settling after the server gave up on the request (shutdown) is a harmless no-op.
public final class ResponsePromise: Sendable, PeerWatcher {
    /// `@unchecked Sendable`: the connection pointer is only used under the promise's lock, to resume
    /// the connection this promise parked (MHD_resume_connection is safe from any thread).
    private struct State: @unchecked Sendable {
        var response: HTTPResponse?
        var settled = false
        /// The connection suspended by `parkUnlessSettled` and not resumed yet.
        var parkedConnection: OpaquePointer?
        /// Runs when the client goes away while the request is parked (`onPeerClosed`).
        var peerClosedHandler: (@Sendable () -> Void)?
        /// The parked socket and the peer monitor's token for it (0: not watched).
        var watchedSocket: Int32 = -1
        var watchToken: UInt = 0
    }

    private let state = Mutex(State())
    /// For log lines about a failure.
    let template: String
    let requestId: String
    /// Connection-bound promises are registered here while parked (for shutdown).
    private let registry: ParkedRequests?
    /// Detached promises (`Router.respond`) signal this when settled.
    private let settledSignal: DispatchSemaphore?

    init(template: String, requestId: String, registry: ParkedRequests?) {
        self.template = template
        self.requestId = requestId
        self.registry = registry
        self.settledSignal = registry == nil ? DispatchSemaphore(value: 0) : nil
    }

    /// Asks to be told when the client closes its connection while the request is parked (a long wait,
    /// such as a long-poll): `handler` runs once, on another thread, and should settle the promise, which
    /// ends the request now instead of at the end of its wait. Call before the handler returns; a
    /// request that is not parked (answered at once) is never watched. Short waits (an event's commit)
    /// should not ask: watching costs two system calls.
    public func onPeerClosed(_ handler: @escaping @Sendable () -> Void) {
        state.withLock { $0.peerClosedHandler = handler }
    }

    func peerClosed() {
        let handler = state.withLock { s -> (@Sendable () -> Void)? in
            defer { s.peerClosedHandler = nil }
            return s.settled ? nil : s.peerClosedHandler
        }
        handler?()
    }

    /// Settles with `response`.
    public func succeed(_ response: HTTPResponse) {
        settle(Responder.checked(response, template: template))
    }

    /// Settles with the response for `error`: a `Problem` is its own response, anything else a logged 500.
    public func fail(_ error: any Error) {
        settle(Responder.response(for: error, template: template, requestId: requestId))
    }

    /// Settles with what `body` returns, or with the response for what it throws.
    public func complete(_ body: () throws -> HTTPResponse) {
        do { succeed(try body()) } catch { fail(error) }
    }

    private func settle(_ response: HTTPResponse) {
        let held = Self.heldResumes.current.flatMap { $0.depth > 0 ? $0 : nil }
        let (first, parked) = state.withLock { s -> (Bool, Bool) in
            guard !s.settled else { return (false, false) }
            s.settled = true
            s.response = response
            if s.parkedConnection != nil {
                if held != nil { return (true, true) }  // resumed when the `resumingTogether` block ends
                resumeParked(&s)
            }
            return (true, false)
        }
        if parked, let held { held.promises.append(self) }
        if first { settledSignal?.signal() }
    }

    /// Resumes the parked connection of a settled promise (exactly once; under the promise's lock).
    private func resumeParked(_ s: inout State) {
        guard s.settled, let connection = s.parkedConnection else { return }
        s.parkedConnection = nil
        registry?.remove(self)
        if s.watchToken != 0 {
            registry?.monitor?.unwatch(s.watchedSocket, token: s.watchToken)
            s.watchToken = 0
        }
        // Under the lock: the access handler parks only under it too, so a resume never precedes its
        // suspend, and a connection is resumed exactly once.
        MHD_resume_connection(connection)
    }

    /// Resumes the connection if the promise is settled and its connection still parked (a resume
    /// held back by `resumingTogether`, or at shutdown).
    func resumeIfSettled() {
        state.withLock { resumeParked(&$0) }
    }

    /// The promises this thread settled inside `resumingTogether`, whose connections wait for the
    /// end of the block.
    private final class HeldResumes {
        var depth = 0
        var promises: [ResponsePromise] = []
    }
    private static let heldResumes = ThreadLocal<HeldResumes, Never> { HeldResumes() }

    /// Runs `body`; the connections of the promises it settles on this thread are resumed together
    /// when it returns instead of one by one as they settle. For code that settles many promises in
    /// a row (a batch of answers): the workers that serve those connections wake once for most of
    /// them, not once each.
    public static func resumingTogether<T>(_ body: () throws -> T) rethrows -> T {
        let held = heldResumes.value
        held.depth += 1
        defer {
            held.depth -= 1
            if held.depth == 0 {
                for promise in held.promises { promise.resumeIfSettled() }
                held.promises.removeAll(keepingCapacity: true)
            }
        }
        return try body()
    }

    // MARK: - Server side

    /// Called by the access handler right after starting the deferred work: the response when it is
    /// already settled (answered at once), otherwise nil after suspending `connection`.
    func parkUnlessSettled(_ connection: OpaquePointer) -> HTTPResponse? {
        state.withLock { s in
            if s.settled { return s.response }
            if let registry, !registry.add(self) {
                // The server is stopping: nothing may be suspended any more.
                s.settled = true
                s.response = ParkedRequests.shutdownProblem.response
                return s.response
            }
            s.parkedConnection = connection
            if s.peerClosedHandler != nil, let monitor = registry?.monitor {
                s.watchedSocket = cmhd_connection_fd(connection)
                s.watchToken = monitor.watch(s.watchedSocket, self)
            }
            MHD_suspend_connection(connection)
            return nil
        }
    }

    /// The settled response (after MHD resumed the connection and called the access handler again).
    func settledResponse() -> HTTPResponse? {
        state.withLock { $0.settled ? $0.response : nil }
    }

    /// Blocks until settled (detached promises only: `Router.respond`).
    func wait() -> HTTPResponse {
        settledSignal?.wait()
        return settledResponse() ?? Problem.internalError().response
    }
}

/// The promises whose connections are suspended: before `MHD_stop_daemon` every one must be settled
/// (which resumes it), or MHD aborts.
final class ParkedRequests: Sendable {
    private struct Registry {
        var promises: [ObjectIdentifier: ResponsePromise] = [:]
        var closed = false
    }
    private let registry = Mutex(Registry())
    /// Watches the sockets of parked requests that asked for it (`ResponsePromise.onPeerClosed`).
    let monitor: StreamPeerMonitor?

    init(monitor: StreamPeerMonitor? = nil) {
        self.monitor = monitor
    }

    static let shutdownProblem = Problem.unavailable("The server is shutting down.", retryAfterSeconds: 1)

    /// Registers a promise about to park; false once `settleAll` ran (then it must not park).
    func add(_ promise: ResponsePromise) -> Bool {
        registry.withLock { r in
            if r.closed { return false }
            r.promises[ObjectIdentifier(promise)] = promise
            return true
        }
    }

    func remove(_ promise: ResponsePromise) {
        _ = registry.withLock { $0.promises.removeValue(forKey: ObjectIdentifier(promise)) }
    }

    /// Shutdown: settles every parked request with a 503 and refuses to park any more. The work behind
    /// them may still finish, but its answer is no longer delivered. Returns how many were settled.
    @discardableResult
    func settleAll() -> Int {
        let all = registry.withLock { r in
            r.closed = true
            defer { r.promises.removeAll() }
            return Array(r.promises.values)
        }
        for promise in all {
            promise.fail(Self.shutdownProblem)
            promise.resumeIfSettled()  // settled already, its resume held back by another thread
        }
        return all.count
    }
}

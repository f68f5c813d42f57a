internal import CMicroHTTPD
import Concurrency
import Observability
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The body of a long-lived response (Server-Sent Events): bytes written from any thread, sent as a
/// chunked body without holding a worker thread while there is nothing to send.
///
/// MHD pulls the body through a reader callback on the connection's worker thread. With nothing
/// pending, the reader suspends the connection (a reader returning 0 without suspending busy-loops a
/// core); `send` resumes it, but only when the reader suspended it (resuming a connection that is not
/// suspended is undefined in MHD). Both steps run under one lock, so no wake-up is lost.
///
/// A stream ends when its owner calls `finish` (pending bytes are sent first), when the server stops,
/// when the client goes away, or when a reader is too slow: more than `maxPendingBytes` waiting closes
/// the connection at once, so one slow client can never hold memory or delay other streams. What the
/// stream holds is only what MHD has not taken yet (bytes handed to MHD leave the buffer at once), and
/// every stream of the server draws on one `StreamBufferBudget`: a stream whose next bytes would take
/// the total over it is cut the same way.
public final class EventStream: Sendable, PeerWatcher {
    /// `@unchecked Sendable` invariant: `connection` is only used under the stream's lock, and only while
    /// `completed` is false (MHD frees the connection after NOTIFY_COMPLETED, which sets it).
    private struct State: @unchecked Sendable {
        var connection: OpaquePointer?
        /// The connection's socket: shut down to drop a reader that is too slow (or gone).
        var socket: Int32 = -1
        /// The peer monitor's token for `socket` (0: not watched).
        var watchToken: UInt = 0
        /// Bytes not handed to MHD yet, oldest first, from `sent` on.
        var pending: [UInt8] = []
        /// Bytes at the front of `pending` already handed to MHD (dropped at the next `send`).
        var sent = 0
        /// The reader suspended the connection and nobody resumed it yet.
        var suspended = false
        /// No more bytes are accepted; the reader ends the body once `pending` is sent.
        var ending = false
        /// Why the reader aborts the connection: too slow a reader, or a client already gone.
        var cut: CutReason?
        /// The connection completed (NOTIFY_COMPLETED): nothing may touch it any more.
        var completed = false
        var lastWriteMicros: Int
        var onClose: (@Sendable (EventStream) -> Void)?
    }

    /// Why a stream was cut rather than ended.
    enum CutReason: Sendable {
        /// The client closed its end (a normal disconnect).
        case peerClosed
        /// The reader left more than `maxPendingBytes` unread.
        case readerTooSlow
        /// The server's buffered stream bytes reached their budget.
        case budgetExhausted
    }

    private let state: Mutex<State>
    /// Bytes allowed to wait for a slow reader before the stream is closed.
    public let maxPendingBytes: Int
    /// Where this stream is registered while open (nil in socket-free tests).
    private let registry: OpenStreams?
    /// Tells this stream when its client closes while it waits.
    private let monitor: StreamPeerMonitor?
    /// The bytes all streams of the server may hold together (nil: only `maxPendingBytes` bounds).
    private let budget: StreamBufferBudget?

    init(maxPendingBytes: Int, registry: OpenStreams?, monitor: StreamPeerMonitor?, budget: StreamBufferBudget? = nil) {
        self.maxPendingBytes = maxPendingBytes
        self.registry = registry
        self.monitor = monitor
        self.budget = budget
        self.state = Mutex(State(lastWriteMicros: monotonicMicros()))
    }

    /// Queues `bytes`; false when the stream is closed or ending (then nothing was queued). More than
    /// `maxPendingBytes` waiting, or the server's budget for stream bytes spent, closes the stream (and
    /// answers false): the client reconnects with `Last-Event-ID` and gets the newest event.
    @discardableResult
    public func send(_ bytes: [UInt8]) -> Bool {
        state.withLock { s in
            guard !s.ending, !s.completed else { return false }
            guard reserve(bytes.count, &s) else { return false }
            s.pending.append(contentsOf: bytes)
            s.lastWriteMicros = monotonicMicros()
            wake(&s)
            return true
        }
    }

    /// Queues `bytes` (when given) as the last ones, then ends the body. Idempotent. Bytes over the
    /// limits are not queued (the body then just ends).
    public func finish(with bytes: [UInt8]? = nil) {
        state.withLock { s in
            guard !s.ending, !s.completed else { return }
            if let bytes, reserve(bytes.count, &s) { s.pending.append(contentsOf: bytes) }
            guard !s.completed, s.cut == nil else { return }
            s.ending = true
            wake(&s)
        }
    }

    /// Under the lock: makes room for `count` more bytes, or cuts the stream and answers false. The
    /// prefix MHD already took is dropped first, so the buffer never holds more than it may.
    private func reserve(_ count: Int, _ s: inout State) -> Bool {
        if s.sent > 0 {
            s.pending.removeFirst(s.sent)
            s.sent = 0
        }
        if s.pending.count + count > maxPendingBytes {
            // A peer that reads nothing never lets MHD call the reader again.
            abort(&s, .readerTooSlow)
            return false
        }
        if let budget, !budget.take(count) {
            abort(&s, .budgetExhausted)
            return false
        }
        if s.pending.capacity < s.pending.count + count {
            // Grown by hand: the array's own doubling would hold up to twice the cap.
            s.pending.reserveCapacity(min(maxPendingBytes, max(s.pending.count + count, 2 * s.pending.capacity)))
        }
        return true
    }

    /// Under the lock: gives the budget back what the buffer holds and empties it.
    private func releaseBuffer(_ s: inout State) {
        budget?.give(s.pending.count - s.sent)
        s.pending = []
        s.sent = 0
    }

    /// Whether the stream still takes bytes.
    public var isOpen: Bool { state.withLock { !$0.ending && !$0.completed } }

    /// Microseconds (monotonic) of the last `send`, for heartbeats of idle streams.
    public var lastWriteMicros: Int { state.withLock { $0.lastWriteMicros } }

    /// Runs `handler` once, on any thread, when the connection is gone (client closed, finished, server
    /// stopped, too slow). Runs at once when that already happened.
    public func onClose(_ handler: @escaping @Sendable (EventStream) -> Void) {
        let runNow = state.withLock { s -> Bool in
            if s.completed { return true }
            s.onClose = handler
            return false
        }
        if runNow { handler(self) }
    }

    /// Under the lock: drops the connection now. Shutting the socket down makes MHD's next send fail, and
    /// MHD closes the connection. (MHD closes the descriptor only after NOTIFY_COMPLETED, which
    /// `completed` guards, so it is still this connection's.) Nothing buffered is kept for it.
    private func abort(_ s: inout State, _ reason: CutReason) {
        guard !s.completed, s.cut == nil else { return }
        s.cut = reason
        s.ending = true
        releaseBuffer(&s)
        if s.socket >= 0 { _ = shutdown(s.socket, Int32(SHUT_RDWR)) }
        wake(&s)
    }

    /// The client closed its end (seen by the peer monitor while the stream waited).
    func peerClosed() {
        state.withLock { abort(&$0, .peerClosed) }
    }

    /// Bytes held for MHD now (what the budget counts).
    var bufferedBytes: Int { state.withLock { $0.pending.count - $0.sent } }
    /// Bytes in the buffer, the already-sent prefix not dropped yet included (for tests).
    var heldBytes: Int { state.withLock { $0.pending.count } }

    /// Under the lock: resumes the connection when the reader parked it.
    private func wake(_ s: inout State) {
        guard s.suspended, let connection = s.connection, !s.completed else { return }
        s.suspended = false
        EventLoop.resume(connection)
    }

    // MARK: - Server side

    /// The connection whose response this stream is; set once, before the response is queued.
    func attach(_ connection: OpaquePointer) {
        let fd = cmhd_connection_fd(connection)
        let token = monitor?.watch(fd, self) ?? 0
        state.withLock {
            $0.connection = connection
            $0.socket = fd
            $0.watchToken = token
        }
        // The kernel's send buffer grows to megabytes for a peer that does not read; a fixed one keeps what
        // a slow reader can hold small, so the pending cap above is what decides.
        if fd >= 0 {
            var size = Int32(Self.socketSendBufferBytes)
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// The send buffer of a stream's socket (the kernel doubles it for its bookkeeping).
    static let socketSendBufferBytes = 32 * 1024

    /// MHD's reader callback (on the connection's worker thread): copies pending bytes into `buffer`,
    /// or suspends the connection and returns 0, or ends the body.
    func read(into buffer: UnsafeMutablePointer<CChar>, max: Int) -> Int {
        state.withLock { s in
            if let cut = s.cut {
                // MHD logs the error end as a warning of its own; the stream's log line says why.
                ExpectedConnectionClose.note(cut)
                return cmhd_end_with_error()
            }
            let available = s.pending.count - s.sent
            if available > 0 {
                let n = min(max, available)
                s.pending.withUnsafeBytes { raw in
                    _ = memcpy(buffer, raw.baseAddress! + s.sent, n)
                }
                s.sent += n
                budget?.give(n)
                if s.sent == s.pending.count {
                    // All handed to MHD: free the buffer rather than keep an event's worth of capacity
                    // per idle stream (10 000 streams would hold megabytes).
                    s.pending = []
                    s.sent = 0
                }
                return n
            }
            if s.ending { return cmhd_end_of_stream() }
            guard let connection = s.connection else { return cmhd_end_with_error() }
            s.suspended = true
            MHD_suspend_connection(connection)
            return 0
        }
    }

    /// NOTIFY_COMPLETED: the connection is gone; runs the close handler once.
    func markCompleted() {
        let handler = state.withLock { s -> (@Sendable (EventStream) -> Void)? in
            guard !s.completed else { return nil }
            monitor?.unwatch(s.socket, token: s.watchToken)
            s.completed = true
            s.ending = true
            s.suspended = false
            s.connection = nil
            s.socket = -1
            releaseBuffer(&s)
            defer { s.onClose = nil }
            return s.onClose
        }
        registry?.remove(self)
        handler?(self)
    }

    /// Server shutdown: ends the body after what is pending, resuming a parked reader.
    func end() {
        state.withLock { s in
            guard !s.completed else { return }
            s.ending = true
            wake(&s)
        }
    }
}

/// The open streams of a server: before `MHD_stop_daemon` every one must be ended and resumed (MHD
/// aborts when stopped with a suspended connection).
final class OpenStreams: Sendable {
    private struct Registry {
        var streams: [ObjectIdentifier: EventStream] = [:]
        var closed = false
    }
    private let registry = Mutex(Registry())
    /// Streams closed since free memory was last given back to the system.
    private let closedSinceTrim = Atomic<Int>(0)
    /// Every this many closed streams, free heap memory goes back to the system (on the background
    /// pool, not on the timer thread, whose other timers would wait for the walk):
    /// a stream's connection memory (its libmicrohttpd pool, about 10 KiB) is freed at its close, but
    /// glibc keeps freed pages resident, so after a wave of streams the RSS would stay at its peak.
    static let trimEvery = 2048

    /// Registers a stream about to be answered; false once `endAll` ran (the stream is then ended at once).
    func add(_ stream: EventStream) -> Bool {
        registry.withLock { r in
            if r.closed { return false }
            r.streams[ObjectIdentifier(stream)] = stream
            return true
        }
    }

    func remove(_ stream: EventStream) {
        let removed = registry.withLock { $0.streams.removeValue(forKey: ObjectIdentifier(stream)) } != nil
        guard removed, closedSinceTrim.wrappingAdd(1, ordering: .relaxed).newValue % Self.trimEvery == 0 else { return }
        // Later and elsewhere: the connection's own memory is freed after this (NOTIFY_COMPLETED runs
        // before MHD frees the pool), and trimming walks every arena.
        TimerThread.shared.schedule(after: .milliseconds(500)) {
            WorkerThreads.background.run { _ = cmhd_release_free_memory() }
        }
    }

    var count: Int { registry.withLock { $0.streams.count } }

    /// Ends every open stream (after its pending bytes) and refuses new ones. Returns how many were open.
    @discardableResult
    func endAll() -> Int {
        let all = registry.withLock { r in
            r.closed = true
            return Array(r.streams.values)
        }
        for stream in all { stream.end() }
        return all.count
    }
}

/// MHD's reader callback for an `EventStream` response.
let eventStreamReader: MHD_ContentReaderCallback = { cls, _, buffer, max in
    guard let cls, let buffer else { return cmhd_end_with_error() }
    return Unmanaged<EventStream>.fromOpaque(cls).takeUnretainedValue().read(into: buffer, max: max)
}

/// MHD's free callback for an `EventStream` response: drops the response's retain.
let eventStreamRelease: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<EventStream>.fromOpaque(cls).release()
}

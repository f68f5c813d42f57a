import Concurrency
import MicroHTTP
import Observability
import SheetPolicy
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The open decision streams of this process: their limits, heartbeats and shutdown.
final class DecisionStreams: Sendable {
    /// Why a new stream was refused.
    enum Refusal: Error { case processFull, userFull }

    private struct Registry {
        var open: [ObjectIdentifier: DecisionStream] = [:]
        /// The same streams by heartbeat slice (see `heartbeatSlice`): a turn reads only its own.
        var slices = Array(repeating: [ObjectIdentifier: DecisionStream](), count: DecisionStreams.heartbeatSlices)
        var perUser: [String: Int] = [:]
        /// Reserved by a route that has not started its stream yet (counted against the limits).
        var reserved = 0
        var closed = false
    }

    let maxStreams: Int
    let maxStreamsPerUser: Int
    let heartbeatSeconds: Int
    /// Bytes a slow reader may leave unread before its stream is closed.
    static let maxPendingBytes = 256 * 1024
    /// Sent first: how long an EventSource waits before reconnecting (milliseconds).
    static let retryMillis = 2000

    private let registry = Mutex(Registry())
    /// The repeating timer of the heartbeat turns, and the slice whose turn is next.
    private let heartbeatTimer = Mutex<TimerToken?>(nil)
    private let nextSlice = Atomic<Int>(0)

    init(maxStreams: Int, maxStreamsPerUser: Int = 8, heartbeatSeconds: Int) {
        self.maxStreams = maxStreams
        self.maxStreamsPerUser = maxStreamsPerUser
        self.heartbeatSeconds = heartbeatSeconds
        scheduleHeartbeats()
    }

    deinit { stopHeartbeats() }

    private func stopHeartbeats() {
        if let token = heartbeatTimer.withLock({ $0 }) { TimerThread.shared.cancel(token) }
    }

    /// Streams take their heartbeats in this many turns per half interval, a slice of them each turn:
    /// all of them at once is a burst of sends (each resumes its connection on an MHD worker) that
    /// delays every event queued behind it. Smaller slices, more often, bound that burst further.
    static let heartbeatSlices = 64  // `heartbeatSlice` takes the top 6 bits

    /// Each stream's slice comes round every half interval: a stream idle for a whole interval gets its
    /// heartbeat within 1.5 intervals at worst, and streams that carried an event recently get none.
    private func scheduleHeartbeats() {
        let turn = Duration.milliseconds(max(1, heartbeatSeconds * 500 / Self.heartbeatSlices))
        let token = TimerThread.shared.scheduleRepeating(every: turn, firstAfter: turn) { [weak self] in
            guard let self else { return }
            let slice = nextSlice.wrappingAdd(1, ordering: .relaxed).oldValue % Self.heartbeatSlices
            sendHeartbeats(slice: slice)
        }
        heartbeatTimer.withLock { $0 = token }
    }

    var openCount: Int { registry.withLock { $0.open.count } }

    /// Takes one place for `userId`, or says which limit is reached. Pair with `open` or `release`.
    func reserve(_ userId: String) throws(Refusal) {
        try registry.withLock { r throws(Refusal) in
            if r.closed || r.open.count + r.reserved >= maxStreams { throw .processFull }
            if r.perUser[userId, default: 0] >= maxStreamsPerUser { throw .userFull }
            r.reserved += 1
            r.perUser[userId, default: 0] += 1
        }
    }

    /// Gives back a reservation that was never opened.
    func release(_ userId: String) {
        registry.withLock { r in
            r.reserved -= 1
            Self.decrement(&r.perUser, userId)
        }
    }

    /// Turns a reservation into an open stream; false when shutdown began meanwhile.
    func open(_ stream: DecisionStream) -> Bool {
        registry.withLock { r in
            r.reserved -= 1
            guard !r.closed else {
                Self.decrement(&r.perUser, stream.userId)
                return false
            }
            let id = ObjectIdentifier(stream)
            r.open[id] = stream
            r.slices[Self.heartbeatSlice(of: id)][id] = stream
            return true
        }
    }

    func close(_ stream: DecisionStream) {
        registry.withLock { r in
            let id = ObjectIdentifier(stream)
            if r.open.removeValue(forKey: id) != nil {
                r.slices[Self.heartbeatSlice(of: id)][id] = nil
                Self.decrement(&r.perUser, stream.userId)
            }
        }
    }

    /// Shutdown: every stream gets a final `shutdown` event and ends; new ones are refused.
    func shutDown() {
        let all = registry.withLock { r in
            r.closed = true
            return Array(r.open.values)
        }
        stopHeartbeats()
        for stream in all { stream.body.finish(with: Self.shutdownEvent) }
    }

    static let shutdownEvent = Array("event: shutdown\ndata: {}\n\n".utf8)
    /// Sent last when the stream's token stops being accepted: reconnect with a fresh token.
    static let tokenExpiredEvent = Array(
        "event: token-expired\ndata: {\"detail\":\"the stream's token has expired; reconnect with a fresh token\"}\n\n".utf8)
    /// Where the token-expiry timers of streams fire.
    static let longestExpiryHopMillis: Int64 = 60_000
    static let heartbeat = Array(": heartbeat\n\n".utf8)

    private func sendHeartbeats(slice: Int) {
        let streams = registry.withLock { Array($0.slices[slice].values) }
        let idleSince = monotonicMicros() - heartbeatSeconds * 1_000_000 + 50_000
        for stream in streams where stream.body.lastWriteMicros <= idleSince {
            stream.body.send(Self.heartbeat)
        }
    }

    /// A stream's heartbeat slice, from its address (stable for the stream's life): Fibonacci hashing
    /// spreads the aligned addresses evenly, at a multiply per stream and turn.
    static func heartbeatSlice(of id: ObjectIdentifier) -> Int {
        Int(((UInt64(UInt(bitPattern: id)) >> 4) &* 0x9E37_79B9_7F4A_7C15) >> 58)
    }

    private static func decrement(_ counts: inout [String: Int], _ userId: String) {
        let n = (counts[userId] ?? 1) - 1
        counts[userId] = n > 0 ? n : nil
    }
}

/// One client's `text/event-stream` of one decision: an event whenever the decision's bytes change.
final class DecisionStream: DecisionWatcher {
    let userId: String
    let context: ClientContext
    let body: EventStream
    /// The ETag of the last decision the client has (sent, or named by `Last-Event-ID`). Held while a
    /// recheck computes and sends, so concurrent rechecks of this stream run one after the other and
    /// the last one reads the newest state.
    private let lastETag: Mutex<String>
    private let answer: @Sendable (String, ClientContext) -> DecisionCache.Fresh?
    /// Rechecks at the decision's next time boundary, through `wake` (the feed's queue).
    let boundary = BoundaryTimer()
    private let clock: @Sendable () -> Timestamp
    private let wake: @Sendable (DecisionStream) -> Void

    init(
        userId: String, context: ClientContext, body: EventStream, lastETag: String,
        answer: @escaping @Sendable (String, ClientContext) -> DecisionCache.Fresh?,
        clock: @escaping @Sendable () -> Timestamp, wake: @escaping @Sendable (DecisionStream) -> Void
    ) {
        self.userId = userId
        self.context = context
        self.body = body
        self.lastETag = Mutex(lastETag)
        self.answer = answer
        self.clock = clock
        self.wake = wake
    }

    func recheck() {
        lastETag.withLock { last in
            // A failed read (database unavailable) sends nothing; the next change tries again.
            guard body.isOpen, let current = answer(userId, context) else { return }
            armBoundary(current.validUntil)
            guard current.answer.etag != last else { return }
            if body.send(Self.event(current.answer)) { last = current.answer.etag }
        }
    }

    /// Ends the stream with `token-expired` at `validUntil` (Unix seconds, the last second its token is
    /// accepted; the stream ends when the next begins), as every other route starts answering 401 then.
    /// The wait is taken in hops of at most a minute, so a stream that closes early leaves nothing
    /// behind for longer than that, whatever its token's lifetime.
    func endWhenTokenExpires(validUntil: Int64, now: @escaping @Sendable () -> Int64) {
        let (endSeconds, overflow) = validUntil.addingReportingOverflow(1)
        guard !overflow, endSeconds < Int64.max / 1000 else { return }
        let remaining = endSeconds * 1000 - now()
        // Ended only once the token check itself refuses it: `time()` reads a coarse clock that may
        // still show the last second for a few milliseconds after the precise one moved on.
        if remaining <= 0, TokenVerifier.isExpired(exp: validUntil, now: Int64(time(nil)), leeway: 0) {
            return body.finish(with: DecisionStreams.tokenExpiredEvent)
        }
        let hop = Int(min(max(remaining, 5), DecisionStreams.longestExpiryHopMillis))
        TimerThread.shared.schedule(after: .milliseconds(hop)) { [weak self] in
            guard let self, self.body.isOpen else { return }
            self.endWhenTokenExpires(validUntil: validUntil, now: now)
        }
    }

    /// Arms the timer for the decision's next time boundary (none when it has none).
    func armBoundary(_ validUntil: Timestamp?) {
        boundary.arm(at: validUntil, now: clock()) { [weak self] in
            guard let self, self.body.isOpen else { return }
            self.wake(self)
        }
    }

    /// `id:` (the ETag, as the `ETag` header carries it), `event: decision` and the decision JSON, which
    /// is one line (JSON escapes line breaks inside strings).
    static func event(_ answer: DecisionCache.Answer) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(answer.body.count + answer.etag.utf8.count + 32)
        bytes.append(contentsOf: "id: ".utf8)
        bytes.append(contentsOf: answer.etag.utf8)
        bytes.append(contentsOf: "\nevent: decision\ndata: ".utf8)
        bytes.append(contentsOf: answer.body)
        bytes.append(contentsOf: "\n\n".utf8)
        return bytes
    }
}

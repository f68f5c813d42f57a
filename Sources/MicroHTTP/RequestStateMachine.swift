/// The lifecycle of one request on its connection, as a value: each `mutating` function takes one
/// fact the connection reported and returns the `Action` the access handler must carry out. The
/// machine owns what the request accumulates (its body, its request id, the promise it waits for, the
/// stream it feeds), holds no pointer and does no I/O, so every transition is unit-tested without a
/// socket.
///
/// ```
/// awaitingHead ─head ok─▶ receivingBody ─body ended─▶ dispatching ─answered─▶ responded
///      │                       │                          ├─deferred─▶ parked ─settled─▶ responded
///      │                       │                          └─stream answered─▶ responded ─queued─▶ streaming
///      │                       └─over the cap─▶ discardingBody ─body ended─▶ rejecting ─labeled─▶ responded (413)
///      └─head refused (400/413/431)─▶ rejecting ─labeled─▶ responded
///
/// receivingBody, discardingBody ─body stalled─▶ answeredOnSocket (431)
/// responded, streaming ─answer not sent─▶ answeredOnSocket (431)
/// any ─completed─▶ finished
/// ```
/// Two answers cannot go through libmicrohttpd, so the machine asks for them to be written to the
/// socket itself (`answerOnSocket`): a body MHD can no longer read (`stallChecked`, see
/// `StalledBodies`) and an answer whose header section MHD could not build (`answerNotSent`).
/// A long-lived stream (server-sent events: one MHD callback response per stream, parked with
/// suspend/resume from its reader, `EventStream`) is the `streaming` state: its body is produced by the
/// reader callback, so the access handler has nothing more to do until the connection completes.
struct RequestStateMachine {
    /// What labels one answer: its route (log and metrics) and its request id.
    struct Labels {
        /// The matched route template, nil when no route matched.
        let template: String?
        let slot: RouteMetrics
        let requestId: String
    }

    enum State {
        /// The request line arrived; the header section is not checked yet.
        case awaitingHead
        /// The head was accepted; body bytes are kept (up to the cap).
        case receivingBody(body: [UInt8])
        /// The body went over the cap: further bytes are counted and dropped until it ends.
        case discardingBody
        /// Refused before routing: waiting for the labels of the refusal.
        case rejecting
        /// The handler is running.
        case dispatching
        /// Suspended until `promise` is settled (MHD calls again after the resume).
        case parked(promise: ResponsePromise, labels: Labels)
        /// An answer was queued; nothing is left to do. `requestId` is the answer's.
        case responded(requestId: String)
        /// A streaming response was queued; its reader callback writes the body until it ends.
        case streaming(EventStream, requestId: String)
        /// An answer was written to the socket past libmicrohttpd; the connection closes. `stream`: the
        /// stream whose answer MHD could not send, still to be told of the completion.
        case answeredOnSocket(requestId: String?, stream: EventStream?)
        /// NOTIFY_COMPLETED came: the connection may be gone, nothing may touch it any more.
        case finished
    }

    /// The state without its values, for tests and for the access handler's first-call check.
    enum Phase: Equatable {
        case awaitingHead, receivingBody, discardingBody, rejecting, dispatching, parked, responded, streaming
        case answeredOnSocket, finished
    }

    /// Why an answer is written to the socket instead of queued with libmicrohttpd.
    enum SocketAnswerReason: Equatable {
        /// The head left libmicrohttpd no memory to read the announced body (it would wait for ever);
        /// the socket is shut down after the answer so that MHD closes the connection.
        case bodyStalled
        /// MHD could not build the queued answer's header section and closes the connection
        /// without sending anything.
        case answerDidNotFit
    }

    /// What the head check found, before any body byte is read.
    enum HeadVerdict: Equatable {
        case acceptable
        /// Framing that two parsers could read differently (RFC 9112 §3.2, 5, 6.3): always closes.
        case malformed(detail: String)
        /// More query arguments than the server keeps (`count` is how many were sent).
        case tooManyQueryArguments(count: Int)
        /// Content-Length announces more than the cap.
        case announcedBodyTooLarge
        /// The head leaves less of the connection's memory free than an answer needs.
        case headTooLarge(memory: Int, reserve: Int)
    }

    enum Action {
        /// Return YES to MHD and wait for the next call.
        case `continue`
        /// Answer with this problem without routing (label it, then `rejectionLabeled`);
        /// `closeConnection` adds `Connection: close`.
        case reject(Problem, closeConnection: Bool)
        /// Route and run the handler on this body, then report with `handlerAnswered` or `handlerDeferred`.
        case dispatch(body: [UInt8])
        /// Queue this complete response.
        case send(HTTPResponse, Labels)
        /// Queue this streaming response, then report the stream with `streamQueued`.
        case stream(HTTPResponse, Labels)
        /// Suspend the connection until `promise` is settled; if it already is, report its response
        /// with `promiseChecked`.
        case park(ResponsePromise)
        /// The connection was resumed: report what `promise` settled with (`promiseChecked`).
        case checkSettled(ResponsePromise)
        /// Drop the connection without an answer (MHD cannot answer in the middle of an upload).
        case abort(bodyBytesSeen: Int)
        /// Write this complete answer to the connection's socket (nothing of another answer was sent),
        /// and shut the socket down when `reason` says so. `requestId` is nil when none was assigned.
        case answerOnSocket(Problem, requestId: String?, reason: SocketAnswerReason)
    }

    private(set) var state: State = .awaitingHead
    /// Body bytes seen so far, kept or not.
    private(set) var bodyBytesSeen = 0
    /// Calls of the connection so far (the stall watch measures progress by them).
    private(set) var calls = 0
    /// The head announced a body (chunked, or a Content-Length above 0): only such a request can
    /// wait for body bytes, and be watched for a stall.
    private(set) var announcesBody = false
    /// The stall watch's last look: the calls it saw, and how many looks in a row found no new call
    /// while bytes waited unread. nil: not watched.
    private var stallWatch: (calls: Int, strikes: Int)?
    let maxBodyBytes: Int
    let maxQueryArguments: Int
    /// The connection's memory (`headerMemoryLimit`) and what a head must leave of it, for the 431s.
    let headerMemory: Int
    let answerReserve: Int

    init(maxBodyBytes: Int, maxQueryArguments: Int, headerMemory: Int = 10240, answerReserve: Int = 1024) {
        self.maxBodyBytes = maxBodyBytes
        self.maxQueryArguments = maxQueryArguments
        self.headerMemory = headerMemory
        self.answerReserve = answerReserve
    }

    /// Looks without progress, with bytes unread, after which a watched body counts as stalled (a
    /// healthy one is read at the next turn: the bytes' arrival wakes the loop and MHD reads them).
    static let stallStrikes = 2

    /// How much of an oversize chunked body is read and discarded before the connection is dropped.
    var discardLimit: Int { max(maxBodyBytes &* 16, 1 << 20) }

    var phase: Phase {
        switch state {
        case .awaitingHead: .awaitingHead
        case .receivingBody: .receivingBody
        case .discardingBody: .discardingBody
        case .rejecting: .rejecting
        case .dispatching: .dispatching
        case .parked: .parked
        case .responded: .responded
        case .streaming: .streaming
        case .answeredOnSocket: .answeredOnSocket
        case .finished: .finished
        }
    }

    /// Whether the request waits for body bytes (kept or discarded).
    var awaitsBody: Bool {
        switch state {
        case .receivingBody, .discardingBody: true
        default: false
        }
    }

    /// The request id of the answer queued, if one was (for the fallback answer's log line).
    var answeredRequestId: String? {
        switch state {
        case .responded(let id), .streaming(_, let id): id
        case .answeredOnSocket(let id, _): id
        case .awaitingHead, .receivingBody, .discardingBody, .rejecting, .dispatching, .parked, .finished: nil
        }
    }

    /// The header section arrived (MHD's first access-handler call); `announcesBody`: it announces a
    /// body (chunked, or a Content-Length above 0).
    mutating func headReceived(_ verdict: HeadVerdict, announcesBody: Bool = false) -> Action {
        calls += 1
        guard case .awaitingHead = state else { return .continue }
        self.announcesBody = announcesBody
        switch verdict {
        case .acceptable:
            state = .receivingBody(body: [])
            return .continue
        case .malformed(let detail):
            state = .rejecting
            return .reject(.badRequest(detail), closeConnection: true)
        case .tooManyQueryArguments(let count):
            state = .rejecting
            return .reject(
                .badRequest(
                    "The query has \(count) parameters; at most \(maxQueryArguments) are accepted.",
                    invalidParams: [(name: "query", reason: "at most \(maxQueryArguments) parameters")]),
                closeConnection: false)
        case .announcedBodyTooLarge:
            // MHD answers before reading the body, then closes the connection.
            state = .rejecting
            return .reject(.payloadTooLarge(limit: maxBodyBytes), closeConnection: true)
        case .headTooLarge(let memory, let reserve):
            state = .rejecting
            return .reject(.headerTooLarge(memory: memory, reserve: reserve), closeConnection: true)
        }
    }

    /// Body bytes arrived (they are always consumed): kept while under the cap.
    mutating func bodyReceived(_ bytes: UnsafeRawBufferPointer) -> Action {
        calls += 1
        bodyBytesSeen += bytes.count
        switch state {
        case .receivingBody(var body):
            guard bodyBytesSeen > maxBodyBytes else {
                state = .dispatching  // not observable: released so that the append does not copy
                body.append(contentsOf: bytes)
                state = .receivingBody(body: body)
                return .continue
            }
            // Drop the bytes kept so far: the body is over the cap.
            state = .discardingBody
            return .continue
        case .discardingBody:
            return bodyBytesSeen > discardLimit ? .abort(bodyBytesSeen: bodyBytesSeen) : .continue
        case .awaitingHead, .rejecting, .dispatching, .parked, .responded, .streaming, .answeredOnSocket, .finished:
            return .continue
        }
    }

    /// MHD called without data: the body ended (or, when parked, the connection was resumed).
    mutating func calledWithoutData() -> Action {
        calls += 1
        switch state {
        case .receivingBody(let body):
            state = .dispatching
            return .dispatch(body: body)
        case .discardingBody:
            state = .rejecting
            return .reject(.payloadTooLarge(limit: maxBodyBytes), closeConnection: false)
        case .parked(let promise, _):
            return .checkSettled(promise)
        case .awaitingHead, .rejecting, .dispatching, .responded, .streaming, .answeredOnSocket, .finished:
            return .continue
        }
    }

    /// After a call of the connection: whether the loop's stall watch must start watching the request
    /// (true once, and only while it waits for the body its head announced; a request without one is
    /// answered within the same MHD pass, not worth a watch).
    mutating func startStallWatch() -> Bool {
        guard announcesBody, awaitsBody, stallWatch == nil else { return false }
        stallWatch = (calls, 0)
        return true
    }

    /// The stall watch looks at the end of a loop turn (only while `awaitsBody`): `bytesUnread` says
    /// whether bytes wait unread in the socket. A body that made no progress over `stallStrikes` looks
    /// with bytes waiting is stalled: its 431 goes to the socket, which is then shut down.
    mutating func stallChecked(bytesUnread: Bool) -> Action {
        guard awaitsBody, let watch = stallWatch else { return .continue }
        if watch.calls != calls {
            stallWatch = (calls, 0)
            return .continue
        }
        let strikes = bytesUnread ? watch.strikes + 1 : 0
        stallWatch = (calls, strikes)
        guard strikes >= Self.stallStrikes else { return .continue }
        state = .answeredOnSocket(requestId: nil, stream: nil)
        return .answerOnSocket(
            .headerTooLarge(memory: headerMemory, reserve: answerReserve), requestId: nil, reason: .bodyStalled)
    }

    /// libmicrohttpd could not build the header section of the answer queued (it closes the connection
    /// without sending any of it): a 431 under the answer's request id, written to the socket.
    mutating func answerNotSent() -> Action {
        let requestId: String
        switch state {
        case .responded(let id):
            requestId = id
            state = .answeredOnSocket(requestId: id, stream: nil)
        case .streaming(let stream, let id):
            requestId = id
            state = .answeredOnSocket(requestId: id, stream: stream)
        default:
            return .continue
        }
        return .answerOnSocket(
            .headerTooLarge(memory: headerMemory, reserve: answerReserve), requestId: requestId, reason: .answerDidNotFit)
    }

    /// A refusal got its labels (the route it would have matched, the request id).
    mutating func rejectionLabeled(_ response: HTTPResponse, _ labels: Labels) -> Action {
        guard case .rejecting = state else { return .continue }
        return answer(response, labels)
    }

    /// The handler returned a response (or routing refused the request).
    mutating func handlerAnswered(_ response: HTTPResponse, _ labels: Labels) -> Action {
        guard case .dispatching = state else { return .continue }
        return answer(response, labels)
    }

    /// The handler deferred its answer to `promise` (already started).
    mutating func handlerDeferred(_ promise: ResponsePromise, _ labels: Labels) -> Action {
        guard case .dispatching = state else { return .continue }
        state = .parked(promise: promise, labels: labels)
        return .park(promise)
    }

    /// The parked promise was looked at: settled with `response`, or not yet (nil: a spurious call).
    mutating func promiseChecked(_ response: HTTPResponse?) -> Action {
        guard case .parked(_, let labels) = state, let response else { return .continue }
        return answer(response, labels)
    }

    /// The streaming response was queued with `stream` as its body.
    mutating func streamQueued(_ stream: EventStream) {
        guard case .responded(let requestId) = state else { return }
        state = .streaming(stream, requestId: requestId)
    }

    /// NOTIFY_COMPLETED: the connection is done with this request. Returns the stream to tell.
    mutating func completed() -> EventStream? {
        defer { state = .finished }
        switch state {
        case .streaming(let stream, _), .answeredOnSocket(_, .some(let stream)): return stream
        default: return nil
        }
    }

    private mutating func answer(_ response: HTTPResponse, _ labels: Labels) -> Action {
        state = .responded(requestId: labels.requestId)
        if case .stream = response.content { return .stream(response, labels) }
        return .send(response, labels)
    }
}

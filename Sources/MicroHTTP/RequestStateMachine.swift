/// The lifecycle of one request on its connection, as a value: each `mutating` function takes one
/// fact MHD reported and returns the `Action` the access handler must carry out. The machine holds no
/// pointer and does no I/O, so every transition is unit-tested without a socket.
///
/// ```
/// awaitingHead ─head ok─▶ receivingBody ─body ended─▶ dispatching ─answered─▶ responded
///      │                       │                          ├─deferred─▶ parked ─settled─▶ responded
///      │                       │                          └─stream queued─▶ streaming
///      │                       └─over the cap─▶ discardingBody ─body ended─▶ responded (413)
///      └─head refused (400/413/431)─▶ responded
/// ```
/// A long-lived stream (server-sent events: one MHD callback response per stream, parked with
/// suspend/resume from its reader, `EventStream`) is the `streaming` state: its body is produced by the
/// reader callback, so the access handler has nothing more to do until the connection completes.
struct RequestStateMachine {
    enum State: Equatable {
        /// The request line arrived; the header section is not checked yet.
        case awaitingHead
        /// The head was accepted; body bytes are kept (up to the cap).
        case receivingBody
        /// The body went over the cap: further bytes are counted and dropped until it ends.
        case discardingBody
        /// The handler is running.
        case dispatching
        /// Suspended until the deferred response is settled (MHD calls again after the resume).
        case parked
        /// A response was queued; nothing is left to do.
        case responded
        /// A streaming response was queued; its reader callback writes the body until it ends.
        case streaming
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
        /// Keep these body bytes.
        case appendBody
        /// Drop the bytes kept so far (and these): the body is over the cap.
        case discardBody
        /// Answer with this problem without routing; `closeConnection` adds `Connection: close`.
        case reject(Problem, closeConnection: Bool)
        /// Route and run the handler with the body kept.
        case dispatch
        /// Queue the response the handler (or its settled promise) produced.
        case send
        /// Park the connection until the deferred response is settled.
        case suspend
        /// The connection was resumed: send the settled response.
        case resume
        /// Drop the connection without an answer (MHD cannot answer in the middle of an upload).
        case abort
    }

    private(set) var state: State = .awaitingHead
    /// Body bytes seen so far, kept or not.
    private(set) var bodyBytesSeen = 0
    let maxBodyBytes: Int
    let maxQueryArguments: Int

    init(maxBodyBytes: Int, maxQueryArguments: Int) {
        self.maxBodyBytes = maxBodyBytes
        self.maxQueryArguments = maxQueryArguments
    }

    /// How much of an oversize chunked body is read and discarded before the connection is dropped.
    var discardLimit: Int { max(maxBodyBytes &* 16, 1 << 20) }

    /// The header section arrived (MHD's first access-handler call).
    mutating func headReceived(_ verdict: HeadVerdict) -> Action {
        guard state == .awaitingHead else { return .continue }
        switch verdict {
        case .acceptable:
            state = .receivingBody
            return .continue
        case .malformed(let detail):
            state = .responded
            return .reject(.badRequest(detail), closeConnection: true)
        case .tooManyQueryArguments(let count):
            state = .responded
            return .reject(
                .badRequest(
                    "The query has \(count) parameters; at most \(maxQueryArguments) are accepted.",
                    invalidParams: [(name: "query", reason: "at most \(maxQueryArguments) parameters")]),
                closeConnection: false)
        case .announcedBodyTooLarge:
            // MHD answers before reading the body, then closes the connection.
            state = .responded
            return .reject(.payloadTooLarge(limit: maxBodyBytes), closeConnection: true)
        case .headTooLarge(let memory, let reserve):
            state = .responded
            return .reject(.headerTooLarge(memory: memory, reserve: reserve), closeConnection: true)
        }
    }

    /// `count` body bytes arrived (they are always consumed).
    mutating func bodyReceived(count: Int) -> Action {
        bodyBytesSeen += count
        switch state {
        case .receivingBody:
            guard bodyBytesSeen > maxBodyBytes else { return .appendBody }
            state = .discardingBody
            return .discardBody
        case .discardingBody:
            return bodyBytesSeen > discardLimit ? .abort : .continue
        default:
            return .continue
        }
    }

    /// MHD called without data: the body ended (or, when parked, the connection was resumed).
    mutating func calledWithoutData() -> Action {
        switch state {
        case .receivingBody:
            state = .dispatching
            return .dispatch
        case .discardingBody:
            state = .responded
            return .reject(.payloadTooLarge(limit: maxBodyBytes), closeConnection: false)
        case .parked:
            return .resume
        case .awaitingHead, .dispatching, .responded, .streaming:
            return .continue
        }
    }

    /// The handler returned: with a complete response, or a deferred one whose promise is unsettled.
    mutating func handlerReturned(deferred: Bool) -> Action {
        guard state == .dispatching else { return .continue }
        if deferred {
            state = .parked
            return .suspend
        }
        state = .responded
        return .send
    }

    /// The response queued is a stream (Server-Sent Events): the connection stays with it.
    mutating func streamQueued() {
        if state == .responded { state = .streaming }
    }

    /// After a resume, the promise was found settled (`true`) or not yet (a spurious call).
    mutating func resumed(settled: Bool) -> Action {
        guard state == .parked, settled else { return .continue }
        state = .responded
        return .send
    }
}

import Concurrency
import JSONKit
import Observability
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The request lifecycle's side effects: each call of the connection (MHD's access handler, or a
/// test's fake connection) feeds `RequestStateMachine` with what happened, and the `Action` it returns
/// is carried out here, every one of them. Nothing here decides.
///
/// The calls (as libmicrohttpd makes them): the URI log callback creates the request's state (before
/// MHD parses the query arguments); the first call has the header section; body calls carry data
/// (always consumed); a call without data ends the body, and, for a parked request, follows the
/// resume. Only an early refusal answers in the first call (MHD then closes the connection); anything
/// else answers later, which keeps keep-alive.
extension ServerCore {
    /// One call of the connection for `request`: `upload` is the body bytes it carries (nil or empty
    /// when none). Returns false to drop the connection.
    @_spi(Testing) public func handle<C: HTTPConnection>(
        _ connection: C, _ request: RequestState, method: UnsafePointer<CChar>, url: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>?, upload: UnsafeRawBufferPointer?
    ) -> Bool {
        let action: RequestStateMachine.Action
        if request.machine.phase == .awaitingHead {
            let body = announcedBody(connection, limit: maxBodyBytes)
            let verdict = verdict(connection, method, version, request, bodyOverLimit: body.overLimit)
            action = request.machine.headReceived(verdict, announcesBody: body.present)
        } else if let upload, !upload.isEmpty {
            action = request.machine.bodyReceived(upload)
        } else {
            action = request.machine.calledWithoutData()
        }
        return perform(action, connection, request, method: method, url: url)
    }

    /// Per-request state for a new request line (the URI log callback). `query` is the bytes after `?`.
    @_spi(Testing) public func begin(query: [UInt8]) -> RequestState {
        inFlight.wrappingAdd(1, ordering: .relaxed)
        metrics.requestStarted()
        let arguments = query.withUnsafeBufferPointer { countQueryArguments($0) }
        return RequestState(
            startMicros: monotonicMicros(), query: query, queryArguments: arguments,
            machine: RequestStateMachine(
                maxBodyBytes: maxBodyBytes, maxQueryArguments: maxQueryArguments, headerMemory: headerMemory,
                answerReserve: ServerCore.answerReserve))
    }

    /// The connection completed the request (NOTIFY_COMPLETED, also on timeouts, aborts and shutdown).
    @_spi(Testing) public func completed(_ request: RequestState) {
        request.machine.completed()?.markCompleted()
        inFlight.wrappingSubtract(1, ordering: .relaxed)
        if draining.load(ordering: .relaxed) { lastCompletionMicros.store(monotonicMicros(), ordering: .relaxed) }
        metrics.requestFinished()
    }

    /// The end of a turn of one of the server's loops (on its thread): tells a draining `stop` to look
    /// again, and returns how soon the loop must look at its stalled bodies (ms, -1: no need).
    func turnEnded() -> Int32 {
        if draining.load(ordering: .relaxed) { drainProgress.withLock(wake: .all) { $0 &+= 1 } }
        return StalledBodies.check(core: self)
    }

    /// Carries out `action` and those the machine returns for its results, until one leaves the
    /// request waiting for the connection's next call.
    private func perform<C: HTTPConnection>(
        _ first: RequestStateMachine.Action, _ connection: C, _ request: RequestState,
        method: UnsafePointer<CChar>, url: UnsafePointer<CChar>
    ) -> Bool {
        var action = first
        while true {
            switch action {
            case .continue:
                return true
            case .abort(let bytes):
                // A chunked body far beyond the cap: MHD cannot answer mid-upload, so drop the connection.
                Log.write(.warn, "oversize chunked body aborted", [("bytes", .int(bytes))])
                return false
            case .answerOnSocket:
                answerOnSocket(action, socket: connection.socket)
                return true
            case .reject(let problem, let close):
                var response = problem.response
                if close { response.headers.append(("Connection", "close")) }
                action = request.machine.rejectionLabeled(response, rejectionLabels(connection, url))
            case .dispatch(let body):
                action = dispatch(connection, request, body: body, method: method, url: url)
            case .park(let promise):
                guard let settled = promise.parkUnlessSettled(connection) else { return true }
                // Settled before it could park: answer at once.
                action = request.machine.promiseChecked(settled)
            case .checkSettled(let promise):
                action = request.machine.promiseChecked(promise.settledResponse())
            case .send(var response, let labels):
                if response.compression != .none {
                    var accepts = false
                    connection.withHeader("Accept-Encoding") { accepts = ContentCoding.acceptsGzip($0) }
                    response = ContentCoding.negotiate(response, acceptsGzip: accepts, minimumBytes: gzipMinimumBytes)
                }
                let body: SentBody
                switch response.content {
                case .bytes(let bytes): body = .bytes(bytes)
                case .notModified(let representation): body = .lengthOnly(representation)
                case .deferred, .stream: preconditionFailure("the state machine sends complete responses only")
                }
                return send(connection, response.status, response.headers, body, labels, request: request, method: method, actor: response.actor)
            case .stream(let response, let labels):
                guard case .stream(let maxPendingBytes, let start) = response.content else {
                    preconditionFailure("the state machine streams streaming responses only")
                }
                let stream = EventStream(maxPendingBytes: maxPendingBytes, registry: streams, monitor: peerMonitor, budget: streamBudget)
                if !streams.add(stream) { stream.end() }  // the server is stopping: the body ends at once
                let queued = send(connection, response.status, response.headers, .stream(stream), labels, request: request, method: method)
                guard queued else {
                    streams.remove(stream)
                    return false
                }
                request.machine.streamQueued(stream)
                start(stream)
                return true
            }
        }
    }

    /// What the header section says about size and framing, before any body byte is read.
    private func verdict<C: HTTPConnection>(
        _ connection: C, _ method: UnsafePointer<CChar>, _ version: UnsafePointer<CChar>?, _ request: RequestState, bodyOverLimit: Bool
    ) -> RequestStateMachine.HeadVerdict {
        // The head stays in the connection's memory pool until the answer is sent, and the answer's
        // header section is built in what is left: keep room for it (see `answerReserve`).
        if connection.headMemoryUsed() + ServerCore.answerReserve > headerMemory {
            return .headTooLarge(memory: headerMemory, reserve: ServerCore.answerReserve)
        }
        if let problem = connection.framingProblem(method: method, version: version) { return .malformed(detail: problem) }
        if request.queryArguments > maxQueryArguments { return .tooManyQueryArguments(count: request.queryArguments) }
        if bodyOverLimit { return .announcedBodyTooLarge }
        return .acceptable
    }

    /// Whether the head announces a body (chunked, or a Content-Length above 0), and whether its
    /// Content-Length is over `limit` (only without Transfer-Encoding: then MHD ignores Content-Length).
    private func announcedBody<C: HTTPConnection>(_ connection: C, limit: Int) -> (present: Bool, overLimit: Bool) {
        var chunked = false
        connection.withHeader("Transfer-Encoding") { chunked = $0 != nil }
        if chunked { return (true, false) }
        var over = false, present = false
        connection.withHeader("Content-Length") { value in
            guard let value else { return }
            var n = 0
            for i in 0..<value.count {
                let b = value[i]
                guard b >= 0x30 && b <= 0x39 else { return }  // MHD itself rejects a malformed value
                let (m, o1) = n.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(Int(b - 0x30))
                if o1 || o2 {
                    (over, present) = (true, true)
                    return
                }
                n = a
            }
            over = n > limit
            present = n > 0
        }
        return (present, over)
    }

    /// Routes and runs the handler; returns what the machine makes of its outcome.
    private func dispatch<C: HTTPConnection>(
        _ connection: C, _ request: RequestState, body: [UInt8], method: UnsafePointer<CChar>, url: UnsafePointer<CChar>
    ) -> RequestStateMachine.Action {
        let requestId = incomingRequestId(connection)
        let path = UnsafeBufferPointer(start: UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self), count: strlen(url))
        let outcome = responder.respond(method: HTTPMethod.parse(method), path: path) { target, method, values in
            HTTPRequest(
                connection: connection, method: method, rawPath: path, rawQuery: request.query, routeTemplate: target.template,
                requestId: requestId, body: body, parameterNames: target.parameterNames, parameterValues: values)
        }
        switch outcome {
        case .refused(let problem, let template, let slot):
            let labels = RequestStateMachine.Labels(template: template, slot: slot ?? metrics.unmatched, requestId: requestId)
            return request.machine.handlerAnswered(problem.response, labels)
        case .answered(let response, let target):
            return request.machine.handlerAnswered(response, RequestStateMachine.Labels(target, requestId: requestId))
        case .deferred(let start, let target, _):
            let promise = ResponsePromise(template: target.template, requestId: requestId, registry: parked)
            start(promise)
            return request.machine.handlerDeferred(promise, RequestStateMachine.Labels(target, requestId: requestId))
        }
    }

    /// For answers decided before routing (framing, limits): the route only labels log and metrics.
    private func rejectionLabels<C: HTTPConnection>(_ connection: C, _ url: UnsafePointer<CChar>) -> RequestStateMachine.Labels {
        let path = UnsafeBufferPointer(start: UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self), count: strlen(url))
        var captures: [Range<Int>] = []
        let node = validatePath(path) == nil ? responder.table.match(path, captures: &captures) : nil
        return RequestStateMachine.Labels(
            template: node?.template, slot: node?.metrics ?? metrics.unmatched, requestId: incomingRequestId(connection))
    }

    private func incomingRequestId<C: HTTPConnection>(_ connection: C) -> String {
        var id: String?
        connection.withHeader("X-Request-Id") { value in
            if let value { id = RequestID.sanitize(value) }
        }
        return id ?? RequestID.next()
    }

    /// Queues the answer with `X-Request-Id` (and `Connection: close` while draining), then records
    /// metrics and the access-log line.
    private func send<C: HTTPConnection>(
        _ connection: C, _ status: Int, _ headers: [(String, String)], _ body: SentBody, _ labels: RequestStateMachine.Labels,
        request: RequestState, method: UnsafePointer<CChar>, actor: String? = nil
    ) -> Bool {
        let sent = SentHeaders(headers: headers, requestId: labels.requestId, closing: draining.load(ordering: .relaxed))
        let queued = connection.queue(status: status, headers: sent, body: body)
        let duration = monotonicMicros() - request.startMicros
        labels.slot.record(status: status, durationMicros: duration)
        if accessLog && Log.isEnabled(.info) {
            writeAccessLog(
                method: method, template: labels.template, status: status, durationMicros: duration, requestId: labels.requestId, actor: actor)
        }
        if !queued {
            Log.write(.error, "could not queue the response", [("status", .int(status)), ("request_id", .string(labels.requestId))])
        }
        return queued
    }

    private func writeAccessLog(
        method: UnsafePointer<CChar>, template: String?, status: Int, durationMicros: Int, requestId: String, actor: String?
    ) {
        let method = UnsafeBufferPointer(
            start: UnsafeRawPointer(method).assumingMemoryBound(to: UInt8.self),
            count: min(strlen(method), 32))
        var out = JSONWriter(reservingCapacity: 200)
        out.object { line in
            Log.begin(&line, level: .info, msg: "request")
            line.key("method")
            line.string(utf8: method.span)
            line.member("route", template)
            line.member("status", status)
            line.member("duration_us", durationMicros)
            line.member("request_id", requestId)
            if let actor { line.member("actor", actor) }
        }
        out.raw("\n")
        Log.emit(out.bytes)
    }
}

extension RequestStateMachine.Labels {
    init(_ target: RouteTable.Target, requestId: String) {
        self.init(template: target.template, slot: target.metrics, requestId: requestId)
    }
}

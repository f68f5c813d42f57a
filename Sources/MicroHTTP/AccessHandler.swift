internal import CMicroHTTPD
import JSONKit
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The C side of a request: MHD's callbacks feed `RequestStateMachine` with what happened and carry
/// out the `Action` it returns. Nothing here decides; it only reads MHD and queues answers.
///
/// MHD's calls (see docs/mhd-sqlite-notes.md): the URI log callback creates the request's state
/// (before MHD parses the query arguments); the first access-handler call has the header section;
/// body calls carry data (always consumed: `*upload_data_size = 0`); a call without data ends the body,
/// and, for a parked request, follows the resume. Only an early refusal answers in the first call
/// (MHD then closes the connection); anything else answers later, which keeps keep-alive.
extension ServerCore {
    func handle(
        _ connection: OpaquePointer, _ url: UnsafePointer<CChar>, _ method: UnsafePointer<CChar>,
        _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>,
        _ reqCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let request: RequestState
        if let existing = reqCls.pointee {
            request = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()
        } else {
            // Without the URI log callback (not expected): start here.
            request = begin(query: [], queryArguments: 0)
            reqCls.pointee = Unmanaged.passRetained(request).toOpaque()
        }

        let action: RequestStateMachine.Action
        if request.machine.state == .awaitingHead {
            action = request.machine.headReceived(verdict(connection, method, version, queryArguments: request.queryArguments))
        } else if uploadSize.pointee > 0 {
            action = request.machine.bodyReceived(count: uploadSize.pointee)
            if case .appendBody = action, let uploadData {
                request.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: uploadSize.pointee))
            }
            uploadSize.pointee = 0
        } else {
            action = request.machine.calledWithoutData()
        }
        return perform(action, connection, url, method, request)
    }

    /// Per-request state for a new request line (the URI log callback).
    func begin(query: [UInt8], queryArguments: Int) -> RequestState {
        inFlight.wrappingAdd(1, ordering: .relaxed)
        metrics.requestStarted()
        return RequestState(
            startMicros: monotonicMicros(), query: query, queryArguments: queryArguments,
            machine: RequestStateMachine(maxBodyBytes: maxBodyBytes, maxQueryArguments: maxQueryArguments))
    }

    private func perform(
        _ action: RequestStateMachine.Action, _ connection: OpaquePointer, _ url: UnsafePointer<CChar>,
        _ method: UnsafePointer<CChar>, _ request: RequestState
    ) -> MHD_Result {
        switch action {
        case .continue, .appendBody, .suspend, .send:
            return .YES
        case .discardBody:
            request.body = []
            return .YES
        case .abort:
            // A chunked body far beyond the cap: MHD cannot answer mid-upload, so drop the connection.
            Log.write(.warn, "oversize chunked body aborted", [("bytes", .int(request.machine.bodyBytesSeen))])
            return .NO
        case .reject(let problem, let close):
            return respondWithoutRouting(connection, url, method, request, problem, closeConnection: close)
        case .dispatch:
            return dispatch(connection, url, method, request)
        case .resume:
            guard let deferred = request.deferred, let response = deferred.promise.settledResponse() else {
                _ = request.machine.resumed(settled: false)
                return .YES
            }
            _ = request.machine.resumed(settled: true)
            request.deferred = nil
            return send(
                connection, response, request: request, methodPtr: method, template: deferred.target.template,
                slot: deferred.target.metrics, requestId: deferred.requestId)
        }
    }

    /// What the header section says about framing, before any body byte is read.
    private func verdict(
        _ connection: OpaquePointer, _ method: UnsafePointer<CChar>, _ version: UnsafePointer<CChar>?,
        queryArguments: Int
    ) -> RequestStateMachine.HeadVerdict {
        // The head stays in the connection's memory pool until the answer is sent, and the answer's
        // header section is built in what is left: keep room for it (see `answerReserve`).
        let fields = Int(MHD_get_connection_values(connection, .HEADER_KIND, nil, nil))
        if cmhd_request_header_size(connection) + fields * ServerCore.fieldRecordBytes + ServerCore.answerReserve > headerMemory {
            return .headTooLarge(memory: headerMemory, reserve: ServerCore.answerReserve)
        }
        if let problem = HeaderSection.framingProblem(connection, method: method, version: version) {
            return .malformed(detail: problem)
        }
        if queryArguments > maxQueryArguments { return .tooManyQueryArguments(count: queryArguments) }
        if HeaderSection.announcedLength(connection, exceeds: maxBodyBytes) { return .announcedBodyTooLarge }
        return .acceptable
    }

    /// Routes and runs the handler; every outcome ends in exactly one queued response (or a park).
    private func dispatch(
        _ connection: OpaquePointer, _ url: UnsafePointer<CChar>, _ methodPtr: UnsafePointer<CChar>,
        _ state: RequestState
    ) -> MHD_Result {
        let requestId = incomingRequestId(connection)
        let path = UnsafeBufferPointer(start: UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self), count: strlen(url))
        let body = state.body
        state.body = []
        let outcome = responder.respond(method: HTTPMethod.parse(methodPtr), path: path) { target, method, values in
            HTTPRequest(
                source: .connection(connection), method: method, path: nil, rawPath: path, rawQuery: state.query,
                routeTemplate: target.template,
                requestId: requestId, body: body, parameterNames: target.parameterNames, parameterValues: values)
        }
        switch outcome {
        case .refused(let problem, let template, let slot):
            _ = state.machine.handlerReturned(deferred: false)
            return send(
                connection, problem.response, request: state, methodPtr: methodPtr, template: template,
                slot: slot ?? metrics.unmatched, requestId: requestId)
        case .answered(let response, let target):
            _ = state.machine.handlerReturned(deferred: false)
            return send(
                connection, response, request: state, methodPtr: methodPtr, template: target.template,
                slot: target.metrics, requestId: requestId)
        case .deferred(let start, let target, _):
            let promise = ResponsePromise(template: target.template, requestId: requestId, registry: parked)
            start(promise)
            state.deferred = (promise, target, requestId)
            guard case .suspend = state.machine.handlerReturned(deferred: true) else { return .YES }
            guard let settled = promise.parkUnlessSettled(connection) else { return .YES }
            // Settled before it could park: answer at once.
            _ = state.machine.resumed(settled: true)
            state.deferred = nil
            return send(
                connection, settled, request: state, methodPtr: methodPtr, template: target.template,
                slot: target.metrics, requestId: requestId)
        }
    }

    /// For answers decided before routing (framing, limits): the route only labels log and metrics.
    private func respondWithoutRouting(
        _ connection: OpaquePointer, _ url: UnsafePointer<CChar>, _ methodPtr: UnsafePointer<CChar>,
        _ state: RequestState, _ problem: Problem, closeConnection: Bool
    ) -> MHD_Result {
        let path = UnsafeBufferPointer(start: UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self), count: strlen(url))
        var captures: [Range<Int>] = []
        let node = validatePath(path) == nil ? responder.table.match(path, captures: &captures) : nil
        var response = problem.response
        if closeConnection { response.headers.append(("Connection", "close")) }
        return send(
            connection, response, request: state, methodPtr: methodPtr, template: node?.template,
            slot: node?.metrics ?? metrics.unmatched, requestId: incomingRequestId(connection))
    }

    private func incomingRequestId(_ connection: OpaquePointer) -> String {
        if let v = MHD_lookup_connection_value(connection, .HEADER_KIND, "X-Request-Id"), let id = RequestID.sanitize(v) {
            return id
        }
        return RequestID.next()
    }

    /// Queues `response` with `X-Request-Id` (and `Connection: close` while draining), then records
    /// metrics and the access-log line.
    private func send(
        _ connection: OpaquePointer, _ response: HTTPResponse, request: RequestState,
        methodPtr: UnsafePointer<CChar>, template: String?, slot: RouteMetrics, requestId: String
    ) -> MHD_Result {
        let mhdResponse: OpaquePointer?
        var startStream: (() -> Void)?
        switch response.content {
        case .deferred:
            preconditionFailure("a deferred response reached send() unsettled")
        case .stream(let maxPendingBytes, let start):
            let stream = EventStream(maxPendingBytes: maxPendingBytes, registry: streams, monitor: peerMonitor, budget: streamBudget)
            stream.attach(connection)
            if !streams.add(stream) { stream.end() }  // the server is stopping: the body ends at once
            request.stream = stream
            request.machine.streamQueued()
            mhdResponse = cmhd_create_stream_response(eventStreamReader, Unmanaged.passRetained(stream).toOpaque(), eventStreamRelease)
            if mhdResponse == nil { streams.remove(stream) }
            startStream = { start(stream) }
        case .bytes(let body), .notModified(representation: let body):
            // A 304 gets the 200's bytes: MHD sends none of them, only their length as Content-Length
            // (with an empty buffer it would send `Content-Length: 0`, which RFC 9110 §8.6 forbids).
            // The response owns a copy: nothing of `body` is used after this call.
            mhdResponse = body.withUnsafeBytes { cmhd_response_copying($0.baseAddress, $0.count) }
        }
        guard let mhdResponse else {
            Log.write(.error, "could not create a response", [("request_id", .string(requestId))])
            return .NO
        }
        defer { MHD_destroy_response(mhdResponse) }
        for (name, value) in response.headers {
            if asciiCaseInsensitiveEquals(name, "Content-Length") || asciiCaseInsensitiveEquals(name, "Transfer-Encoding")
                || asciiCaseInsensitiveEquals(name, "X-Request-Id")
            {
                continue
            }
            // Explicit withCString: the implicit String-to-pointer conversion heap-allocates a copy of
            // every short (inline) string, and these run for every header of every response.
            let added = name.withCString { n in value.withCString { v in MHD_add_response_header(mhdResponse, n, v) } }
            if added != .YES {
                Log.write(.warn, "response header rejected", [("header", .string(name)), ("request_id", .string(requestId))])
            }
        }
        _ = requestId.withCString { MHD_add_response_header(mhdResponse, "X-Request-Id", $0) }
        if draining.load(ordering: .relaxed) {
            _ = MHD_add_response_header(mhdResponse, "Connection", "close")
        }
        let result = MHD_queue_response(connection, UInt32(response.status), mhdResponse)
        if result == .YES {
            request.requestId = requestId
            startStream?()
        }

        let duration = monotonicMicros() - request.startMicros
        slot.record(status: response.status, durationMicros: duration)
        if accessLog && Log.isEnabled(.info) {
            writeAccessLog(
                methodPtr: methodPtr, template: template, status: response.status, durationMicros: duration,
                requestId: requestId)
        }
        if result != .YES {
            Log.write(.error, "could not queue the response", [("status", .int(response.status)), ("request_id", .string(requestId))])
        }
        return result
    }

    private func writeAccessLog(
        methodPtr: UnsafePointer<CChar>, template: String?, status: Int, durationMicros: Int,
        requestId: String
    ) {
        let method = UnsafeBufferPointer(
            start: UnsafeRawPointer(methodPtr).assumingMemoryBound(to: UInt8.self),
            count: min(strlen(methodPtr), 32))
        var out = JSONWriter(reservingCapacity: 200)
        out.object { line in
            Log.begin(&line, level: .info, msg: "request")
            line.key("method")
            line.string(utf8: method.span)
            line.member("route", template)
            line.member("status", status)
            line.member("duration_us", durationMicros)
            line.member("request_id", requestId)
        }
        out.raw("\n")
        Log.emit(out.bytes)
    }
}

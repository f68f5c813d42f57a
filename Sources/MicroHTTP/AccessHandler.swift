internal import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The request flow through MHD's access handler (see docs/mhd-sqlite-notes.md):
/// 1. first call (`*req_cls == nil`): headers only. Create the state. Answer at once only for an
///    announced oversize body (413; MHD then skips the body and closes the connection). Never answer
///    anything else here: MHD 0.9.75 treats a response queued in the first call as "early" and drops
///    keep-alive.
/// 2. body calls (`*upload_data_size > 0`): append up to the cap, count and discard beyond it, and
///    always consume (`*upload_data_size = 0`), or MHD repeats the same data.
/// 3. final call: route, run the handler, queue the response. A deferred response parks the connection
///    (MHD suspend) until its promise is settled; MHD then calls once more (4) and that call answers.
extension ServerCore {
    func handle(_ connection: OpaquePointer, _ url: UnsafePointer<CChar>, _ method: UnsafePointer<CChar>,
                _ version: UnsafePointer<CChar>?, _ uploadData: UnsafePointer<CChar>?, _ uploadSize: UnsafeMutablePointer<Int>,
                _ reqCls: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> MHD_Result {
        guard let existing = reqCls.pointee else {
            let state = RequestState(startMicros: monotonicMicros())
            reqCls.pointee = Unmanaged.passRetained(state).toOpaque()
            inFlight.wrappingAdd(1, ordering: .relaxed)
            metrics.requestStarted()
            if hasAmbiguousFraming(connection) {
                // RFC 9112 §6.3: Content-Length with Transfer-Encoding, or differing Content-Lengths, are
                // request-smuggling shapes. Answer now: MHD then closes without reading the body.
                state.responded = true
                return respondWithoutRouting(connection, url, method, state,
                                             Problem.badRequest("The request has conflicting or unsupported Content-Length/Transfer-Encoding headers."))
            }
            if lacksHost(connection, version) {
                // RFC 9112 §3.2: an HTTP/1.1 request without Host is a 400 (MHD lets it through unless
                // strict, and then answers with HTML and rejects more than the RFC does).
                state.responded = true
                return respondWithoutRouting(connection, url, method, state,
                                             Problem.badRequest("An HTTP/1.1 request must have a Host header."))
            }
            if announcedBodyTooLarge(connection) {
                state.responded = true
                return respondWithoutRouting(connection, url, method, state, Problem.payloadTooLarge(limit: maxBodyBytes))
            }
            return .YES
        }
        let state = Unmanaged<RequestState>.fromOpaque(existing).takeUnretainedValue()

        let size = uploadSize.pointee
        if size > 0 {
            state.bodyBytesSeen += size
            if state.tooLarge && state.bodyBytesSeen > discardLimit {
                // A chunked body far beyond the cap: MHD cannot answer mid-upload, so instead of reading
                // forever, drop the connection (the client sees a reset).
                Log.write(.warn, "oversize chunked body aborted", [("bytes", .int(state.bodyBytesSeen))])
                return .NO
            }
            if !state.tooLarge {
                if state.body.count + size > maxBodyBytes {
                    state.tooLarge = true
                    state.body = []
                } else if let uploadData {
                    state.body.append(contentsOf: UnsafeRawBufferPointer(start: uploadData, count: size))
                }
            }
            uploadSize.pointee = 0
            return .YES
        }

        if let deferred = state.deferred {
            // Resumed by the promise: answer with what it was settled with.
            guard let response = deferred.promise.settledResponse() else { return .YES }
            state.deferred = nil
            return send(connection, response, state: state, methodPtr: method, template: deferred.target.template,
                        slot: deferred.target.metrics, requestId: deferred.requestId)
        }
        if state.responded { return .YES }
        state.responded = true
        if state.tooLarge {
            return respondWithoutRouting(connection, url, method, state, Problem.payloadTooLarge(limit: maxBodyBytes))
        }
        return dispatch(connection, url, method, state)
    }

    /// How much of an oversize chunked body is read and discarded before the connection is dropped.
    var discardLimit: Int { max(maxBodyBytes &* 16, 1 << 20) }

    /// Content-Length together with Transfer-Encoding, more than one Content-Length header, or a
    /// Transfer-Encoding other than `chunked` (RFC 9112 §6.1: its length cannot be determined; MHD
    /// would wait for the connection to close). Only requests announcing a body pay for the header walk.
    private func hasAmbiguousFraming(_ connection: OpaquePointer) -> Bool {
        if let te = MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") {
            if MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") != nil { return true }
            return !isChunkedOnly(te)
        }
        guard MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length") != nil else { return false }
        var count = 0
        withUnsafeMutablePointer(to: &count) { p in
            _ = MHD_get_connection_values(connection, .HEADER_KIND, contentLengthCounter, UnsafeMutableRawPointer(p))
        }
        return count > 1
    }

    private func lacksHost(_ connection: OpaquePointer, _ version: UnsafePointer<CChar>?) -> Bool {
        guard MHD_lookup_connection_value(connection, .HEADER_KIND, "Host") == nil, let version else { return false }
        return strcmp(version, "HTTP/1.1") == 0
    }

    /// Exactly `chunked`, in any case: the only coding MHD decodes (it trims the header value itself).
    private func isChunkedOnly(_ value: UnsafePointer<CChar>) -> Bool { strcasecmp(value, "chunked") == 0 }

    /// Content-Length over the cap (only when no Transfer-Encoding: then MHD ignores Content-Length).
    private func announcedBodyTooLarge(_ connection: OpaquePointer) -> Bool {
        guard let cl = MHD_lookup_connection_value(connection, .HEADER_KIND, "Content-Length"),
              MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding") == nil else { return false }
        var value = 0
        var i = 0
        while cl[i] != 0 {
            let b = UInt8(bitPattern: cl[i])
            guard b >= 0x30 && b <= 0x39 else { return false }  // MHD itself rejects a malformed value
            let (m, o1) = value.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(Int(b - 0x30))
            if o1 || o2 { return true }
            value = a
            i += 1
        }
        return value > maxBodyBytes
    }

    /// Routes and runs the handler; every outcome ends in exactly one queued response.
    private func dispatch(_ connection: OpaquePointer, _ url: UnsafePointer<CChar>, _ methodPtr: UnsafePointer<CChar>,
                          _ state: RequestState) -> MHD_Result {
        let requestId = incomingRequestId(connection)
        let method = HTTPMethod.parse(methodPtr)
        let path = UnsafeBufferPointer(start: UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self), count: strlen(url))

        switch table.resolve(method: method, path: path) {
        case .refused(let problem, let template, let slot):
            return send(connection, problem.response, state: state, methodPtr: methodPtr, template: template,
                        slot: slot ?? metrics.unmatched, requestId: requestId)
        case .matched(let target, let method, let values):
            let request = HTTPRequest(source: .connection(connection), method: method, path: nil, rawPath: path,
                                      routeTemplate: target.template, requestId: requestId, body: state.body,
                                      parameterNames: target.parameterNames, parameterValues: values)
            state.body = []
            let response = RouteTable.run(target, request)
            if case .deferred(let start) = response.content {
                let promise = ResponsePromise(template: target.template, requestId: requestId, registry: parked)
                start(promise)
                guard let settled = promise.parkUnlessSettled(connection) else {
                    state.deferred = (promise, target, requestId)
                    return .YES
                }
                return send(connection, settled, state: state, methodPtr: methodPtr, template: target.template,
                            slot: target.metrics, requestId: requestId)
            }
            return send(connection, response, state: state, methodPtr: methodPtr, template: target.template,
                        slot: target.metrics, requestId: requestId)
        }
    }

    /// For answers decided before the body is known (413): the route only labels log and metrics.
    private func respondWithoutRouting(_ connection: OpaquePointer, _ url: UnsafePointer<CChar>, _ methodPtr: UnsafePointer<CChar>,
                                       _ state: RequestState, _ problem: Problem) -> MHD_Result {
        let path = UnsafeBufferPointer(start: UnsafeRawPointer(url).assumingMemoryBound(to: UInt8.self), count: strlen(url))
        var captures: [Range<Int>] = []
        let node = validatePath(path) == nil ? table.match(path, captures: &captures) : nil
        return send(connection, problem.response, state: state, methodPtr: methodPtr, template: node?.template,
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
    private func send(_ connection: OpaquePointer, _ response: HTTPResponse, state: RequestState,
                      methodPtr: UnsafePointer<CChar>, template: String?, slot: RouteMetrics, requestId: String) -> MHD_Result {
        let mhdResponse: OpaquePointer?
        var startStream: (() -> Void)?
        switch response.content {
        case .deferred:
            preconditionFailure("a deferred response reached send() unsettled")
        case .stream(let maxPendingBytes, let start):
            let stream = EventStream(maxPendingBytes: maxPendingBytes, registry: streams, monitor: peerMonitor)
            stream.attach(connection)
            if !streams.add(stream) { stream.end() }  // the server is stopping: the body ends at once
            state.stream = stream
            mhdResponse = cmhd_create_stream_response(eventStreamReader, Unmanaged.passRetained(stream).toOpaque(), eventStreamRelease)
            if mhdResponse == nil { streams.remove(stream) }
            startStream = { start(stream) }
        case .bytes(let body) where body.count >= SharedResponseBody.minimumBytes:
            mhdResponse = SharedResponseBody.response(body)
        case .bytes(let body):
            mhdResponse = body.withUnsafeBytes { raw in
                // MUST_COPY: MHD copies now, so the Swift array need not outlive this call.
                MHD_create_response_from_buffer(raw.count, raw.count == 0 ? nil : UnsafeMutableRawPointer(mutating: raw.baseAddress),
                                                .RESPMEM_MUST_COPY)
            }
        }
        guard let mhdResponse else {
            Log.write(.error, "could not create a response", [("request_id", .string(requestId))])
            return .NO
        }
        defer { MHD_destroy_response(mhdResponse) }
        for (name, value) in response.headers {
            if asciiCaseInsensitiveEquals(name, "Content-Length") || asciiCaseInsensitiveEquals(name, "Transfer-Encoding")
                || asciiCaseInsensitiveEquals(name, "X-Request-Id") {
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
        if result == .YES { startStream?() }

        let duration = monotonicMicros() - state.startMicros
        slot.record(status: response.status, durationMicros: duration)
        if accessLog && Log.isEnabled(.info) {
            writeAccessLog(methodPtr: methodPtr, template: template, status: response.status, durationMicros: duration,
                           requestId: requestId)
        }
        if result != .YES {
            Log.write(.error, "could not queue the response", [("status", .int(response.status)), ("request_id", .string(requestId))])
        }
        return result
    }

    private func writeAccessLog(methodPtr: UnsafePointer<CChar>, template: String?, status: Int, durationMicros: Int,
                                requestId: String) {
        var out = JSONOut(capacity: 200)
        Log.begin(&out, level: .info, msg: "request")
        out.raw(",\"method\":")
        let n = min(strlen(methodPtr), 32)
        out.string(utf8: UnsafeBufferPointer(start: UnsafeRawPointer(methodPtr).assumingMemoryBound(to: UInt8.self), count: n))
        out.raw(",\"route\":")
        if let template { out.string(template) } else { out.raw("null") }
        out.raw(",\"status\":")
        out.int(status)
        out.raw(",\"duration_us\":")
        out.int(durationMicros)
        out.raw(",\"request_id\":")
        out.string(requestId)
        out.raw("}\n")
        Log.emit(out.bytes)
    }
}

/// A response body MHD sends straight from the Swift array's storage instead of a copy: the array
/// is kept alive (retained in this box) until MHD frees the response, after the last byte went out.
/// Worth it for larger bodies (cached decisions are shared by many responses): it saves a malloc, a
/// copy and a free per response, where small bodies are cheaper to copy than to box.
private final class SharedResponseBody {
    static let minimumBytes = 512
    /// Never mutated after init, so the native array's heap storage (and this pointer) stay put for
    /// the box's lifetime.
    let bytes: [UInt8]
    let base: UnsafeMutableRawPointer

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.base = bytes.withUnsafeBytes { UnsafeMutableRawPointer(mutating: $0.baseAddress!) }
    }

    /// An MHD response over `bytes` (non-empty), or nil when MHD could not create one.
    static func response(_ bytes: [UInt8]) -> OpaquePointer? {
        let box = Unmanaged.passRetained(SharedResponseBody(bytes))
        let response = MHD_create_response_from_buffer_with_free_callback_cls(
            bytes.count, box.takeUnretainedValue().base, releaseSharedResponseBody, box.toOpaque())
        if response == nil { box.release() }
        return response
    }
}

/// MHD's free callback for a `SharedResponseBody` response: drops the box's retain.
private let releaseSharedResponseBody: MHD_ContentReaderFreeCallback = { cls in
    guard let cls else { return }
    Unmanaged<SharedResponseBody>.fromOpaque(cls).release()
}

/// Counts Content-Length headers into the Int that `cls` points to.
private let contentLengthCounter: MHD_KeyValueIterator = { cls, _, key, _ in
    guard let cls, let key else { return .YES }
    if strcasecmp(key, "Content-Length") == 0 { cls.assumingMemoryBound(to: Int.self).pointee += 1 }
    return .YES
}

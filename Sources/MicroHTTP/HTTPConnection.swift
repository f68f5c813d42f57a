internal import CMicroHTTPD
import Observability

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the request lifecycle (`ServerCore.handle`) needs from the connection under a request:
/// libmicrohttpd's (`MHDConnection`), or a test's fake one (TestSupport's `FakeConnection`), so that
/// socket-free tests run the same lifecycle as the server.
@_spi(Testing) public protocol HTTPConnection: Sendable {
    /// Calls `body` with the bytes of the first value of a request header (nil when absent); the name
    /// is case-insensitive. The bytes are borrowed for the call.
    func withHeader(_ name: String, _ body: (Span<UInt8>?) -> Void)
    /// Bytes of the connection's memory the head takes (MHD's pool), 0 where there is no such limit.
    func headMemoryUsed() -> Int
    /// Why the header section's framing is refused (a 400 that closes the connection), or nil.
    func framingProblem(method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?) -> String?
    /// The connection's socket, for watching a parked request's peer; -1 when there is none.
    var socket: Int32 { get }
    /// Parks the connection until `resume` (called by the promise that will carry the answer, under
    /// its lock, so a resume never precedes its suspend).
    func suspend()
    /// Wakes a suspended connection; from any thread.
    func resume()
    /// Queues the answer; false when it could not be.
    func queue(status: Int, headers: SentHeaders, body: SentBody) -> Bool
}

/// The header lines of an answer as sent: the response's own, without those the server manages
/// (`Content-Length`, `Transfer-Encoding`, `X-Request-Id`), then `X-Request-Id` and, while the
/// server drains, `Connection: close`.
@_spi(Testing) public struct SentHeaders {
    let headers: [(String, String)]
    public let requestId: String
    public let closing: Bool

    public func forEachLine(_ body: (String, String) -> Void) {
        for (name, value) in headers where !SentHeaders.isManaged(name) { body(name, value) }
        body("X-Request-Id", requestId)
        if closing { body("Connection", "close") }
    }

    static func isManaged(_ name: String) -> Bool {
        asciiCaseInsensitiveEquals(name, "Content-Length") || asciiCaseInsensitiveEquals(name, "Transfer-Encoding")
            || asciiCaseInsensitiveEquals(name, "X-Request-Id")
    }
}

/// The body of an answer as sent.
@_spi(Testing) public enum SentBody {
    case bytes([UInt8])
    /// A 304: none of these bytes is sent, only their count as Content-Length (RFC 9110 §8.6).
    case lengthOnly([UInt8])
    /// A chunked body written over time by the stream.
    case stream(EventStream)
}

/// libmicrohttpd's connection, borrowed for the callbacks of one request.
///
/// `@unchecked Sendable` invariant: the pointer is used on the connection's worker thread during
/// MHD's callbacks, except `resume` (MHD_resume_connection is safe from any thread), which the
/// promise calls at most once per `suspend`, under its lock.
struct MHDConnection: HTTPConnection, @unchecked Sendable {
    let pointer: OpaquePointer

    func withHeader(_ name: String, _ body: (Span<UInt8>?) -> Void) {
        // withCString: the implicit conversion would heap-allocate a copy of a short name.
        let v = name.withCString { MHD_lookup_connection_value(pointer, .HEADER_KIND, $0) }
        guard let v else { return body(nil) }
        body(UnsafeBufferPointer(start: UnsafeRawPointer(v).assumingMemoryBound(to: UInt8.self), count: strlen(v)).span)
    }

    func headMemoryUsed() -> Int {
        let fields = Int(MHD_get_connection_values(pointer, .HEADER_KIND, nil, nil))
        return cmhd_request_header_size(pointer) + fields * ServerCore.fieldRecordBytes
    }

    func framingProblem(method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?) -> String? {
        HeaderSection.framingProblem(pointer, method: method, version: version)
    }

    var socket: Int32 { cmhd_connection_fd(pointer) }

    func suspend() { MHD_suspend_connection(pointer) }

    func resume() { EventLoop.resume(pointer) }

    func queue(status: Int, headers: SentHeaders, body: SentBody) -> Bool {
        let response: OpaquePointer?
        switch body {
        case .stream(let stream):
            stream.attach(pointer)
            response = cmhd_create_stream_response(eventStreamReader, Unmanaged.passRetained(stream).toOpaque(), eventStreamRelease)
        case .bytes(let bytes), .lengthOnly(let bytes):
            // A 304 gets the 200's bytes: MHD sends none of them, only their length as Content-Length
            // (with an empty buffer it would send `Content-Length: 0`, which RFC 9110 §8.6 forbids).
            response = ResponseBytes.response(over: bytes)
        }
        guard let response else {
            Log.write(.error, "could not create a response", [("request_id", .string(headers.requestId))])
            return false
        }
        defer { MHD_destroy_response(response) }
        headers.forEachLine { name, value in
            // Explicit withCString: the implicit String-to-pointer conversion heap-allocates a copy of
            // every short (inline) string, and these run for every header of every response.
            let added = name.withCString { n in value.withCString { v in MHD_add_response_header(response, n, v) } }
            if added != .YES {
                Log.write(.warn, "response header rejected", [("header", .string(name)), ("request_id", .string(headers.requestId))])
            }
        }
        return MHD_queue_response(pointer, UInt32(status), response) == .YES
    }
}

/// A body MHD sends without a copy: the response holds this box (and so the array's storage)
/// retained until MHD releases the response. The array is never mutated while boxed, so its storage,
/// and the address MHD was given, stay put. Decisions are answered from cached arrays: this saves a
/// malloc and a copy of a few kilobytes per answer.
private final class ResponseBytes {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    static func response(over bytes: [UInt8]) -> OpaquePointer? {
        if bytes.isEmpty { return cmhd_response_copying(nil, 0) }
        let owner = Unmanaged.passRetained(ResponseBytes(bytes))
        return owner.takeUnretainedValue().bytes.withUnsafeBytes { raw in
            cmhd_response_borrowing(raw.baseAddress, raw.count, releaseResponseBytes, owner.toOpaque())
        }
    }
}

/// MHD's free callback for `ResponseBytes` (any thread, once per response).
private let releaseResponseBytes: MHD_ContentReaderFreeCallback = { owner in
    if let owner { Unmanaged<ResponseBytes>.fromOpaque(owner).release() }
}

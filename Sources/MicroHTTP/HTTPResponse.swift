/// What a handler answers. Headers are sent as given; `Content-Length` is computed by the server
/// (a handler-supplied `Content-Length` or `Transfer-Encoding` is ignored).
public struct HTTPResponse: Sendable {
    /// How the body is produced: complete byte buffers, later (`deferred`), or over time (`stream`).
    /// `RequestStateMachine` turns each into its action (`send`, `park`, `stream`).
    enum Content: Sendable {
        case bytes([UInt8])
        /// A 304: no body is sent; `representation` is the 200's body, whose length is the
        /// Content-Length (RFC 9110 §8.6).
        case notModified(representation: [UInt8])
        /// Started by the server with the promise that will carry the real response.
        case deferred(@Sendable (ResponsePromise) -> Void)
        /// A chunked body written over time (Server-Sent Events): the server queues the response, then
        /// calls `start` with the stream to write to.
        case stream(maxPendingBytes: Int, start: @Sendable (EventStream) -> Void)
    }

    /// Whether the server may encode the body for the client (see `ContentCoding`).
    public enum Compression: Sendable {
        case none
        /// gzip when the request's `Accept-Encoding` takes it and the body is large enough; the
        /// response then varies by `Accept-Encoding`.
        case gzipIfAccepted
        /// As `gzipIfAccepted`, for a response whose own `Vary` header already names
        /// `Accept-Encoding`: its headers are not scanned for one (the decision route, the hottest).
        case gzipIfAcceptedVaryIncluded
    }

    public var status: Int
    /// Response headers in order; the helpers put `Content-Type` here.
    public var headers: [(String, String)]
    var content: Content
    /// `.none` unless the handler allows it.
    public var compression: Compression = .none
    /// Who made the request, by name, for the access log (never a credential); nil: not logged.
    public var actor: String?

    /// The complete body.
    public var body: [UInt8] {
        get {
            switch content {
            case .bytes(let b): return b
            case .deferred, .stream, .notModified: return []
            }
        }
        set { content = .bytes(newValue) }
    }

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.content = .bytes(body)
    }

    /// An `application/json` response with the given (already encoded) body.
    public static func json(_ status: Int, _ body: [UInt8], headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    /// A text response with an explicit content type (e.g. `text/plain; version=0.0.4; charset=utf-8`).
    public static func text(_ status: Int, _ body: String, contentType: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", contentType)], body: Array(body.utf8))
    }

    /// A response that is produced later, without holding the worker thread: the server parks the
    /// connection (MHD suspend), then calls `start` with a promise; whoever settles the promise, on
    /// any thread, resumes the connection with the real response. `start` must not use the request.
    public static func deferred(_ start: @escaping @Sendable (ResponsePromise) -> Void) -> HTTPResponse {
        var response = HTTPResponse(status: 200)
        response.content = .deferred(start)
        return response
    }

    /// A long-lived chunked response (e.g. `text/event-stream`) with these headers. After the headers are
    /// queued, `start` gets the stream: write to it from any thread, and `finish` it (or not: the client
    /// leaving, the server stopping or more than `maxPendingBytes` waiting for a slow reader close it).
    /// `start` must not use the request.
    public static func stream(
        status: Int = 200, headers: [(String, String)], maxPendingBytes: Int,
        _ start: @escaping @Sendable (EventStream) -> Void
    ) -> HTTPResponse {
        var response = HTTPResponse(status: status, headers: headers)
        response.content = .stream(maxPendingBytes: maxPendingBytes, start: start)
        return response
    }

    /// Whether this is a `deferred` placeholder rather than an answer.
    public var isDeferred: Bool {
        if case .deferred = content { return true }
        return false
    }

    /// 304 Not Modified for a representation whose 200 body is `representation`: no body is sent,
    /// and its Content-Length is that body's length (or absent), never a misleading 0.
    public static func notModified(headers: [(String, String)] = [], representation: [UInt8]) -> HTTPResponse {
        var response = HTTPResponse(status: 304, headers: headers)
        response.content = .notModified(representation: representation)
        return response
    }

    /// A response without a body (e.g. 204).
    public static func empty(_ status: Int, headers: [(String, String)] = []) -> HTTPResponse {
        HTTPResponse(status: status, headers: headers, body: [])
    }

    /// The first header value with this name (case-insensitive), for tests and middleware.
    public func header(_ name: String) -> String? {
        headers.first { asciiCaseInsensitiveEquals($0.0, name) }?.1
    }
}

func asciiCaseInsensitiveEquals(_ a: String, _ b: String) -> Bool {
    let a = a.utf8, b = b.utf8
    guard a.count == b.count else { return false }
    for (x, y) in zip(a, b) where x != y {
        let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
        let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
        if lx != ly { return false }
    }
    return true
}

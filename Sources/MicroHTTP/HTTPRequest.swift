internal import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One request, as a handler sees it. Valid only during the handler call: header and query lookups
/// read the MHD connection, and return nil once the handler has returned. Do not keep it.
public final class HTTPRequest {
    public let method: HTTPMethod
    /// The raw path without the query, exactly as received (not percent-decoded). Built on first use
    /// (most handlers only need their path parameters); "" if first read after the handler returned.
    public var path: String {
        if let path = pathString { return path }
        guard isValid, let rawPath else { return "" }
        let made = String(decoding: rawPath, as: UTF8.self)
        pathString = made
        return made
    }
    /// The matched route template, e.g. `/v1/sheets/{sheetId}`.
    public let routeTemplate: String
    /// The request id echoed in `X-Request-Id` and the access log.
    public let requestId: String
    /// The complete body (at most `maxBodyBytes`).
    public let body: [UInt8]

    /// Where headers and query arguments come from.
    enum Source {
        /// The live MHD connection (borrowed for the handler call).
        case connection(OpaquePointer)
        /// Given values (socket-free tests, `Router.respond`).
        case detached(headers: [(String, String)], query: [(name: String, value: String)])
    }

    private let source: Source
    /// The path: a String already (detached), or MHD's bytes (valid during the handler call).
    private var pathString: String?
    private let rawPath: UnsafeBufferPointer<UInt8>?
    /// The query as received (the bytes after `?`, not decoded), for a request from a connection:
    /// sheetd's copy, taken before libmicrohttpd could parse it.
    private let rawQuery: [UInt8]
    private let parameterNames: [String]
    private let parameterValues: [String]
    /// Cleared by the server when the handler returns; guards the borrowed connection.
    var isValid = true

    init(
        source: Source, method: HTTPMethod, path: String?, rawPath: UnsafeBufferPointer<UInt8>? = nil,
        rawQuery: [UInt8] = [], routeTemplate: String, requestId: String, body: [UInt8], parameterNames: [String], parameterValues: [String]
    ) {
        self.source = source
        self.method = method
        self.pathString = path
        self.rawPath = rawPath
        self.rawQuery = rawQuery
        self.routeTemplate = routeTemplate
        self.requestId = requestId
        self.body = body
        self.parameterNames = parameterNames
        self.parameterValues = parameterValues
    }

    /// A request without a connection, for testing handlers directly. `query` holds decoded pairs.
    public convenience init(
        method: HTTPMethod, path: String, routeTemplate: String, requestId: String = "test-request",
        body: [UInt8] = [], pathParameters: [(String, String)] = [], headers: [(String, String)] = [],
        query: [(String, String)] = []
    ) {
        self.init(
            source: .detached(headers: headers, query: query.map { (name: $0.0, value: $0.1) }), method: method,
            path: path, routeTemplate: routeTemplate, requestId: requestId, body: body,
            parameterNames: pathParameters.map(\.0), parameterValues: pathParameters.map(\.1))
    }

    /// The percent-decoded value of a template parameter (`{name}`), nil for an unknown name.
    public func pathParameter(_ name: String) -> String? {
        for (i, n) in parameterNames.enumerated() where n == name { return parameterValues[i] }
        return nil
    }

    /// The first value of a request header; the name is case-insensitive.
    public func header(_ name: String) -> String? {
        guard isValid else { return nil }
        switch source {
        case .connection(let connection):
            // withCString: the implicit conversion would heap-allocate a copy of a short name.
            guard let v = name.withCString({ MHD_lookup_connection_value(connection, .HEADER_KIND, $0) }) else { return nil }
            return String(cString: v)
        case .detached(let headers, _):
            return headers.first { asciiCaseInsensitiveEquals($0.0, name) }?.1
        }
    }

    /// Calls `body` with the bytes of the first value of a request header (nil when absent or after
    /// the handler returned), borrowed without copying; the name is case-insensitive. For hot paths that
    /// would otherwise build a String only to look at its bytes. (Not generic: a generic function
    /// called across modules pays a metadata lookup per call.)
    public func withHeaderBytes(_ name: String, _ body: (Span<UInt8>?) -> Void) {
        guard isValid else { return body(nil) }
        switch source {
        case .connection(let connection):
            let v = name.withCString { MHD_lookup_connection_value(connection, .HEADER_KIND, $0) }
            guard let v else { return body(nil) }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(v).assumingMemoryBound(to: UInt8.self), count: strlen(v))
            body(bytes.span)
        case .detached(let headers, _):
            guard var value = headers.first(where: { asciiCaseInsensitiveEquals($0.0, name) })?.1 else { return body(nil) }
            value.withUTF8 { body($0.span) }
        }
    }

    /// Calls `body` with every query argument in the order given (duplicates included): its decoded
    /// name and value bytes (`+` is a space, `%XX` a byte; a name without `=` has an empty value),
    /// borrowed for that call only. Builds no Strings, for hot paths.
    public func forEachQueryItem(_ body: (_ name: Span<UInt8>, _ value: Span<UInt8>) -> Void) {
        guard isValid else { return }
        switch source {
        case .connection:
            rawQuery.withUnsafeBufferPointer { q in
                forEachRawQueryArgument(q) { name, value in
                    withDecodedQueryComponent(name) { n in
                        guard let value else { return body(n.span, UnsafeBufferPointer(start: nil, count: 0).span) }
                        withDecodedQueryComponent(value) { v in body(n.span, v.span) }
                    }
                }
            }
        case .detached(_, let query):
            for var (name, value) in query {
                name.withUTF8 { n in value.withUTF8 { v in body(n.span, v.span) } }
            }
        }
    }

    /// The first value of a query parameter, decoded (`+` is a space); "" when given without `=`,
    /// nil when absent. Names match exactly (case-sensitive).
    public func query(_ name: String) -> String? {
        var found: String?
        let wanted = Array(name.utf8)
        forEachQueryItem { n, v in
            if found == nil && n.equals(wanted) { found = v.utf8String }
        }
        return found
    }

    /// Every query parameter name in the order given, duplicates included (for unknown-parameter checks).
    public func queryNames() -> [String] {
        var names: [String] = []
        forEachQueryItem { n, _ in names.append(n.utf8String) }
        return names
    }
}

@available(*, unavailable, message: "HTTPRequest is confined to the handler call on one MHD worker thread")
extension HTTPRequest: Sendable {}

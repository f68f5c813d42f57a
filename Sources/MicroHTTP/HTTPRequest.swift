/// One request, as a handler sees it. Valid only during the handler call: header lookups read the
/// connection, and return nil once the handler has returned. Do not keep it.
public final class HTTPRequest {
    public let method: HTTPMethod
    /// The raw path without the query, exactly as received (not percent-decoded). Built on first use
    /// (most handlers only need their path parameters); "" if first read after the handler returned.
    public var path: String {
        if let path = pathString { return path }
        guard isValid else { return "" }
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

    /// Where headers come from (borrowed for the handler call).
    private let connection: any HTTPConnection
    private var pathString: String?
    /// The connection's bytes of the path (valid during the handler call).
    private let rawPath: UnsafeBufferPointer<UInt8>
    /// The query as received (the bytes after `?`, not decoded): sheetd's copy, taken before
    /// libmicrohttpd could parse it.
    private let rawQuery: [UInt8]
    private let parameterNames: [String]
    private let parameterValues: [String]
    /// Cleared by the server when the handler returns; guards the borrowed connection.
    var isValid = true

    init(
        connection: any HTTPConnection, method: HTTPMethod, rawPath: UnsafeBufferPointer<UInt8>, rawQuery: [UInt8],
        routeTemplate: String, requestId: String, body: [UInt8], parameterNames: [String], parameterValues: [String]
    ) {
        self.connection = connection
        self.method = method
        self.rawPath = rawPath
        self.rawQuery = rawQuery
        self.routeTemplate = routeTemplate
        self.requestId = requestId
        self.body = body
        self.parameterNames = parameterNames
        self.parameterValues = parameterValues
    }

    /// The percent-decoded value of a template parameter (`{name}`), nil for an unknown name.
    public func pathParameter(_ name: String) -> String? {
        for (i, n) in parameterNames.enumerated() where n == name { return parameterValues[i] }
        return nil
    }

    /// The first value of a request header; the name is case-insensitive.
    public func header(_ name: String) -> String? {
        var value: String?
        withHeaderBytes(name) { value = $0?.utf8String }
        return value
    }

    /// Calls `body` with the bytes of the first value of a request header (nil when absent or after
    /// the handler returned), borrowed without copying; the name is case-insensitive. For hot paths that
    /// would otherwise build a String only to look at its bytes. (Not generic: a generic function
    /// called across modules pays a metadata lookup per call.)
    public func withHeaderBytes(_ name: String, _ body: (Span<UInt8>?) -> Void) {
        guard isValid else { return body(nil) }
        connection.withHeader(name, body)
    }

    /// Calls `body` with every query argument in the order given (duplicates included): its decoded
    /// name and value bytes (`+` is a space, `%XX` a byte; a name without `=` has an empty value),
    /// borrowed for that call only. Builds no Strings, for hot paths.
    public func forEachQueryItem(_ body: (_ name: Span<UInt8>, _ value: Span<UInt8>) -> Void) {
        guard isValid else { return }
        rawQuery.withUnsafeBufferPointer { q in
            forEachRawQueryArgument(q) { name, value in
                withDecodedQueryComponent(name) { n in
                    guard let value else { return body(n.span, UnsafeBufferPointer(start: nil, count: 0).span) }
                    withDecodedQueryComponent(value) { v in body(n.span, v.span) }
                }
            }
        }
    }

    /// The query as received (not decoded), for a handler that memoizes what it parses from it;
    /// empty after the handler returned.
    public var rawQueryBytes: [UInt8] { isValid ? rawQuery : [] }

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

internal import CMicroHTTPD

/// One request, as a handler sees it. Valid only during the handler call: header and query lookups
/// read the MHD connection, and return nil once the handler has returned. Do not keep it.
public final class HTTPRequest {
    public let method: HTTPMethod
    /// The raw path without the query, exactly as received (not percent-decoded).
    public let path: String
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
    private let parameterNames: [String]
    private let parameterValues: [String]
    private var queryItems: [(name: String, value: String)]?
    /// Cleared by the server when the handler returns; guards the borrowed connection.
    var isValid = true

    init(source: Source, method: HTTPMethod, path: String, routeTemplate: String, requestId: String,
         body: [UInt8], parameterNames: [String], parameterValues: [String]) {
        self.source = source
        self.method = method
        self.path = path
        self.routeTemplate = routeTemplate
        self.requestId = requestId
        self.body = body
        self.parameterNames = parameterNames
        self.parameterValues = parameterValues
    }

    /// A request without a connection, for testing handlers directly. `query` holds decoded pairs.
    public convenience init(method: HTTPMethod, path: String, routeTemplate: String, requestId: String = "test-request",
                            body: [UInt8] = [], pathParameters: [(String, String)] = [], headers: [(String, String)] = [],
                            query: [(String, String)] = []) {
        self.init(source: .detached(headers: headers, query: query.map { (name: $0.0, value: $0.1) }), method: method,
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

    /// The first value of a query parameter, decoded (`+` is a space); "" when given without `=`,
    /// nil when absent. Names match exactly (case-sensitive).
    public func query(_ name: String) -> String? {
        loadQuery().first { $0.name == name }?.value
    }

    /// Every query parameter name in the order given, duplicates included (for unknown-parameter checks).
    public func queryNames() -> [String] {
        loadQuery().map(\.name)
    }

    private func loadQuery() -> [(name: String, value: String)] {
        if let q = queryItems { return q }
        var items: [(name: String, value: String)] = []
        items.reserveCapacity(4)
        if isValid {
            switch source {
            case .connection(let connection):
                withUnsafeMutablePointer(to: &items) { p in
                    _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, queryIterator, UnsafeMutableRawPointer(p))
                }
            case .detached(_, let query):
                items = query
            }
        }
        queryItems = items
        return items
    }
}

@available(*, unavailable, message: "HTTPRequest is confined to the handler call on one MHD worker thread")
extension HTTPRequest: Sendable {}

/// Collects query arguments (raw: the daemon's unescape callback is the identity) into the array `cls`
/// points to.
private let queryIterator: MHD_KeyValueIterator = { cls, _, key, value in
    guard let cls, let key else { return .YES }
    let items = cls.assumingMemoryBound(to: [(name: String, value: String)].self)
    items.pointee.append((name: decodeQueryComponent(key), value: value.map(decodeQueryComponent) ?? ""))
    return .YES
}

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

    private let connection: OpaquePointer
    private let parameterNames: [String]
    private let parameterValues: [String]
    private var queryItems: [(name: String, value: String)]?
    /// Cleared by the server when the handler returns; guards the borrowed connection.
    var isValid = true

    init(connection: OpaquePointer, method: HTTPMethod, path: String, routeTemplate: String, requestId: String,
         body: [UInt8], parameterNames: [String], parameterValues: [String]) {
        self.connection = connection
        self.method = method
        self.path = path
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
        guard isValid, let v = MHD_lookup_connection_value(connection, .HEADER_KIND, name) else { return nil }
        return String(cString: v)
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
        if isValid {
            withUnsafeMutablePointer(to: &items) { p in
                _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, queryIterator, UnsafeMutableRawPointer(p))
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

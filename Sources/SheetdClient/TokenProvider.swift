/// Where the client gets the user's bearer token (an HS256 JWT your backend issues).
///
/// ``token()`` is asked before every request: return a cached token and refresh it yourself when it
/// nears its `exp`. When the server still answers 401 (the token expired early, the clock is off, the
/// secret was rotated), the client calls ``refreshToken(rejecting:)`` once and retries with what it
/// returns, as Alamofire's `AuthenticationInterceptor` does; a second 401 fails the call with the 401.
/// Concurrent requests rejected with the same token share one refresh.
public protocol SheetdTokenProvider: Sendable {
    /// The token for the next request.
    func token() async throws -> String
    /// A fresh token, after the server answered 401 to `rejected`: refresh it now (do not return the
    /// cached one), or throw to fail the call.
    func refreshToken(rejecting rejected: String) async throws -> String
}

/// A provider over one closure: ``refreshToken(rejecting:)`` asks the closure again, so a closure
/// that refreshes when its token is near (or past) `exp` gets a second chance after a 401.
public struct ClosureTokenProvider: SheetdTokenProvider {
    private let closure: @Sendable () async throws -> String

    /// A provider asking `closure`.
    public init(_ closure: @escaping @Sendable () async throws -> String) { self.closure = closure }

    /// The closure's token.
    public func token() async throws -> String { try await closure() }

    /// The closure's token, asked again.
    public func refreshToken(rejecting rejected: String) async throws -> String { try await closure() }
}

/// Coalesces refreshes: the requests rejected with one token share a single
/// ``SheetdTokenProvider/refreshToken(rejecting:)``, and a request rejected with a token already
/// replaced gets the replacement without another refresh.
actor TokenRefresher {
    private let provider: any SheetdTokenProvider
    private var refreshing: (rejected: String, task: Task<String, any Error>)?
    private var replaced: (rejected: String, fresh: String)?

    init(_ provider: any SheetdTokenProvider) { self.provider = provider }

    func fresh(rejecting rejected: String) async throws -> String {
        if let replaced, replaced.rejected == rejected { return replaced.fresh }
        if let refreshing, refreshing.rejected == rejected { return try await refreshing.task.value }
        let provider = self.provider
        let task = Task { try await provider.refreshToken(rejecting: rejected) }
        refreshing = (rejected, task)
        defer { if refreshing?.rejected == rejected { refreshing = nil } }
        let fresh = try await task.value
        replaced = (rejected, fresh)
        return fresh
    }
}

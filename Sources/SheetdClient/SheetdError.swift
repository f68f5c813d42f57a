public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An error of a sheetd call: the server's problem+json answer, a transport failure, or an answer the
/// client could not read.
///
/// A 4xx or 5xx answer carries the server's ``Problem`` (`type`, `title`, `status`, `detail`,
/// `invalidParams`); ``invalidParams`` names each field of a 400 at fault.
public struct SheetdError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of failure. A struct over a string, so kinds can be added without breaking callers.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The kind's name.
        public let name: String
        /// The server answered with an error status (see ``SheetdError/problem``).
        public static let server = Kind(name: "server")
        /// The request did not get an answer (connection refused or reset, timeout, DNS, offline):
        /// ``SheetdError/urlError`` says which.
        public static let transport = Kind(name: "transport")
        /// The answer could not be read (not JSON, a missing member, an unexpected status).
        public static let invalidResponse = Kind(name: "invalidResponse")
        /// The token provider threw (``SheetdError/underlying`` is its error).
        public static let token = Kind(name: "token")
        /// The request adapter threw (``SheetdError/underlying`` is its error).
        public static let invalidRequest = Kind(name: "invalidRequest")
        /// The name.
        public var description: String { name }
    }

    /// What failed.
    public var kind: Kind
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The server's problem+json, when it sent one (a non-problem error body is summarised in ``message``).
    public var problem: Problem?
    /// `Retry-After` in seconds (sent as seconds or as an HTTP-date), when the server sent one.
    public var retryAfter: Double?
    /// A readable summary.
    public var message: String
    /// The transport failure as URLSession reported it, so an app can tell `.notConnectedToInternet`
    /// from `.timedOut` (nil for a failure without one, e.g. a stream cut mid-way).
    public var urlError: URLError?
    /// The error the token provider or the request adapter threw, for ``Kind/token`` and ``Kind/invalidRequest``.
    public var underlying: (any Error & Sendable)? { underlyingBox?.error }
    private var underlyingBox: UnderlyingError?

    /// An error of any kind.
    public init(
        kind: Kind, status: Int? = nil, problem: Problem? = nil, retryAfter: Double? = nil, message: String, urlError: URLError? = nil,
        underlying: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.status = status
        self.problem = problem
        self.retryAfter = retryAfter
        self.message = message
        self.urlError = urlError
        self.underlyingBox = underlying.map(UnderlyingError.init)
    }

    /// Equal when everything but ``underlying`` (which has no equality) is.
    public static func == (a: SheetdError, b: SheetdError) -> Bool {
        a.kind == b.kind && a.status == b.status && a.problem == b.problem && a.retryAfter == b.retryAfter && a.message == b.message
            && a.urlError?.code == b.urlError?.code
    }

    private struct UnderlyingError: Sendable {
        let error: any Error & Sendable
    }

    /// The problem's `type` (`urn:sheetd:problem:<slug>`), when there is one.
    public var type: String? { problem?.type }
    /// The problem's `title`, when there is one.
    public var title: String? { problem?.title }
    /// The fields at fault of a 400 (empty otherwise).
    public var invalidParams: [InvalidParam] { problem?.invalidParams ?? [] }

    /// Whether the default ``RetryPolicy`` retries it: 408, 429, 500, 502, 503, 504 and transport
    /// failures other than a cancellation, a bad URL or an untrusted certificate. Never another 4xx.
    public var isRetryable: Bool { RetryPolicy.standard.retries(self) }

    /// The kind, the status and the problem's detail (never a token).
    public var description: String {
        var text = "sheetd \(kind)"
        if let status { text += " \(status)" }
        if let problem { text += " \(problem.type): \(problem.detail)" } else { text += ": \(message)" }
        if let urlError { text += " (URLError \(urlError.code.rawValue))" }
        for param in invalidParams { text += " [\(param.name): \(param.reason)]" }
        return text
    }
}

import Foundation

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
        /// The request did not get an answer (connection refused or reset, timeout, DNS).
        public static let transport = Kind(name: "transport")
        /// The answer could not be read (not JSON, a missing member, an unexpected status).
        public static let invalidResponse = Kind(name: "invalidResponse")
        /// The token closure threw.
        public static let token = Kind(name: "token")
        /// The name.
        public var description: String { name }
    }

    /// What failed.
    public var kind: Kind
    /// The HTTP status, when the server answered.
    public var status: Int?
    /// The server's problem+json, when it sent one (a non-problem error body is summarised in ``message``).
    public var problem: Problem?
    /// `Retry-After` in seconds, when the server sent one (429, 503).
    public var retryAfter: Double?
    /// A readable summary.
    public var message: String

    /// An error of any kind.
    public init(kind: Kind, status: Int? = nil, problem: Problem? = nil, retryAfter: Double? = nil, message: String) {
        self.kind = kind
        self.status = status
        self.problem = problem
        self.retryAfter = retryAfter
        self.message = message
    }

    /// The problem's `type` (`urn:sheetd:problem:<slug>`), when there is one.
    public var type: String? { problem?.type }
    /// The problem's `title`, when there is one.
    public var title: String? { problem?.title }
    /// The fields at fault of a 400 (empty otherwise).
    public var invalidParams: [InvalidParam] { problem?.invalidParams ?? [] }

    /// Whether retrying the same request may succeed: transport failures, 503 and 429. Never another 4xx.
    public var isRetryable: Bool {
        switch kind {
        case .transport: true
        case .server: status == 503 || status == 429
        default: false
        }
    }

    /// The kind, the status and the problem's detail (never a token).
    public var description: String {
        var text = "sheetd \(kind)"
        if let status { text += " \(status)" }
        if let problem { text += " \(problem.type): \(problem.detail)" } else { text += ": \(message)" }
        for param in invalidParams { text += " [\(param.name): \(param.reason)]" }
        return text
    }
}

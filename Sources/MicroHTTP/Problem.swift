import JSONKit
public import Observability

/// An RFC 9457 problem: an error that renders itself as an `application/problem+json` response.
///
/// Body members, in this order: `type` (`urn:sheetd:problem:<slug>`), `title`, `status`, `detail`,
/// then `invalid-params` (`[{"name","reason"}]`) when given, then any `extensionMembers`.
/// Throw it from a handler; the server answers with `response`.
public struct Problem: Error, Sendable, CustomStringConvertible {
    public var status: Int
    /// The last part of the type URN, e.g. `not-found`.
    public var slug: String
    public var title: String
    public var detail: String
    public var invalidParams: [(name: String, reason: String)]
    /// Extra response headers (e.g. `Retry-After`, `Allow`).
    public var headers: [(String, String)]
    /// Additional top-level members after the standard ones (RFC 9457 extension members).
    public var extensionMembers: [(String, LogValue)] = []

    public init(
        status: Int, slug: String, title: String, detail: String,
        invalidParams: [(name: String, reason: String)] = [], headers: [(String, String)] = []
    ) {
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.invalidParams = invalidParams
        self.headers = headers
    }

    /// `urn:sheetd:problem:<slug>`.
    public var type: String { "urn:sheetd:problem:" + slug }

    public var description: String { "\(status) \(slug): \(detail)" }

    /// The serialized JSON body.
    public var body: [UInt8] {
        var out = JSONWriter(reservingCapacity: 160)
        out.object { o in
            o.member("type", type)
            o.member("title", title)
            o.member("status", status)
            o.member("detail", detail)
            if !invalidParams.isEmpty {
                o.arrayMember("invalid-params") { items in
                    for p in invalidParams {
                        items.object { item in
                            item.member("name", p.name)
                            item.member("reason", p.reason)
                        }
                    }
                }
            }
            for (k, v) in extensionMembers {
                o.key(k)
                v.write(to: &o)
            }
        }
        return out.bytes
    }

    /// The problem as an `application/problem+json` response with its headers.
    public var response: HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/problem+json")] + headers, body: body)
    }
}

/// A problem type: its slug, status and title, defined once (RFC 9457: the title does not change
/// from occurrence to occurrence). Everything that raises a problem of a type goes through it.
public struct ProblemType: Sendable, Equatable, CustomStringConvertible {
    /// The last part of the type URN, e.g. `not-found`.
    public let slug: String
    public let status: Int
    public let title: String

    public init(slug: String, status: Int, title: String) {
        self.slug = slug
        self.status = status
        self.title = title
    }

    /// `urn:sheetd:problem:<slug>`.
    public var uri: String { "urn:sheetd:problem:" + slug }
    public var description: String { uri }

    /// A problem of this type.
    public func problem(
        _ detail: String, invalidParams: [(name: String, reason: String)] = [],
        headers: [(String, String)] = []
    ) -> Problem {
        Problem(status: status, slug: slug, title: title, detail: detail, invalidParams: invalidParams, headers: headers)
    }

    public static let badRequest = ProblemType(slug: "bad-request", status: 400, title: "Bad Request")
    public static let invalidParams = ProblemType(slug: "invalid-params", status: 400, title: "Invalid Parameters")
    public static let unauthorized = ProblemType(slug: "unauthorized", status: 401, title: "Unauthorized")
    public static let forbidden = ProblemType(slug: "forbidden", status: 403, title: "Forbidden")
    public static let notFound = ProblemType(slug: "not-found", status: 404, title: "Not Found")
    public static let methodNotAllowed = ProblemType(slug: "method-not-allowed", status: 405, title: "Method Not Allowed")
    public static let preconditionFailed = ProblemType(slug: "precondition-failed", status: 412, title: "Precondition Failed")
    public static let payloadTooLarge = ProblemType(slug: "payload-too-large", status: 413, title: "Payload Too Large")
    public static let unsupportedMediaType = ProblemType(slug: "unsupported-media-type", status: 415, title: "Unsupported Media Type")
    public static let headerTooLarge = ProblemType(
        slug: "header-too-large", status: 431, title: "Request Header Fields Too Large")
    public static let limitExceeded = ProblemType(slug: "limit-exceeded", status: 409, title: "Limit Exceeded")
    public static let tooManyRequests = ProblemType(slug: "too-many-requests", status: 429, title: "Too Many Requests")
    /// A running experiment's arms or weights would change (that would reassign exposed users).
    public static let experimentRunning = ProblemType(slug: "experiment-running", status: 409, title: "Experiment Running")
    public static let internalError = ProblemType(slug: "internal-error", status: 500, title: "Internal Server Error")
    public static let unavailable = ProblemType(slug: "unavailable", status: 503, title: "Service Unavailable")
    /// libmicrohttpd's own refusals (`DaemonAnswers`).
    public static let uriTooLong = ProblemType(slug: "uri-too-long", status: 414, title: "URI Too Long")
    public static let httpVersionNotSupported = ProblemType(
        slug: "http-version-not-supported", status: 505, title: "HTTP Version Not Supported")

    /// Every type the server raises.
    public static let all: [ProblemType] = [
        .badRequest, .invalidParams, .unauthorized, .forbidden, .notFound, .methodNotAllowed, .preconditionFailed, .payloadTooLarge,
        .unsupportedMediaType, .headerTooLarge, .limitExceeded, .tooManyRequests, .internalError, .unavailable,
        .experimentRunning, .uriTooLong, .httpVersionNotSupported,
    ]
}

extension Problem {
    /// 400 `bad-request`.
    public static func badRequest(_ detail: String, invalidParams: [(name: String, reason: String)] = []) -> Problem {
        ProblemType.badRequest.problem(detail, invalidParams: invalidParams)
    }

    /// 404 `not-found`.
    public static func notFound(_ detail: String) -> Problem {
        ProblemType.notFound.problem(detail)
    }

    /// 405 `method-not-allowed` with the `Allow` header.
    public static func methodNotAllowed(_ detail: String, allow: String) -> Problem {
        ProblemType.methodNotAllowed.problem(detail, headers: [("Allow", allow)])
    }

    /// 413 `payload-too-large`.
    public static func payloadTooLarge(limit: Int) -> Problem {
        ProblemType.payloadTooLarge.problem("The request body exceeds the limit of \(limit) bytes.")
    }

    /// 431 `header-too-large`: the request line and header fields do not fit the connection's memory
    /// (`memory` bytes, of which the answer's header section keeps `reserve`).
    public static func headerTooLarge(memory: Int, reserve: Int) -> Problem {
        ProblemType.headerTooLarge.problem(
            "The request line and header fields do not fit in the connection's \(memory) bytes of memory "
                + "(each header field takes 48 bytes more, and \(reserve) bytes stay free for the answer).")
    }

    /// 500 `internal-error` (the detail never carries the underlying error).
    public static func internalError(_ detail: String = "The server failed to handle the request.") -> Problem {
        ProblemType.internalError.problem(detail)
    }

    /// 503 `unavailable`, optionally with `Retry-After`.
    public static func unavailable(_ detail: String, retryAfterSeconds: Int? = nil) -> Problem {
        ProblemType.unavailable.problem(detail, headers: retryAfterSeconds.map { [("Retry-After", String($0))] } ?? [])
    }
}

import MicroHTTP
import Observability
import SheetStore

/// The service's own problem+json answers (RFC 9457), one factory per kind; slug, status and title
/// come from MicroHTTP's `ProblemType`.
enum Problems {
    static func badRequest(_ detail: String) -> Problem {
        ProblemType.badRequest.problem(detail)
    }

    static func invalidParams(_ params: [(name: String, reason: String)]) -> Problem {
        let summary = params.prefix(3).map { "\($0.name) \($0.reason)" }.joined(separator: "; ")
        return ProblemType.invalidParams.problem(
            params.count > 3 ? summary + "; and \(params.count - 3) more" : summary, invalidParams: params)
    }

    static func unauthorized(_ error: TokenError) -> Problem {
        ProblemType.unauthorized.problem(
            error.detail,
            headers: [("WWW-Authenticate", error == .missing ? "Bearer realm=\"sheetd\"" : "Bearer realm=\"sheetd\", error=\"invalid_token\"")])
    }

    static func forbidden(_ detail: String) -> Problem {
        ProblemType.forbidden.problem(detail)
    }

    static func notFound(_ detail: String) -> Problem {
        ProblemType.notFound.problem(detail)
    }

    static let unsupportedMediaType = ProblemType.unsupportedMediaType.problem(
        "the request body must be sent with Content-Type: application/json")

    /// 409 `limit-exceeded`: the request would go over a configured limit. The limit's name and
    /// maximum are extension members, so a client can tell which one without parsing `detail`.
    static func limitExceeded(_ detail: String, limit: String, maximum: Int) -> Problem {
        var problem = ProblemType.limitExceeded.problem(detail)
        problem.extensionMembers = [("limit", .string(limit)), ("maximum", .int(maximum))]
        return problem
    }

    static func tooManyRequests(_ detail: String, retryAfterSeconds: Int) -> Problem {
        ProblemType.tooManyRequests.problem(detail, headers: [("Retry-After", String(retryAfterSeconds))])
    }

    /// A JSON body declared in another charset than UTF-8 (RFC 8259 section 8.1).
    static func unsupportedCharset(_ charset: String) -> Problem {
        Problem(
            status: 415, slug: "unsupported-media-type", title: "Unsupported media type",
            detail: "the request body must be UTF-8 (Content-Type: application/json; charset=\(charset) is not accepted)")
    }

    static func unavailable(_ detail: String) -> Problem {
        ProblemType.unavailable.problem(detail, headers: [("Retry-After", "1")])
    }

    static func internalError(_ detail: String) -> Problem {
        ProblemType.internalError.problem(detail)
    }

    /// A storage failure as the client sees it: retryable 503, or a 500 that names no internals.
    static func storage(_ error: StoreError) -> Problem {
        switch error {
        case .unavailable: unavailable("the database cannot take this request right now; retry shortly")
        case .conflict(let why): ProblemType.experimentRunning.problem(why)
        default: internalError("the database failed; the request changed nothing")
        }
    }
}

import MicroHTTP
import SheetStore

/// The service's own problem+json answers (RFC 9457), one factory per kind.
enum Problems {
    static func badRequest(_ detail: String) -> Problem {
        Problem(status: 400, slug: "bad-request", title: "Bad request", detail: detail)
    }

    static func invalidParams(_ params: [(name: String, reason: String)]) -> Problem {
        let summary = params.prefix(3).map { "\($0.name) \($0.reason)" }.joined(separator: "; ")
        return Problem(
            status: 400, slug: "invalid-params", title: "Invalid parameters",
            detail: params.count > 3 ? summary + "; and \(params.count - 3) more" : summary, invalidParams: params)
    }

    static func unauthorized(_ error: TokenError) -> Problem {
        Problem(
            status: 401, slug: "unauthorized", title: "Unauthorized", detail: error.detail,
            headers: [("WWW-Authenticate", error == .missing ? "Bearer realm=\"sheetd\"" : "Bearer realm=\"sheetd\", error=\"invalid_token\"")])
    }

    static func forbidden(_ detail: String) -> Problem {
        Problem(status: 403, slug: "forbidden", title: "Forbidden", detail: detail)
    }

    static func notFound(_ detail: String) -> Problem {
        Problem(status: 404, slug: "not-found", title: "Not found", detail: detail)
    }

    static let unsupportedMediaType = Problem(
        status: 415, slug: "unsupported-media-type", title: "Unsupported media type",
        detail: "the request body must be sent with Content-Type: application/json")

    static func tooManyRequests(_ detail: String, retryAfterSeconds: Int) -> Problem {
        Problem(status: 429, slug: "too-many-requests", title: "Too Many Requests", detail: detail,
                headers: [("Retry-After", String(retryAfterSeconds))])
    }

    /// A JSON body declared in another charset than UTF-8 (RFC 8259 section 8.1).
    static func unsupportedCharset(_ charset: String) -> Problem {
        Problem(
            status: 415, slug: "unsupported-media-type", title: "Unsupported media type",
            detail: "the request body must be UTF-8 (Content-Type: application/json; charset=\(charset) is not accepted)")
    }

    static func unavailable(_ detail: String) -> Problem {
        Problem(status: 503, slug: "unavailable", title: "Service unavailable", detail: detail, headers: [("Retry-After", "1")])
    }

    static func internalError(_ detail: String) -> Problem {
        Problem(status: 500, slug: "internal-error", title: "Internal server error", detail: detail)
    }

    /// A storage failure as the client sees it: retryable 503, or a 500 that names no internals.
    static func storage(_ error: StoreError) -> Problem {
        switch error {
        case .unavailable: unavailable("the database cannot take this request right now; retry shortly")
        default: internalError("the database failed; the request changed nothing")
        }
    }
}

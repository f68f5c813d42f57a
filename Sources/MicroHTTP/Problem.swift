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

    public init(status: Int, slug: String, title: String, detail: String,
                invalidParams: [(name: String, reason: String)] = [], headers: [(String, String)] = []) {
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
        var out = JSONOut(capacity: 160)
        out.raw("{\"type\":")
        out.string(type)
        out.raw(",\"title\":")
        out.string(title)
        out.raw(",\"status\":")
        out.int(status)
        out.raw(",\"detail\":")
        out.string(detail)
        if !invalidParams.isEmpty {
            out.raw(",\"invalid-params\":[")
            for (i, p) in invalidParams.enumerated() {
                if i > 0 { out.raw(UInt8(ascii: ",")) }
                out.raw("{\"name\":")
                out.string(p.name)
                out.raw(",\"reason\":")
                out.string(p.reason)
                out.raw(UInt8(ascii: "}"))
            }
            out.raw(UInt8(ascii: "]"))
        }
        for (k, v) in extensionMembers {
            out.raw(UInt8(ascii: ","))
            out.key(k)
            v.write(to: &out)
        }
        out.raw(UInt8(ascii: "}"))
        return out.bytes
    }

    /// The problem as an `application/problem+json` response with its headers.
    public var response: HTTPResponse {
        HTTPResponse(status: status, headers: [("Content-Type", "application/problem+json")] + headers, body: body)
    }
}

extension Problem {
    /// 400 `bad-request`.
    public static func badRequest(_ detail: String, invalidParams: [(name: String, reason: String)] = []) -> Problem {
        Problem(status: 400, slug: "bad-request", title: "Bad Request", detail: detail, invalidParams: invalidParams)
    }

    /// 404 `not-found`.
    public static func notFound(_ detail: String) -> Problem {
        Problem(status: 404, slug: "not-found", title: "Not Found", detail: detail)
    }

    /// 405 `method-not-allowed` with the `Allow` header.
    public static func methodNotAllowed(_ detail: String, allow: String) -> Problem {
        Problem(status: 405, slug: "method-not-allowed", title: "Method Not Allowed", detail: detail,
                headers: [("Allow", allow)])
    }

    /// 413 `payload-too-large`.
    public static func payloadTooLarge(limit: Int) -> Problem {
        Problem(status: 413, slug: "payload-too-large", title: "Payload Too Large",
                detail: "The request body exceeds the limit of \(limit) bytes.")
    }

    /// 500 `internal-error` (the detail never carries the underlying error).
    public static func internalError(_ detail: String = "The server failed to handle the request.") -> Problem {
        Problem(status: 500, slug: "internal-error", title: "Internal Server Error", detail: detail)
    }

    /// 503 `unavailable`, optionally with `Retry-After`.
    public static func unavailable(_ detail: String, retryAfterSeconds: Int? = nil) -> Problem {
        Problem(status: 503, slug: "unavailable", title: "Service Unavailable", detail: detail,
                headers: retryAfterSeconds.map { [("Retry-After", String($0))] } ?? [])
    }
}

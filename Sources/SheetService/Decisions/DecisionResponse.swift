import MicroHTTP

/// Which body a decision request asked for: the full one, or, with `Prefer: return=minimal`
/// (RFC 7240 §4.2), the one without `sheet` (the top of `stack` again) and `trace`.
enum DecisionForm: Sendable {
    case full
    case minimal

    /// The form a `Prefer` header asks for.
    init(prefer header: String?) {
        self = PreferReturn.isMinimal(header) ? .minimal : .full
    }
}

/// The decision route's answers (the route, long-polls and both decision sources build them here).
///
/// Representations: the full or minimal body (`Vary: Prefer`), each identity or gzip-encoded for a
/// client whose `Accept-Encoding` takes gzip (`Vary: Accept-Encoding`; MicroHTTP encodes from its
/// minimum size on). Every representation has a strong tag of its own: the identity body's, and
/// for gzip the same tag with `-gzip` inside the quotes (`ContentCoding`). `If-None-Match` matches
/// either encoding of the same body, and the 304 carries the tag of the one the client would get.
enum DecisionResponse {
    /// The 200, or the 304 when `condition` (If-None-Match) names either encoding of `answer`.
    static func answering(_ answer: DecisionCache.Answer, form: DecisionForm, condition: String?) -> HTTPResponse {
        if let condition, EntityTag.matchesEitherEncoding(condition, answer.etag) { return notModified(answer, form: form) }
        return ok(answer, form: form)
    }

    /// The 200 (`answer` in the asked form); `wait`: the `Prefer: wait` a long-poll applied.
    static func ok(_ answer: DecisionCache.Answer, form: DecisionForm, wait: Int? = nil) -> HTTPResponse {
        // One header array (not `.json(headers:)`, which concatenates two): this is the hottest route.
        var headers = [("Content-Type", "application/json"), ("ETag", answer.etag), ("Cache-Control", "no-cache"), vary]
        if let applied = preferenceApplied(form, wait: wait) { headers.append(applied) }
        var response = HTTPResponse(status: 200, headers: headers, body: answer.body)
        response.compression = .gzipIfAcceptedVaryIncluded
        return response
    }

    /// The 304 (its Content-Length is the 200's, never 0).
    static func notModified(_ answer: DecisionCache.Answer, form: DecisionForm, wait: Int? = nil) -> HTTPResponse {
        var headers = [("ETag", answer.etag), ("Cache-Control", "no-cache"), vary]
        if let applied = preferenceApplied(form, wait: wait) { headers.append(applied) }
        var response = HTTPResponse.notModified(headers: headers, representation: answer.body)
        response.compression = .gzipIfAcceptedVaryIncluded
        return response
    }

    /// Names `Accept-Encoding`, so the compression is `.gzipIfAcceptedVaryIncluded`.
    private static let vary = ("Vary", "Accept-Encoding, Prefer")

    private static func preferenceApplied(_ form: DecisionForm, wait: Int?) -> (String, String)? {
        switch (form, wait) {
        case (.full, nil): nil
        case (.full, let wait?): ("Preference-Applied", "wait=\(wait)")
        case (.minimal, nil): ("Preference-Applied", "return=minimal")
        case (.minimal, let wait?): ("Preference-Applied", "return=minimal, wait=\(wait)")
        }
    }
}

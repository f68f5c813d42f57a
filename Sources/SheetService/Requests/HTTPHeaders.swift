import MicroHTTP
import SheetWire

/// `Content-Type` checks.
enum MediaType {
    /// application/json or any application/*+json, parameters (charset) allowed.
    static func isJSON(_ value: String) -> Bool {
        if let answer = MediaTypeFastPath.isJSON(value) { return answer }
        let essence = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmed().lowercased() } ?? ""
        return essence == "application/json" || (essence.hasPrefix("application/") && essence.hasSuffix("+json"))
    }
}

/// `If-None-Match` evaluation (RFC 9110 §13.1.2: weak comparison).
enum EntityTag {
    static func matches(_ header: String, _ etag: String) -> Bool {
        if let answer = EntityTagFastPath.matches(header, etag) { return answer }
        let trimmed = header.trimmed()
        if trimmed == "*" { return true }
        let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for candidate in trimmed.split(separator: ",") {
            var c = candidate.trimmed()
            if c.hasPrefix("W/") { c.removeFirst(2) }
            if c == opaque { return true }
        }
        return false
    }

    /// `matches` for a representation that may also be sent gzip-encoded: the header names our tag or
    /// its gzip form (`ContentCoding.gzipEntityTag`), the same body in either encoding.
    static func matchesEitherEncoding(_ header: String, _ etag: String) -> Bool {
        if matches(header, etag) { return true }
        if let answer = EntityTagFastPath.matchesGzipForm(header, etag) { return answer }
        return matches(header, ContentCoding.gzipEntityTag(etag))
    }
}

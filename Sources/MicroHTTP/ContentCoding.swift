/// Response compression: a response that allows it (`HTTPResponse.compression`) is sent gzip-encoded
/// to a client whose `Accept-Encoding` takes gzip, when its body is at least the configured size
/// (`HTTPServerConfiguration.gzipMinimumBytes`; smaller bodies gain less than the header costs).
/// Such a response always says `Vary: Accept-Encoding`, encoded or not (unless its own `Vary` names
/// it already), so that caches keep the two apart. An encoded one gets a strong ETag of its own, the
/// identity tag with `-gzip` inside the quotes (RFC 9110 §8.8.3: a strong tag names one exact byte
/// sequence, so the encoded bytes cannot carry the identity's tag); a handler that allows
/// compression matches `If-None-Match` against both tags (`gzipEntityTag`).
public enum ContentCoding {
    /// The tag of the gzip-encoded representation whose identity tag is `tag`: `"abc"` → `"abc-gzip"`,
    /// `W/"abc"` → `W/"abc-gzip"`. A tag without quotes is returned as is.
    public static func gzipEntityTag(_ tag: String) -> String {
        guard tag.utf8.count >= 2, tag.utf8.last == UInt8(ascii: "\"") else { return tag }
        return String(tag.dropLast()) + "-gzip\""
    }

    /// Whether an `Accept-Encoding` value (RFC 9110 §12.5.3) accepts gzip: `gzip` (or `x-gzip`)
    /// with a weight above 0, or `*` above 0 without gzip refused by name.
    /// Scanned in place: every decision request of an app carries this header (URLSession sends it by
    /// itself), so only a `q` weight, which clients rarely send, is read through a String.
    static func acceptsGzip(_ header: Span<UInt8>?) -> Bool {
        guard let header else { return false }
        var gzip: Bool?
        var any: Bool?
        var start = 0
        while start < header.count {
            var end = start
            while end < header.count && header[end] != UInt8(ascii: ",") { end += 1 }
            var nameEnd = start
            while nameEnd < end && header[nameEnd] != UInt8(ascii: ";") { nameEnd += 1 }
            var accepted = true
            var parameter = nameEnd
            while parameter < end {
                var parameterEnd = parameter + 1
                while parameterEnd < end && header[parameterEnd] != UInt8(ascii: ";") { parameterEnd += 1 }
                let p = trimmed(header, parameter + 1, parameterEnd)
                if p.count >= 2, header[p.lowerBound] | 0x20 == UInt8(ascii: "q"), header[p.lowerBound + 1] == UInt8(ascii: "=") {
                    let weight = header.extracting((p.lowerBound + 2)..<p.upperBound).utf8String.lowercased()
                    accepted = (Double(weight) ?? 0) > 0
                }
                parameter = parameterEnd
            }
            let name = trimmed(header, start, nameEnd)
            if equalsIgnoringCase(header, name, "gzip") || equalsIgnoringCase(header, name, "x-gzip") {
                gzip = accepted
            } else if equalsIgnoringCase(header, name, "*") {
                any = accepted
            }
            start = end + 1
        }
        return gzip ?? any ?? false
    }

    /// `lower..<upper` of `bytes` without the spaces and tabs at either end.
    private static func trimmed(_ bytes: Span<UInt8>, _ lower: Int, _ upper: Int) -> Range<Int> {
        var lower = lower, upper = upper
        while lower < upper && (bytes[lower] == 0x20 || bytes[lower] == 0x09) { lower += 1 }
        while upper > lower && (bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09) { upper -= 1 }
        return lower..<upper
    }

    /// Whether `bytes[range]` is `lowercase` in any ASCII case.
    private static func equalsIgnoringCase(_ bytes: Span<UInt8>, _ range: Range<Int>, _ lowercase: StaticString) -> Bool {
        guard range.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        for i in 0..<range.count {
            let b = bytes[range.lowerBound + i]
            if (b >= 65 && b <= 90 ? b | 0x20 : b) != expected[i] { return false }
        }
        return true
    }

    /// `response` as it is sent to a client whose `Accept-Encoding` is `acceptEncoding`.
    static func negotiate(_ response: HTTPResponse, acceptsGzip: Bool, minimumBytes: Int) -> HTTPResponse {
        let varyIncluded: Bool
        switch response.compression {
        case .none: return response
        case .gzipIfAccepted: varyIncluded = false
        case .gzipIfAcceptedVaryIncluded: varyIncluded = true
        }
        var response = response
        switch response.content {
        case .bytes(let body) where body.count >= minimumBytes:
            if !varyIncluded { addVary(&response) }
            guard acceptsGzip, response.header("Content-Encoding") == nil, let encoded = Gzip.compressRemembered(body), encoded.count < body.count
            else { return response }
            response.content = .bytes(encoded)
            response.headers.append(("Content-Encoding", "gzip"))
            encodeEntityTag(&response)
        case .notModified(let representation) where representation.count >= minimumBytes:
            // The 200 would be encoded: same Vary and ETag, and the encoded length (RFC 9110 §8.6: a
            // 304's Content-Length is the selected representation's; a client that honours it waits
            // for that many bytes otherwise). The encoding is remembered from the 200 that was sent.
            if !varyIncluded { addVary(&response) }
            if acceptsGzip, response.header("Content-Encoding") == nil, let encoded = Gzip.compressRemembered(representation),
                encoded.count < representation.count
            {
                response.content = .notModified(representation: encoded)
                encodeEntityTag(&response)
            }
        case .bytes, .notModified, .deferred, .stream:
            break
        }
        return response
    }

    private static func encodeEntityTag(_ response: inout HTTPResponse) {
        for i in response.headers.indices where asciiCaseInsensitiveEquals(response.headers[i].0, "ETag") {
            response.headers[i].1 = gzipEntityTag(response.headers[i].1)
        }
    }

    /// `Vary: Accept-Encoding`, unless a `Vary` of the response names it (or `*`) already. No
    /// allocation when it does: the decision route, the hottest, sends its own `Vary`.
    private static func addVary(_ response: inout HTTPResponse) {
        for (name, value) in response.headers where asciiCaseInsensitiveEquals(name, "Vary") {
            if namesAcceptEncoding(value) { return }
        }
        response.headers.append(("Vary", "Accept-Encoding"))
    }

    private static let acceptEncodingLowercased: [UInt8] = Array("accept-encoding".utf8)

    /// Whether a `Vary` value lists `Accept-Encoding` (any case) or `*`, scanned in place.
    static func namesAcceptEncoding(_ vary: String) -> Bool {
        let wanted = acceptEncodingLowercased
        // Per comma-separated field: its length, how much of `wanted` it matched, whether it differs.
        var length = 0, matched = 0, differs = false, star = false, ended = false
        func found() -> Bool { (matched == wanted.count && !differs) || (star && length == 1) }
        for c in vary.utf8 {
            switch c {
            case UInt8(ascii: ","):
                if found() { return true }
                (length, matched, differs, star, ended) = (0, 0, false, false, false)
            case 0x20, 0x09:
                if length > 0 { ended = true }
            default:
                if ended { differs = true }
                length += 1
                if c == UInt8(ascii: "*") { star = true }
                let lower = c >= 65 && c <= 90 ? c | 0x20 : c
                if matched < wanted.count && lower == wanted[matched] { matched += 1 } else { differs = true }
            }
        }
        return found()
    }
}

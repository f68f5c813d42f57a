/// Response compression: a response that allows it (`HTTPResponse.compression`) is sent gzip-encoded
/// to a client whose `Accept-Encoding` takes gzip, when its body is at least the configured size
/// (`HTTPServerConfiguration.gzipMinimumBytes`; smaller bodies gain less than the header costs).
/// Such a response always says `Vary: Accept-Encoding`, encoded or not, so that caches keep the two
/// apart; an encoded one gets a weak ETag (RFC 9110 §8.8.3: a strong tag names one exact byte
/// sequence), which still matches `If-None-Match`'s weak comparison.
enum ContentCoding {
    /// Whether an `Accept-Encoding` value (RFC 9110 §12.5.3) accepts gzip: `gzip` (or `x-gzip`)
    /// with a weight above 0, or `*` above 0 without gzip refused by name.
    static func acceptsGzip(_ header: Span<UInt8>?) -> Bool {
        guard let header else { return false }
        var gzip: Bool?
        var any: Bool?
        for member in header.utf8String.split(separator: ",") {
            let parts = member.split(separator: ";")
            guard let name = parts.first?.trimmingSpaces.lowercased() else { continue }
            var accepted = true
            for parameter in parts.dropFirst() {
                let p = parameter.trimmingSpaces.lowercased()
                if p.hasPrefix("q=") { accepted = (Double(p.dropFirst(2)) ?? 0) > 0 }
            }
            switch name {
            case "gzip", "x-gzip": gzip = accepted
            case "*": any = accepted
            default: break
            }
        }
        return gzip ?? any ?? false
    }

    /// `response` as it is sent to a client whose `Accept-Encoding` is `acceptEncoding`.
    static func negotiate(_ response: HTTPResponse, acceptsGzip: Bool, minimumBytes: Int) -> HTTPResponse {
        guard case .gzipIfAccepted = response.compression else { return response }
        var response = response
        switch response.content {
        case .bytes(let body) where body.count >= minimumBytes:
            response.headers.append(("Vary", "Accept-Encoding"))
            guard acceptsGzip, response.header("Content-Encoding") == nil, let encoded = Gzip.compress(body), encoded.count < body.count
            else { return response }
            response.content = .bytes(encoded)
            response.headers.append(("Content-Encoding", "gzip"))
            weakenEntityTag(&response)
        case .notModified(let representation) where representation.count >= minimumBytes:
            // The 200 would be encoded: same Vary and ETag. (Its Content-Length stays the unencoded
            // length: encoding a body only to count it is not worth a 304.)
            response.headers.append(("Vary", "Accept-Encoding"))
            if acceptsGzip { weakenEntityTag(&response) }
        case .bytes, .notModified, .deferred, .stream:
            break
        }
        return response
    }

    private static func weakenEntityTag(_ response: inout HTTPResponse) {
        for i in response.headers.indices where asciiCaseInsensitiveEquals(response.headers[i].0, "ETag") {
            if !response.headers[i].1.hasPrefix("W/") { response.headers[i].1 = "W/" + response.headers[i].1 }
        }
    }
}

extension Substring {
    fileprivate var trimmingSpaces: Substring {
        var s = self
        while let c = s.first, c == " " || c == "\t" { s.removeFirst() }
        while let c = s.last, c == " " || c == "\t" { s.removeLast() }
        return s
    }
}

internal import CMicroHTTPD

#if canImport(Glibc)
import Glibc
#endif

/// Checks of the request's header section as MHD parsed it, for framing that two parsers could read
/// differently (request smuggling: RFC 9112 §3.2, 5.1, 5.2, 6.3). MHD 0.9.75 accepts each of these,
/// in strict mode too (`MHD_OPTION_STRICT_FOR_CLIENT` only adds the Host rule and answers in HTML).
enum HeaderSection {
    /// Why the header section is refused (a 400 that closes the connection), or nil.
    static func framingProblem(
        _ connection: OpaquePointer, method: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>?
    ) -> String? {
        var walk = Walk(end: UnsafeRawPointer(method) + cmhd_request_header_size(connection))
        withUnsafeMutablePointer(to: &walk) { p in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, headerLineVisitor, UnsafeMutableRawPointer(p))
        }
        if let problem = walk.finish() { return problem }
        if walk.host == 0, let version, strcmp(version, "HTTP/1.1") == 0 {
            // RFC 9112 §3.2 (MHD lets it through unless strict, and then answers with HTML).
            return "An HTTP/1.1 request must have a Host header."
        }
        if walk.host > 1 { return "The request has more than one Host header." }
        if walk.transferEncoding > 1 { return "The request has more than one Transfer-Encoding header." }
        if walk.transferEncoding == 1 {
            if walk.contentLength > 0 { return "The request has both Content-Length and Transfer-Encoding." }
            // The only coding MHD decodes; with another, the length cannot be determined (RFC 9112 §6.1).
            if let te = MHD_lookup_connection_value(connection, .HEADER_KIND, "Transfer-Encoding"), strcasecmp(te, "chunked") != 0 {
                return "The request's Transfer-Encoding is not chunked."
            }
        }
        if walk.contentLength > 1 { return "The request has more than one Content-Length header." }
        // Which credentials would count is ambiguous (a proxy may read the other one): refuse both.
        if walk.authorization > 1 { return "The request has more than one Authorization header." }
        return nil
    }

    /// State of one walk over the header lines, in the order received.
    ///
    /// MHD parses the section in place in the connection's read buffer: each name and value stays
    /// where it arrived, and every line terminator (CR LF, or a bare LF) is overwritten with NULs. So
    /// the bytes from one value's end to the next name are exactly its terminator, and the last value
    /// is followed only by its terminator and the blank line, up to the size MHD reports. Anything
    /// else there (a NUL or a bare CR inside a value, text MHD dropped) or a name that is not where its
    /// line was (an obs-folded line, which MHD joins elsewhere) is malformed framing.
    struct Walk {
        let end: UnsafeRawPointer
        var lineEnd: UnsafeRawPointer?
        var problem: String?
        var host = 0, contentLength = 0, transferEncoding = 0, authorization = 0

        init(end: UnsafeRawPointer) { self.end = end }

        mutating func visit(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
            guard problem == nil, let nameStart = name.baseAddress else { return }
            if let previous = lineEnd, !Walk.isTerminator(from: previous, to: nameStart) {
                problem = "The request has a malformed header line (folded, or with a NUL or bare CR)."
                return
            }
            guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
                problem = "A header name has whitespace or a character a field name cannot have."
                return
            }
            guard value.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == 0x09 }) else {
                problem = "A header value has a control character (CR, LF or NUL)."
                return
            }
            lineEnd = (value.baseAddress ?? UnsafeRawPointer(nameStart)) + value.count
            if asciiEqualsLowercased(name, "host") {
                host += 1
            } else if asciiEqualsLowercased(name, "content-length") {
                contentLength += 1
            } else if asciiEqualsLowercased(name, "transfer-encoding") {
                transferEncoding += 1
            } else if asciiEqualsLowercased(name, "authorization") {
                authorization += 1
            }
        }

        /// The problem found, including what follows the last line.
        mutating func finish() -> String? {
            if problem == nil, let last = lineEnd {
                // The last line's terminator and the blank line: 2 to 4 bytes, all NUL now.
                let gap = end - last
                if gap < 2 || gap > 4 || !(0..<gap).allSatisfy({ last.load(fromByteOffset: $0, as: UInt8.self) == 0 }) {
                    problem = "The request has a malformed header line (folded, or with a NUL or bare CR)."
                }
            }
            return problem
        }

        /// Whether the bytes from `lineEnd` to `next` are one line terminator (1 or 2 NULs).
        private static func isTerminator(from lineEnd: UnsafeRawPointer, to next: UnsafeRawPointer) -> Bool {
            let gap = next - lineEnd
            if gap == 1 { return true }
            return gap == 2 && lineEnd.load(fromByteOffset: 1, as: UInt8.self) == 0
        }
    }
}

/// RFC 9110 §5.6.2 `tchar`.
private func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
        return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
        UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
        UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}

private func asciiEqualsLowercased(_ bytes: UnsafeRawBufferPointer, _ lower: StaticString) -> Bool {
    guard bytes.count == lower.utf8CodeUnitCount else { return false }
    let l = lower.utf8Start
    for i in 0..<bytes.count {
        let b = bytes[i]
        if (b >= 0x41 && b <= 0x5A ? b | 0x20 : b) != l[i] { return false }
    }
    return true
}

/// Feeds each header line to the `HeaderSection.Walk` that `cls` points to.
private let headerLineVisitor: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
    guard let cls, let key else { return .YES }
    let walk = cls.assumingMemoryBound(to: HeaderSection.Walk.self)
    walk.pointee.visit(
        name: UnsafeRawBufferPointer(start: key, count: keySize),
        value: UnsafeRawBufferPointer(start: value, count: value == nil ? 0 : valueSize))
    return .YES
}

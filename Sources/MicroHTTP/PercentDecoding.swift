#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Path validation and percent-decoding of path segments and query components, on raw bytes.

/// Why a raw path was refused before routing.
enum PathProblem {
    case invalidEscape, dotSegment, notAbsolute
}

/// One pass over the raw path: absolute, every `%` followed by two hex digits, no `.`/`..` segments
/// (raw or encoded).
func validatePath(_ p: UnsafeBufferPointer<UInt8>) -> PathProblem? {
    guard p.first == UInt8(ascii: "/") else { return .notAbsolute }
    var i = 0
    var segmentStart = 1
    while i <= p.count {
        if i == p.count || p[i] == UInt8(ascii: "/") {
            if i > 0 && isDotSegment(p, segmentStart..<i) { return .dotSegment }
            segmentStart = i + 1
        } else if p[i] == UInt8(ascii: "%") {
            guard i + 2 < p.count, hexValue(p[i + 1]) != nil, hexValue(p[i + 2]) != nil else { return .invalidEscape }
            i += 2
        }
        i += 1
    }
    return nil
}

private func isDotSegment(_ p: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
    // "." and "..", also percent-encoded (%2e / %2E).
    var dots = 0
    var i = r.lowerBound
    while i < r.upperBound {
        if p[i] == UInt8(ascii: ".") {
            i += 1
        } else if p[i] == UInt8(ascii: "%"), i + 2 < r.upperBound,  // escapes in r are validated already
            p[i + 1] == UInt8(ascii: "2"), p[i + 2] | 0x20 == UInt8(ascii: "e")
        {
            i += 3
        } else {
            return false
        }
        dots += 1
        if dots > 2 { return false }
    }
    return dots == 1 || dots == 2
}

@inline(__always) func hexValue(_ b: UInt8) -> UInt8? {
    switch b {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// Decodes one path segment (`%XX` only; `+` stays `+`). Nil when the result contains `/` or NUL or
/// is not valid UTF-8. Escapes are already validated by `validatePath`.
func decodePathSegment(_ p: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> String? {
    var hasEscape = false
    for i in r where p[i] == UInt8(ascii: "%") { hasEscape = true; break }
    if !hasEscape {
        let segment = UnsafeBufferPointer(rebasing: p[r])
        // ASCII needs no validation (and `String(validating:)` is generic, with a metadata lookup per call).
        if segment.allSatisfy({ $0 < 0x80 }) { return String(decoding: segment, as: UTF8.self) }
        return String(validating: segment, as: UTF8.self)
    }
    var out: [UInt8] = []
    out.reserveCapacity(r.count)
    var i = r.lowerBound
    while i < r.upperBound {
        if p[i] == UInt8(ascii: "%"), i + 2 < r.upperBound, let h = hexValue(p[i + 1]), let l = hexValue(p[i + 2]) {
            let b = h << 4 | l
            if b == UInt8(ascii: "/") || b == 0 { return nil }
            out.append(b)
            i += 3
        } else {
            out.append(p[i])
            i += 1
        }
    }
    return String(validating: out, as: UTF8.self)
}

/// Decodes a query name or value: `+` is a space, `%XX` a byte; malformed escapes are kept literally
/// and invalid UTF-8 is repaired with U+FFFD.
func decodeQueryComponent(_ buf: UnsafeBufferPointer<UInt8>) -> String {
    withDecodedQueryComponent(buf) { String(decoding: $0, as: UTF8.self) }
}

/// Calls `body` with the decoded bytes of a query component (`+` is a space, `%XX` a byte, malformed
/// escapes kept literally): the input itself when there is nothing to decode, else a temporary copy.
/// The bytes are not UTF-8-checked; `String(decoding:as:)` repairs them.
func withDecodedQueryComponent<R>(_ buf: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    let n = buf.count
    if !buf.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return body(buf) }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: n) { out in
        var i = 0, o = 0
        while i < n {
            let b = buf[i]
            if b == UInt8(ascii: "+") {
                out[o] = UInt8(ascii: " ")
                i += 1
            } else if b == UInt8(ascii: "%"), i + 2 < n, let h = hexValue(buf[i + 1]), let l = hexValue(buf[i + 2]) {
                out[o] = h << 4 | l
                i += 3
            } else {
                out[o] = b
                i += 1
            }
            o += 1
        }
        return body(UnsafeBufferPointer(rebasing: out[..<o]))
    }
}

/// Calls `body` with the raw name and value (nil without `=`) of every argument of a query string,
/// split exactly as libmicrohttpd 0.9.75 splits one (`MHD_parse_arguments_`): at each `&`, then at the
/// first `=` of the piece; an empty piece between two `&` is an argument with an empty name, a
/// trailing `&` adds none. sheetd parses the query itself, from a copy taken before libmicrohttpd
/// sees it (see `cmhd_hide_query`).
func forEachRawQueryArgument(
    _ q: UnsafeBufferPointer<UInt8>, _ body: (_ name: UnsafeBufferPointer<UInt8>, _ value: UnsafeBufferPointer<UInt8>?) -> Void
) {
    let n = q.count
    var start = 0
    while start < n {
        var i = start
        var equals = -1
        while i < n && q[i] != UInt8(ascii: "&") {
            if equals < 0 && q[i] == UInt8(ascii: "=") { equals = i }
            i += 1
        }
        if equals < 0 {
            body(UnsafeBufferPointer(rebasing: q[start..<i]), nil)
        } else {
            body(UnsafeBufferPointer(rebasing: q[start..<equals]), UnsafeBufferPointer(rebasing: q[(equals + 1)..<i]))
        }
        start = i + 1
    }
}

/// How many arguments `forEachRawQueryArgument` finds.
func countQueryArguments(_ q: UnsafeBufferPointer<UInt8>) -> Int {
    var count = 0
    forEachRawQueryArgument(q) { _, _ in count += 1 }
    return count
}

/// Reads one JSON document (RFC 8259) from UTF-8 bytes in a single pass: the work is linear in the
/// input, nesting is limited, and everything RFC 8259 leaves to the reader is refused rather than
/// guessed: duplicate member names, trailing commas, invalid UTF-8, lone surrogate escapes, a byte
/// order mark, anything after the value.
///
/// ```swift
/// let value = try JSONReader.read(Array(#"{"count":3}"#.utf8))   // .object(["count": .integer(3)])
/// ```
public struct JSONReader: Sendable {
    /// Arrays and objects nested deeper than this are refused (the top-level container is level 1).
    public var maximumDepth: Int
    /// Numbers with a longer text are refused: no number of any API needs more, and conversion stays cheap.
    public var maximumNumberLength: Int
    /// Objects with more members are refused as soon as one more is seen: a body of thousands of
    /// unknown members costs no more than the limit's worth of parsing.
    public var maximumMembers: Int

    public static let defaultMaximumDepth = 32
    public static let defaultMaximumNumberLength = 256

    public init(
        maximumDepth: Int = JSONReader.defaultMaximumDepth, maximumNumberLength: Int = JSONReader.defaultMaximumNumberLength,
        maximumMembers: Int = .max
    ) {
        self.maximumDepth = maximumDepth
        self.maximumNumberLength = maximumNumberLength
        self.maximumMembers = maximumMembers
    }

    /// Reads `bytes` as one JSON document with the default limits.
    public static func read(_ bytes: [UInt8]) throws(JSONReadError) -> JSONValue {
        try JSONReader().read(bytes)
    }

    /// Reads `bytes` as one JSON document.
    public func read(_ bytes: [UInt8]) throws(JSONReadError) -> JSONValue {
        let result: Result<JSONValue, JSONReadError> = bytes.withUnsafeBufferPointer { buffer in
            var scanner = Scanner(
                bytes: buffer, maximumDepth: maximumDepth, maximumNumberLength: maximumNumberLength, maximumMembers: maximumMembers)
            return Result { () throws(JSONReadError) in try scanner.document() }
        }
        return try result.get()
    }
}

/// Why a document was refused, and where (line and column count characters, from 1).
public struct JSONReadError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: Sendable, Equatable {
        case empty
        case byteOrderMark
        /// The input ended where `expected` should have come.
        case unexpectedEnd(expected: String)
        case unexpected(found: String, expected: String)
        case trailingComma(before: Character)
        case duplicateMember(String)
        case tooDeep(limit: Int)
        case tooManyMembers(limit: Int)
        case invalidUTF8
        case controlCharacter(UInt8)
        case invalidEscape(String)
        case loneSurrogate(UInt16)
        case leadingZero
        case numberTooLong(limit: Int)
        case trailingContent(found: String)
    }

    public let reason: Reason
    public let line: Int
    public let column: Int

    /// What is wrong, in words, without the position.
    public var summary: String {
        switch reason {
        case .empty: "there is no JSON value"
        case .byteOrderMark: "it starts with a byte order mark (send UTF-8 without one)"
        case .unexpectedEnd(let expected): "it ends early: expected \(expected)"
        case .unexpected(let found, let expected): "expected \(expected), found \(found)"
        case .trailingComma(let before): "a trailing comma before '\(before)'"
        case .duplicateMember(let name): "the member \"\(name)\" appears more than once in the same object"
        case .tooDeep(let limit): "arrays and objects are nested more than \(limit) levels deep"
        case .tooManyMembers(let limit): "an object has more than \(limit) members"
        case .invalidUTF8: "a string is not valid UTF-8"
        case .controlCharacter(let c): "a string contains the control character U+\(Self.hex4(UInt16(c))) (escape it)"
        case .invalidEscape(let text): "a string contains the invalid escape \(text)"
        case .loneSurrogate(let unit): "a string escapes a lone UTF-16 surrogate (\\u\(Self.hex4(unit)))"
        case .leadingZero: "a number starts with a superfluous 0"
        case .numberTooLong(let limit): "a number is longer than \(limit) characters"
        case .trailingContent(let found): "expected the end after the JSON value, found \(found)"
        }
    }

    public var description: String { "\(summary) (line \(line), column \(column))" }

    static func hex4(_ v: UInt16) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(v >> 12)], digits[Int(v >> 8 & 0xF)], digits[Int(v >> 4 & 0xF)], digits[Int(v & 0xF)]])
    }
}

/// The single pass over the bytes. Recursion depth is bounded by `maximumDepth`.
private struct Scanner {
    let b: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    let maximumNumberLength: Int
    let maximumMembers: Int
    var i = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, maximumNumberLength: Int, maximumMembers: Int) {
        self.b = bytes
        self.maximumDepth = maximumDepth
        self.maximumNumberLength = maximumNumberLength
        self.maximumMembers = maximumMembers
    }

    mutating func document() throws(JSONReadError) -> JSONValue {
        if b.count >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF { throw error(.byteOrderMark) }
        skipWhitespace()
        guard i < b.count else { throw error(.empty) }
        let value = try self.value(depth: 0)
        skipWhitespace()
        guard i == b.count else { throw error(.trailingContent(found: found())) }
        return value
    }

    // MARK: Values

    mutating func value(depth: Int) throws(JSONReadError) -> JSONValue {
        guard i < b.count else { throw error(.unexpectedEnd(expected: "a value")) }
        switch b[i] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw error(.unexpected(found: found(), expected: "a value"))
        }
    }

    mutating func object(depth: Int) throws(JSONReadError) -> JSONValue {
        guard depth <= maximumDepth else { throw error(.tooDeep(limit: maximumDepth)) }
        i += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if i < b.count && b[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
        while true {
            guard i < b.count else { throw error(.unexpectedEnd(expected: "a member name in double quotes")) }
            guard b[i] == UInt8(ascii: "\"") else {
                if b[i] == UInt8(ascii: "}") && !members.isEmpty { throw error(.trailingComma(before: "}")) }
                throw error(.unexpected(found: found(), expected: "a member name in double quotes"))
            }
            guard members.count < maximumMembers else { throw error(.tooManyMembers(limit: maximumMembers)) }
            let nameStart = i
            let name = try string()
            skipWhitespace()
            guard i < b.count else { throw error(.unexpectedEnd(expected: "':'")) }
            guard b[i] == UInt8(ascii: ":") else { throw error(.unexpected(found: found(), expected: "':' after a member name")) }
            i += 1
            skipWhitespace()
            let value = try self.value(depth: depth)
            if members.updateValue(value, forKey: name) != nil {
                i = nameStart
                throw error(.duplicateMember(name))
            }
            skipWhitespace()
            guard i < b.count else { throw error(.unexpectedEnd(expected: "',' or '}'")) }
            switch b[i] {
            case UInt8(ascii: ","): i += 1; skipWhitespace()
            case UInt8(ascii: "}"): i += 1; return .object(members)
            default: throw error(.unexpected(found: found(), expected: "',' or '}'"))
            }
        }
    }

    mutating func array(depth: Int) throws(JSONReadError) -> JSONValue {
        guard depth <= maximumDepth else { throw error(.tooDeep(limit: maximumDepth)) }
        i += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if i < b.count && b[i] == UInt8(ascii: "]") { i += 1; return .array(elements) }
        while true {
            if i < b.count && b[i] == UInt8(ascii: "]") && !elements.isEmpty { throw error(.trailingComma(before: "]")) }
            elements.append(try value(depth: depth))
            skipWhitespace()
            guard i < b.count else { throw error(.unexpectedEnd(expected: "',' or ']'")) }
            switch b[i] {
            case UInt8(ascii: ","): i += 1; skipWhitespace()
            case UInt8(ascii: "]"): i += 1; return .array(elements)
            default: throw error(.unexpected(found: found(), expected: "',' or ']'"))
            }
        }
    }

    mutating func literal(_ word: StaticString) throws(JSONReadError) {
        let n = word.utf8CodeUnitCount
        guard i + n <= b.count else {
            for k in 0..<(b.count - i) where b[i + k] != word.utf8Start[k] {
                throw error(.unexpected(found: found(), expected: "a value"))
            }
            throw error(.unexpectedEnd(expected: "'\(word)'"))
        }
        for k in 0..<n where b[i + k] != word.utf8Start[k] { throw error(.unexpected(found: found(), expected: "a value")) }
        i += n
    }

    // MARK: Strings

    /// A string from its opening quote; UTF-8 is validated here, escapes decoded.
    mutating func string() throws(JSONReadError) -> String {
        i += 1
        var decoded: [UInt8] = []  // used only once an escape is seen
        var escaped = false
        var segment = i
        while true {
            guard i < b.count else { throw error(.unexpectedEnd(expected: "'\"' to close a string")) }
            let c = b[i]
            if c == UInt8(ascii: "\"") {
                let text: String
                if escaped {
                    decoded.append(contentsOf: b[segment..<i])
                    text = String(decoding: decoded, as: UTF8.self)
                } else {
                    text = String(decoding: UnsafeBufferPointer(rebasing: b[segment..<i]), as: UTF8.self)
                }
                i += 1
                return text
            } else if c == UInt8(ascii: "\\") {
                if !escaped { escaped = true; decoded.reserveCapacity(i - segment + 16) }
                decoded.append(contentsOf: b[segment..<i])
                try escape(into: &decoded)
                segment = i
            } else if c < 0x20 {
                throw error(.controlCharacter(c))
            } else if c < 0x80 {
                i += 1
            } else {
                try multibyte()
            }
        }
    }

    /// One escape sequence from its backslash (RFC 8259 section 7), appended as UTF-8.
    mutating func escape(into out: inout [UInt8]) throws(JSONReadError) {
        guard i + 1 < b.count else { throw error(.unexpectedEnd(expected: "an escape sequence")) }
        let simple: UInt8
        switch b[i + 1] {
        case UInt8(ascii: "\""): simple = 0x22
        case UInt8(ascii: "\\"): simple = 0x5C
        case UInt8(ascii: "/"): simple = 0x2F
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            let unit = try hexUnit(at: i)
            i += 6
            var scalar = UInt32(unit)
            if unit >= 0xD800 && unit <= 0xDBFF {
                // A high surrogate must be followed by an escaped low one.
                guard i + 1 < b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
                    i -= 6
                    throw error(.loneSurrogate(unit))
                }
                let low = try hexUnit(at: i)
                guard low >= 0xDC00 && low <= 0xDFFF else { i -= 6; throw error(.loneSurrogate(unit)) }
                i += 6
                scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                i -= 6
                throw error(.loneSurrogate(unit))
            }
            // Surrogates were combined or refused above, so `scalar` is a Unicode scalar value.
            if scalar < 0x80 {
                out.append(UInt8(scalar))
            } else if scalar < 0x800 {
                out.append(UInt8(0xC0 | scalar >> 6))
                out.append(UInt8(0x80 | scalar & 0x3F))
            } else if scalar < 0x10000 {
                out.append(UInt8(0xE0 | scalar >> 12))
                out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
                out.append(UInt8(0x80 | scalar & 0x3F))
            } else {
                out.append(UInt8(0xF0 | scalar >> 18))
                out.append(UInt8(0x80 | scalar >> 12 & 0x3F))
                out.append(UInt8(0x80 | scalar >> 6 & 0x3F))
                out.append(UInt8(0x80 | scalar & 0x3F))
            }
            return
        default:
            throw error(.invalidEscape("\\" + printable(b[i + 1])))
        }
        out.append(simple)
        i += 2
    }

    /// The four hex digits of a `\u` escape starting at `at` (the backslash).
    func hexUnit(at start: Int) throws(JSONReadError) -> UInt16 {
        var v: UInt16 = 0
        for k in 2..<6 {
            guard start + k < b.count else {
                var copy = self
                copy.i = start
                throw copy.error(.unexpectedEnd(expected: "four hex digits after \\u"))
            }
            let c = b[start + k]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default:
                var copy = self
                copy.i = start
                let text = String(
                    decoding: b[start..<min(start + 6, b.count)].map { $0 < 0x20 || $0 >= 0x7F ? UInt8(ascii: "?") : $0 }, as: UTF8.self)
                throw copy.error(.invalidEscape(text))
            }
            v = v << 4 | UInt16(digit)
        }
        return v
    }

    /// One multi-byte UTF-8 sequence (Unicode table 3-7: no overlongs, surrogates or values above U+10FFFF).
    mutating func multibyte() throws(JSONReadError) {
        let c = b[i]
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF  // the range of the second byte
        switch c {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw error(.invalidUTF8)
        }
        guard i + length <= b.count else { throw error(.invalidUTF8) }
        guard b[i + 1] >= low && b[i + 1] <= high else { throw error(.invalidUTF8) }
        for k in 2..<length where b[i + k] & 0xC0 != 0x80 { throw error(.invalidUTF8) }
        i += length
    }

    // MARK: Numbers

    /// A number (RFC 8259 section 6), classified exactly from its text (see `JSONValue`).
    mutating func number() throws(JSONReadError) -> JSONValue {
        let start = i
        let negative = b[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        let integerStart = i
        guard i < b.count else { throw error(.unexpectedEnd(expected: "a digit")) }
        guard isDigit(b[i]) else { throw error(.unexpected(found: found(), expected: "a digit")) }
        if b[i] == UInt8(ascii: "0") {
            i += 1
            if i < b.count && isDigit(b[i]) { i = start; throw error(.leadingZero) }
        } else {
            while i < b.count && isDigit(b[i]) { i += 1 }
        }
        let integerEnd = i
        var fractionEnd = i
        if i < b.count && b[i] == UInt8(ascii: ".") {
            i += 1
            guard i < b.count else { throw error(.unexpectedEnd(expected: "a digit after '.'")) }
            guard isDigit(b[i]) else { throw error(.unexpected(found: found(), expected: "a digit after '.'")) }
            while i < b.count && isDigit(b[i]) { i += 1 }
            fractionEnd = i
        }
        var exponent = 0
        if i < b.count && (b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E")) {
            i += 1
            var exponentNegative = false
            if i < b.count && (b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-")) {
                exponentNegative = b[i] == UInt8(ascii: "-")
                i += 1
            }
            guard i < b.count else { throw error(.unexpectedEnd(expected: "a digit in the exponent")) }
            guard isDigit(b[i]) else { throw error(.unexpected(found: found(), expected: "a digit in the exponent")) }
            while i < b.count && isDigit(b[i]) {
                // Saturates: beyond a billion the class of the value cannot change for a text this short.
                exponent = min(exponent * 10 + Int(b[i] - UInt8(ascii: "0")), 1_000_000_000)
                i += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        if i - start > maximumNumberLength {
            i = start
            throw error(.numberTooLong(limit: maximumNumberLength))
        }
        return classify(
            start: start, negative: negative, integer: integerStart..<integerEnd,
            fraction: (integerEnd + 1)..<max(integerEnd + 1, fractionEnd), exponent: exponent)
    }

    /// The value of digits `integer` `.` `fraction` times 10^`exponent`.
    func classify(start: Int, negative: Bool, integer: Range<Int>, fraction: Range<Int>, exponent: Int) -> JSONValue {
        // The digits as one sequence; position p has place value 10^(integer.count - 1 - p + exponent).
        let total = integer.count + fraction.count
        @inline(__always) func digit(_ p: Int) -> UInt8 {
            (p < integer.count ? b[integer.lowerBound + p] : b[fraction.lowerBound + p - integer.count]) - UInt8(ascii: "0")
        }
        var first = 0
        while first < total && digit(first) == 0 { first += 1 }
        if first == total { return .integer(0) }  // every digit is 0 (so -0 and 0e5 too)
        var last = total - 1
        while digit(last) == 0 { last -= 1 }
        let lastPlace = integer.count - 1 - last + exponent
        let firstPlace = integer.count - 1 - first + exponent
        guard lastPlace >= 0 else { return .number(double(start)) }
        guard firstPlace <= 18 else { return .largeInteger(double(start)) }
        // Below 10^19, so exact in UInt64.
        var magnitude: UInt64 = 0
        for p in first...last { magnitude = magnitude * 10 + UInt64(digit(p)) }
        for _ in 0..<lastPlace { magnitude *= 10 }
        if negative {
            if magnitude <= UInt64(Int64.max) { return .integer(-Int64(magnitude)) }
            if magnitude == UInt64(Int64.max) + 1 { return .integer(Int64.min) }
        } else if magnitude <= UInt64(Int64.max) {
            return .integer(Int64(magnitude))
        }
        return .largeInteger(double(start))
    }

    /// The nearest double to the number text from `start` to the current position.
    func double(_ start: Int) -> Double {
        let text = String(decoding: UnsafeBufferPointer(rebasing: b[start..<i]), as: UTF8.self)
        if let d = Double(text) { return d }
        return b[start] == UInt8(ascii: "-") ? -.infinity : .infinity
    }

    @inline(__always) func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }

    // MARK: Whitespace and errors

    @inline(__always) mutating func skipWhitespace() {
        while i < b.count {
            switch b[i] {
            case 0x20, 0x0A, 0x0D, 0x09: i += 1
            default: return
            }
        }
    }

    /// What is at the current position, in words: a word of letters as written, a character, or the end.
    func found() -> String {
        guard i < b.count else { return "the end" }
        let c = b[i]
        if isLetter(c) {
            var end = i
            while end < b.count && end - i < 16 && (isLetter(b[end]) || isDigit(b[end])) { end += 1 }
            return "'" + String(decoding: UnsafeBufferPointer(rebasing: b[i..<end]), as: UTF8.self) + "'"
        }
        switch c {
        case 0x00: return "a NUL byte"
        case 0x0A, 0x0D: return "a line break"
        case 0x09: return "a tab"
        case 0x20: return "a space"
        case 0x21...0x7E: return "'" + printable(c) + "'"
        case 0x80...: return "a non-ASCII character"
        default: return "the control character U+" + JSONReadError.hex4(UInt16(c))
        }
    }

    @inline(__always) func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") }

    func printable(_ c: UInt8) -> String {
        c >= 0x20 && c < 0x7F ? String(UnicodeScalar(c)) : "\\x" + String(JSONReadError.hex4(UInt16(c)).suffix(2))
    }

    /// An error at the current position. The column counts characters (not bytes) from the line start.
    func error(_ reason: JSONReadError.Reason) -> JSONReadError {
        var line = 1
        var column = 1
        var k = 0
        let end = min(i, b.count)
        while k < end {
            let c = b[k]
            if c == 0x0A {
                line += 1
                column = 1
            } else if c & 0xC0 != 0x80 {
                column += 1
            }
            k += 1
        }
        return JSONReadError(reason: reason, line: line, column: column)
    }
}

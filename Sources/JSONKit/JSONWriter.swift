/// A small JSON byte writer: appends compact UTF-8 JSON into a `[UInt8]`, in the order you write it.
///
/// Members come out exactly in the order they are written (no dictionary), strings are fully escaped,
/// and doubles print the same bytes on every platform. Write with closures:
///
/// ```swift
/// var w = JSONWriter()
/// w.object { o in
///     o.member("id", "offers")
///     o.member("count", 3)
///     o.member("tags") { $0.array { a in a.element("new"); a.element("hot") } }
///     o.member("parent", nil as String?)
/// }
/// let body: [UInt8] = w.bytes   // {"id":"offers","count":3,"tags":["new","hot"],"parent":null}
/// ```
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public private(set) var bytes: [UInt8]
    /// A value was written at the current level, so the next one needs a comma.
    private var needsComma = false
    /// A member name was just written, so the next value follows its colon directly.
    private var afterKey = false

    /// Starts an empty document, reserving room for `capacity` bytes.
    public init(reservingCapacity capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The bytes of one value written on its own.
    public static func encode(_ value: some JSONWritable) -> [UInt8] {
        var writer = JSONWriter()
        value.writeJSON(into: &writer)
        return writer.bytes
    }

    // MARK: - Containers

    /// Writes an object whose members `body` writes.
    public mutating func object(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
        afterKey = false
    }

    /// Writes an array whose elements `body` writes.
    public mutating func array(_ body: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        body(&self)
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
        afterKey = false
    }

    /// Writes an array with one element per item of `items`.
    public mutating func array<S: Sequence>(_ items: S) where S.Element: JSONWritable {
        array { writer in
            for item in items { item.writeJSON(into: &writer) }
        }
    }

    // MARK: - Members and elements

    /// Writes a member name known at compile time (the usual case): the same bytes as the `String`
    /// overload, without going through a `String`.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { writeEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Writes a member whose value is `value` (`nil` writes `null`).
    public mutating func member(_ name: StaticString, _ value: some JSONWritable) {
        key(name)
        value.writeJSON(into: &self)
    }

    /// Writes a member whose value `body` writes (an object, an array, or any one value).
    public mutating func member(_ name: StaticString, _ body: (inout JSONWriter) -> Void) {
        key(name)
        body(&self)
    }

    /// Writes an object member whose members `body` writes.
    public mutating func objectMember(_ name: StaticString, _ body: (inout JSONWriter) -> Void) {
        key(name)
        object(body)
    }

    /// Writes an array member whose elements `body` writes.
    public mutating func arrayMember(_ name: StaticString, _ body: (inout JSONWriter) -> Void) {
        key(name)
        array(body)
    }

    /// Writes a member name; the next value written is its value.
    @_disfavoredOverload
    public mutating func key(_ name: String) {
        separate()
        writeString(name)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    /// Writes a member whose value is `value` (`nil` writes `null`).
    @_disfavoredOverload
    public mutating func member(_ name: String, _ value: some JSONWritable) {
        key(name)
        value.writeJSON(into: &self)
    }

    /// Writes a member whose value `body` writes (an object, an array, or any one value).
    @_disfavoredOverload
    public mutating func member(_ name: String, _ body: (inout JSONWriter) -> Void) {
        key(name)
        body(&self)
    }

    /// Writes an object member whose members `body` writes.
    @_disfavoredOverload
    public mutating func objectMember(_ name: String, _ body: (inout JSONWriter) -> Void) {
        key(name)
        object(body)
    }

    /// Writes an array member whose elements `body` writes.
    @_disfavoredOverload
    public mutating func arrayMember(_ name: String, _ body: (inout JSONWriter) -> Void) {
        key(name)
        array(body)
    }

    /// Writes one array element (or a top-level value).
    public mutating func element(_ value: some JSONWritable) {
        value.writeJSON(into: &self)
    }

    // MARK: - Scalars

    /// Writes a string, escaped as JSON requires.
    public mutating func string(_ value: String) {
        separate()
        writeString(value)
        needsComma = true
    }

    /// Writes an integer.
    public mutating func int(_ value: Int) {
        separate()
        writeInt(value)
        needsComma = true
    }

    /// Writes a double: integral values below 2^53 without a fraction (`320`), others in Swift's
    /// shortest round-trip form (`412.5`, `1e-05`); NaN and infinities, which JSON lacks, as `null`.
    public mutating func double(_ value: Double) {
        separate()
        if !value.isFinite {
            bytes.append(contentsOf: "null".utf8)
        } else if value.magnitude < 9_007_199_254_740_992, Double(Int(value)) == value {
            // (Not `rounded()`: it needs libm, which a stdlib-only module does not link.)
            writeInt(Int(value))
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
        needsComma = true
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: value ? "true".utf8 : "false".utf8)
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    // MARK: - Byte-level helpers (log lines, bytes borrowed from a request)

    /// Appends `text` as it is, outside any value (e.g. the "\n" after a log line's object); the
    /// comma bookkeeping is not touched.
    public mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Writes a string from UTF-8 bytes, escaped as JSON requires.
    public mutating func string(utf8 value: Span<UInt8>) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        // The pointer lives only inside this call.
        value.withUnsafeBufferPointer { writeEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes a value already rendered as JSON (e.g. by a `JSONBuffer`), with the comma before it.
    public mutating func json(_ rendered: [UInt8]) {
        separate()
        bytes.append(contentsOf: rendered)
        needsComma = true
    }

    /// Writes a string whose characters `body` appends directly: only for text that needs no escaping
    /// (timestamps, fixed names), to spare building a String for it.
    public mutating func verbatimString(_ body: (inout [UInt8]) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        body(&bytes)
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    // MARK: - Bytes

    /// Puts the comma (or nothing, right after a member name) that precedes the next value.
    private mutating func separate() {
        if afterKey {
            afterKey = false
        } else if needsComma {
            bytes.append(UInt8(ascii: ","))
        }
    }

    private mutating func writeInt(_ value: Int) {
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // Digits of the magnitude (safe for Int.min), least significant first, then reversed in place.
        let start = bytes.count
        var rest = value.magnitude
        while rest > 0 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10))
            rest /= 10
        }
        bytes[start...].reverse()
    }

    static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") &+ nibble : UInt8(ascii: "a") &+ (nibble &- 10)
    }

    private mutating func writeString(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        // `withUTF8` gives every string one contiguous buffer (small strings from a stack copy), so
        // the common case, nothing to escape, is one scan and one copy.
        var value = value
        value.withUTF8 { writeEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Whether `buffer` holds a byte that JSON escapes (below 0x20, `"` or `\`): eight bytes per
    /// step (bytes of 0x80 and above, UTF-8's multi-byte sequences, never match).
    static func needsEscaping(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = buffer.baseAddress else { return false }
        let count = buffer.count
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var i = 0
        let raw = UnsafeRawPointer(base)
        while i + 8 <= count {
            let w = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let quote = w ^ (ones &* 0x22)
            let backslash = w ^ (ones &* 0x5C)
            // A byte below 0x20; a byte equal to 0x22; a byte equal to 0x5C (exact as a yes/no answer).
            let below = (w &- ones &* 0x20) & ~w
            let isQuote = (quote &- ones) & ~quote
            let isBackslash = (backslash &- ones) & ~backslash
            if (below | isQuote | isBackslash) & highs != 0 { return true }
            i += 8
        }
        while i < count {
            let byte = base[i]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            i += 1
        }
        return false
    }

    /// The escaped characters of a string (without its quotes).
    private mutating func writeEscaped(_ buffer: UnsafeBufferPointer<UInt8>) {
        if !Self.needsEscaping(buffer) {
            bytes.append(contentsOf: buffer)
            return
        }
        for byte in buffer {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0..<0x20:
                bytes.append(contentsOf: [
                    UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                    Self.hexDigit(byte >> 4), Self.hexDigit(byte & 0x0F),
                ])
            default: bytes.append(byte)
            }
        }
    }
}

/// A value that knows how to write itself as JSON.
public protocol JSONWritable {
    /// Writes this value as one JSON value.
    func writeJSON(into writer: inout JSONWriter)
}

extension String: JSONWritable {
    /// Writes the string, escaped.
    public func writeJSON(into writer: inout JSONWriter) { writer.string(self) }
}

extension Substring: JSONWritable {
    /// Writes the substring as a string, escaped.
    public func writeJSON(into writer: inout JSONWriter) { writer.string(String(self)) }
}

extension Int: JSONWritable {
    /// Writes the integer.
    public func writeJSON(into writer: inout JSONWriter) { writer.int(self) }
}

extension Double: JSONWritable {
    /// Writes the double deterministically (see `JSONWriter.double(_:)`).
    public func writeJSON(into writer: inout JSONWriter) { writer.double(self) }
}

extension Bool: JSONWritable {
    /// Writes `true` or `false`.
    public func writeJSON(into writer: inout JSONWriter) { writer.bool(self) }
}

extension Optional: JSONWritable where Wrapped: JSONWritable {
    /// Writes the wrapped value, or `null`.
    public func writeJSON(into writer: inout JSONWriter) {
        switch self {
        case .some(let value): value.writeJSON(into: &writer)
        case .none: writer.null()
        }
    }
}

extension Array: JSONWritable where Element: JSONWritable {
    /// Writes an array of the elements.
    public func writeJSON(into writer: inout JSONWriter) { writer.array(self) }
}

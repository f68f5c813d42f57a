/// A byte buffer for hand-rendered JSON on a hot path: one allocation it owns, appends that only compare
/// against the capacity (no copy-on-write uniqueness check), growing by doubling when a document
/// outgrows its estimate.
///
/// It has no comma bookkeeping: the caller writes punctuation itself, usually as one static run per
/// member (`,"grabberVisible":`), then the value. Values come out byte for byte as `JSONWriter` writes
/// them. Not copyable, so the memory it owns has exactly one owner and is freed once.
///
/// ```swift
/// var out = JSONBuffer(capacity: 256)
/// out.append("{\"id\":")
/// out.string(id)
/// out.append(",\"count\":")
/// out.int(3)
/// out.append("}")
/// let body: [UInt8] = out.bytes
/// ```
public struct JSONBuffer: ~Copyable {
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var used: Int
    @usableFromInline var capacity: Int

    /// An empty buffer with room for `capacity` bytes before it first grows.
    public init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
        used = 0
    }

    deinit { base.deallocate() }

    /// The number of bytes written.
    public var count: Int { used }

    /// A copy of the bytes written.
    public var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: used) { buffer, initialized in
            buffer.baseAddress!.initialize(from: base, count: used)
            initialized = used
        }
    }

    // MARK: - Raw bytes

    /// Appends one byte as it is.
    @inlinable @inline(__always)
    public mutating func append(_ byte: UInt8) {
        if used == capacity { grow(toHold: 1) }
        base[used] = byte
        used &+= 1
    }

    /// Appends `text` as it is (punctuation, member names, literals known to need no escaping).
    @inlinable @inline(__always)
    public mutating func append(_ text: StaticString) {
        let count = text.utf8CodeUnitCount
        if capacity &- used < count { grow(toHold: count) }
        (base + used).initialize(from: text.utf8Start, count: count)
        used &+= count
    }

    /// Appends bytes as they are (JSON rendered elsewhere).
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Appends bytes as they are (internal: no unsafe pointer crosses the module's API).
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, bytes.count > 0 else { return }
        if capacity &- used < bytes.count { grow(toHold: bytes.count) }
        (base + used).initialize(from: source, count: bytes.count)
        used &+= bytes.count
    }

    /// Appends a copy of bytes already written, `range` of this buffer (a member repeated
    /// elsewhere in the same document is rendered once).
    public mutating func appendCopy(of range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= used, "range outside the bytes written")
        let count = range.count
        if capacity &- used < count { grow(toHold: count) }
        (base + used).initialize(from: base + range.lowerBound, count: count)
        used &+= count
    }

    /// Makes room for `extra` more bytes: at least doubles, so a document that outgrows its estimate
    /// is copied a few times at most.
    @usableFromInline
    mutating func grow(toHold extra: Int) {
        let newCapacity = max(capacity &* 2, used &+ extra)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: used)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    // MARK: - Values

    /// Writes a string, quoted and escaped as JSON requires (the bytes `JSONWriter.string` writes).
    public mutating func string(_ value: String) {
        var value = value
        // `withUTF8` gives every string one contiguous buffer (small strings from a stack copy).
        value.withUTF8 { quoted($0) }
    }

    /// Writes a string that cannot hold a byte JSON escapes (an enum's raw value): quoted, without
    /// the escape scan.
    public mutating func safeString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            assert(!JSONWriter.needsEscaping(utf8), "safeString given text that JSON escapes")
            let count = utf8.count
            if capacity &- used < count &+ 2 { grow(toHold: count &+ 2) }
            base[used] = UInt8(ascii: "\"")
            if let source = utf8.baseAddress { (base + (used &+ 1)).initialize(from: source, count: count) }
            base[used &+ 1 &+ count] = UInt8(ascii: "\"")
            used &+= count &+ 2
        }
    }

    /// Writes an optional string, or `null`.
    public mutating func string(_ value: String?) {
        if let value { string(value) } else { append("null") }
    }

    /// Writes an optional safe string (see `safeString(_:)`), or `null`.
    public mutating func safeString(_ value: String?) {
        if let value { safeString(value) } else { append("null") }
    }

    /// Writes `true` or `false`.
    @inlinable @inline(__always)
    public mutating func bool(_ value: Bool) {
        if value { append("true") } else { append("false") }
    }

    /// Writes an integer.
    public mutating func int(_ value: Int) {
        // Digits of the magnitude (safe for Int.min), least significant first, into the end of the
        // room reserved for the longest Int, then moved down.
        if capacity &- used < 20 { grow(toHold: 20) }
        if value < 0 {
            base[used] = UInt8(ascii: "-")
            used &+= 1
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let destination = base + used
        let count = withUnsafeMutableBytes(of: &digits) { scratch -> Int in
            var rest = value.magnitude
            var index = scratch.count
            repeat {
                index &-= 1
                scratch[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
                rest /= 10
            } while rest > 0
            let count = scratch.count &- index
            destination.initialize(
                from: scratch.baseAddress!.advanced(by: index).assumingMemoryBound(to: UInt8.self), count: count)
            return count
        }
        used &+= count
    }

    /// Writes a double as `JSONWriter.double` does: integral values below 2^53 without a fraction,
    /// others in Swift's shortest round-trip form, NaN and infinities as `null`.
    public mutating func double(_ value: Double) {
        if !value.isFinite {
            append("null")
        } else if value.magnitude < 9_007_199_254_740_992, Double(Int(value)) == value {
            int(Int(value))
        } else {
            var text = value.description
            text.withUTF8 { append($0) }
        }
    }

    /// Writes an optional double, or `null`.
    public mutating func double(_ value: Double?) {
        if let value { double(value) } else { append("null") }
    }

    /// The quoted, escaped characters of a string given as UTF-8.
    mutating func quoted(_ utf8: UnsafeBufferPointer<UInt8>) {
        if !JSONWriter.needsEscaping(utf8) {
            let count = utf8.count
            if capacity &- used < count &+ 2 { grow(toHold: count &+ 2) }
            base[used] = UInt8(ascii: "\"")
            if let source = utf8.baseAddress { (base + (used &+ 1)).initialize(from: source, count: count) }
            base[used &+ 1 &+ count] = UInt8(ascii: "\"")
            used &+= count &+ 2
            return
        }
        append(UInt8(ascii: "\""))
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\\"): append("\\\\")
            case 0x0A: append("\\n")
            case 0x0D: append("\\r")
            case 0x09: append("\\t")
            case 0x08: append("\\b")
            case 0x0C: append("\\f")
            case 0..<0x20:
                append("\\u00")
                append(JSONWriter.hexDigit(byte >> 4))
                append(JSONWriter.hexDigit(byte & 0x0F))
            default: append(byte)
            }
        }
        append(UInt8(ascii: "\""))
    }
}

/// A tiny JSON byte writer for the bodies and log lines this layer produces itself.
/// Hand-written because `JSONEncoder` dominated handler CPU in the prototype and has random key order.
struct JSONOut {
    var bytes: [UInt8]

    init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func raw(_ s: StaticString) {
        s.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func raw(_ b: UInt8) { bytes.append(b) }

    /// A JSON string literal with quotes, escaping `"`, `\` and control characters.
    mutating func string(_ s: String) {
        bytes.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { escapeInto(&bytes, $0) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// A JSON string literal from raw UTF-8 bytes (already known to be valid UTF-8).
    mutating func string(utf8 buffer: UnsafeBufferPointer<UInt8>) {
        bytes.append(UInt8(ascii: "\""))
        escapeInto(&bytes, buffer)
        bytes.append(UInt8(ascii: "\""))
    }

    mutating func int(_ v: Int) {
        if v == 0 { bytes.append(UInt8(ascii: "0")); return }
        var n = v.magnitude
        var tmp: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                  UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        withUnsafeMutableBytes(of: &tmp) { buf in
            while n > 0 {
                buf[count] = UInt8(ascii: "0") &+ UInt8(n % 10)
                n /= 10
                count += 1
            }
            if v < 0 { bytes.append(UInt8(ascii: "-")) }
            while count > 0 {
                count -= 1
                bytes.append(buf[count])
            }
        }
    }

    mutating func double(_ v: Double) {
        if v.isFinite { bytes.append(contentsOf: v.description.utf8) } else { raw("null") }
    }

    mutating func bool(_ v: Bool) { if v { raw("true") } else { raw("false") } }

    /// `"key":` (the key is escaped too).
    mutating func key(_ k: String) {
        string(k)
        bytes.append(UInt8(ascii: ":"))
    }
}

private let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

@inline(__always)
private func escapeInto(_ out: inout [UInt8], _ input: UnsafeBufferPointer<UInt8>) {
    for b in input {
        switch b {
        case UInt8(ascii: "\""): out.append(UInt8(ascii: "\\")); out.append(b)
        case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\")); out.append(b)
        case 0x0A: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "n"))
        case 0x0D: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "r"))
        case 0x09: out.append(UInt8(ascii: "\\")); out.append(UInt8(ascii: "t"))
        case 0x00..<0x20, 0x7F:
            out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                    hexDigits[Int(b >> 4)], hexDigits[Int(b & 0xF)]])
        default: out.append(b)
        }
    }
}

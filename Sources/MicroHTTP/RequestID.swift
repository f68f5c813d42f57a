import Synchronization

/// `X-Request-Id` values: the client's when sane, otherwise a per-process random prefix plus a counter.
enum RequestID {
    /// Base-36 digits: generated ids stay within 15 bytes for the first 2.8 × 10¹² requests, so they
    /// are Swift small strings (no heap allocation per request).
    private static let digits: [UInt8] = Array("0123456789abcdefghijklmnopqrstuvwxyz".utf8)
    /// Six random base-36 characters (about 31 bits): ids of different processes rarely collide.
    private static let prefixBytes: [UInt8] = {
        var g = SystemRandomNumberGenerator()
        return (0..<6).map { _ in digits[Int(g.next(upperBound: UInt64(36)))] }
    }()
    private static let counter = Atomic<UInt64>(0)

    /// A new id, e.g. `k3x9qa-2bz`.
    static func next() -> String {
        var n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        var tail: (UInt64, UInt64) = (0, 0)  // up to 13 base-36 digits of a UInt64, written from the end
        return withUnsafeMutableBytes(of: &tail) { buf in
            var count = 0
            repeat {
                buf[15 - count] = digits[Int(n % 36)]
                n /= 36
                count += 1
            } while n > 0
            return String(unsafeUninitializedCapacity: prefixBytes.count + 1 + count) { out in
                var i = 0
                for b in prefixBytes { out[i] = b; i += 1 }
                out[i] = UInt8(ascii: "-"); i += 1
                for k in (16 - count)..<16 { out[i] = buf[k]; i += 1 }
                return i
            }
        }
    }

    /// The client's id if it is 1–128 characters of `A-Za-z0-9._:-`, else nil.
    static func sanitize(_ bytes: Span<UInt8>) -> String? {
        guard bytes.count > 0, bytes.count <= 128 else { return nil }
        for i in 0..<bytes.count where !isAllowed(bytes[i]) { return nil }
        return bytes.utf8String
    }

    /// Same check for Swift strings (tests).
    static func isSane(_ s: String) -> Bool {
        let u = s.utf8
        return !u.isEmpty && u.count <= 128 && u.allSatisfy(isAllowed)
    }

    @inline(__always) private static func isAllowed(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || b == UInt8(ascii: ".") || b == UInt8(ascii: "_") || b == UInt8(ascii: ":") || b == UInt8(ascii: "-")
    }
}

import Synchronization

/// `X-Request-Id` values: the client's when sane, otherwise a per-process random prefix plus a counter.
enum RequestID {
    private static let prefix: String = {
        var g = SystemRandomNumberGenerator()
        let v = g.next() as UInt64
        let hex = String(v, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }()
    private static let counter = Atomic<UInt64>(0)

    /// A new id, e.g. `3f9a2b1c04d5e6f7-1a`.
    static func next() -> String {
        let n = counter.wrappingAdd(1, ordering: .relaxed).newValue
        // One allocation: prefix, '-', then the counter in lower-case hex (as String(n, radix: 16)).
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 16) { hex in
            var digits = 0
            var rest = n
            repeat {
                let d = UInt8(truncatingIfNeeded: rest & 0xF)
                hex[15 - digits] = d < 10 ? 0x30 &+ d : 0x61 &+ (d &- 10)
                digits += 1
                rest >>= 4
            } while rest > 0
            return String(unsafeUninitializedCapacity: prefixBytes.count + 1 + digits) { out in
                var i = 0
                for b in prefixBytes { out[i] = b; i += 1 }
                out[i] = UInt8(ascii: "-"); i += 1
                for k in (16 - digits)..<16 { out[i] = hex[k]; i += 1 }
                return i
            }
        }
    }
    private static let prefixBytes: [UInt8] = Array(prefix.utf8)

    /// The client's id if it is 1–128 characters of `A-Za-z0-9._:-`, else nil.
    static func sanitize(_ p: UnsafePointer<CChar>) -> String? {
        var n = 0
        while p[n] != 0 {
            guard n < 128, isAllowed(UInt8(bitPattern: p[n])) else { return nil }
            n += 1
        }
        return n == 0 ? nil : String(cString: p)
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

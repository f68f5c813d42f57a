/// `Content-Type` without parameters or white space (`application/json`, the common case): printable
/// ASCII without spaces, tabs or `;`. Then the essence is the value itself, lower-cased ASCII, and
/// `MediaType.isJSON` reduces to comparing bytes. Returns nil for every other shape (parameters,
/// white space, non-ASCII), which take the general path.
enum MediaTypeFastPath {
    static func isJSON(_ value: String) -> Bool? {
        value.utf8.withContiguousStorageIfAvailable { b -> Bool? in
            guard !b.isEmpty else { return nil }
            for c in b where c <= 0x20 || c >= 0x7F || c == UInt8(ascii: ";") { return nil }
            @inline(__always) func lower(_ c: UInt8) -> UInt8 { (c >= 0x41 && c <= 0x5A) ? c | 0x20 : c }
            func hasPrefix(_ p: StaticString) -> Bool {
                guard b.count >= p.utf8CodeUnitCount else { return false }
                for i in 0..<p.utf8CodeUnitCount where lower(b[i]) != p.utf8Start[i] { return false }
                return true
            }
            func hasSuffix(_ p: StaticString) -> Bool {
                let n = p.utf8CodeUnitCount, offset = b.count - n
                guard offset >= 0 else { return false }
                for i in 0..<n where lower(b[offset + i]) != p.utf8Start[i] { return false }
                return true
            }
            if b.count == 16 && hasPrefix("application/json") { return true }
            // application/*+json: "application/" and "+json" may not overlap (as with the String checks).
            return b.count >= 12 + 5 && hasPrefix("application/") && hasSuffix("+json")
        } ?? nil
    }
}

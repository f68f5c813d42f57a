/// Reading the borrowed byte views `HTTPRequest` hands out (header values, query names and values)
/// without touching a pointer.
extension Span where Element == UInt8 {
    /// The bytes as a String (invalid UTF-8 repaired with U+FFFD).
    public var utf8String: String {
        // The pointer lives only inside this call.
        withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
    }

    /// A copy of the bytes.
    public var copiedBytes: [UInt8] {
        withUnsafeBufferPointer { Array($0) }
    }

    /// Whether the bytes are exactly `bytes`.
    public func equals(_ bytes: [UInt8]) -> Bool {
        guard count == bytes.count else { return false }
        for i in 0..<count where self[i] != bytes[i] { return false }
        return true
    }
}

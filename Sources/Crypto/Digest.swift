internal import CCrypto

/// SHA-256 and HMAC-SHA256 from OpenSSL's libcrypto. C pointers stay inside this file.
public enum SHA256 {
    /// The 32-byte SHA-256 digest of `bytes`.
    public static func hash(_ bytes: some Collection<UInt8>) -> [UInt8] {
        // Contiguous input (arrays, slices, native strings' UTF-8) is hashed in place: copying a
        // generic collection byte by byte can cost more than the digest itself.
        if let digest = bytes.withContiguousStorageIfAvailable({ hash(buffer: $0) }) { return digest }
        return Array(bytes).withUnsafeBufferPointer { hash(buffer: $0) }
    }

    private static func hash(buffer input: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: byteCount) { out, initialized in
            ccrypto_sha256(input.baseAddress, input.count, out.baseAddress)
            initialized = byteCount
        }
    }

    /// The digest's length in bytes.
    public static let byteCount = Int(SHA256_DIGEST_LENGTH)

    /// The digest as lower-case hex (64 characters).
    public static func hex(_ bytes: some Collection<UInt8>) -> String { Hex.encode(hash(bytes)) }

    /// The first 8 bytes of the digest of `text`'s UTF-8, read as a big-endian unsigned integer
    /// (experiment buckets); no digest array is allocated.
    public static func bigEndianPrefix(of text: String) -> UInt64 {
        var text = text
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: byteCount) { digest in
            text.withUTF8 { ccrypto_sha256($0.baseAddress, $0.count, digest.baseAddress) }
            var value: UInt64 = 0
            for i in 0..<8 { value = value << 8 | UInt64(digest[i]) }
            return value
        }
    }

    /// The first `length` bytes (at most 32) of the digest of `bytes` as lower-case hex between double
    /// quotes (an HTTP entity tag), built in one string: no digest array, no intermediate strings.
    public static func quotedHexPrefix(of bytes: [UInt8], length: Int) -> String {
        precondition(length >= 0 && length <= byteCount, "a SHA-256 digest has \(byteCount) bytes")
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: byteCount) { digest in
            bytes.withUnsafeBufferPointer { ccrypto_sha256($0.baseAddress, $0.count, digest.baseAddress) }
            return String(unsafeUninitializedCapacity: 2 * length + 2) { out in
                out[0] = UInt8(ascii: "\"")
                for i in 0..<length {
                    out[1 + 2 * i] = Hex.digit(digest[i] >> 4)
                    out[2 + 2 * i] = Hex.digit(digest[i] & 0x0f)
                }
                out[2 * length + 1] = UInt8(ascii: "\"")
                return 2 * length + 2
            }
        }
    }
}

public enum HMACSHA256 {
    /// HMAC-SHA256 of `message` under `key` (32 bytes).
    public static func authenticationCode(for message: some Collection<UInt8>, key: some Collection<UInt8>) -> [UInt8] {
        var mac = [UInt8](repeating: 0, count: 32)
        var macLength: UInt32 = 0
        let keyBytes = Array(key)
        let messageBytes = Array(message)
        keyBytes.withUnsafeBufferPointer { k in
            messageBytes.withUnsafeBufferPointer { m in
                mac.withUnsafeMutableBufferPointer { out in
                    // A zero-length key still needs a valid pointer.
                    let keyPointer = UnsafeRawPointer(k.baseAddress) ?? UnsafeRawPointer(out.baseAddress!)
                    _ = HMAC(EVP_sha256(), keyPointer, Int32(k.count), m.baseAddress, m.count, out.baseAddress, &macLength)
                }
            }
        }
        return mac
    }
}

/// Comparison whose time depends only on the lengths, never on where the inputs first differ.
public func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    return a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in CRYPTO_memcmp(pa.baseAddress, pb.baseAddress, a.count) == 0 } }
}

/// Cryptographically secure random bytes (OpenSSL's DRBG).
public func secureRandomBytes(_ count: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: 0, count: count)
    let ok = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
    precondition(ok == 1, "RAND_bytes failed: the system has no entropy source")
    return bytes
}

public enum Hex {
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        encode(Array(bytes))
    }

    /// The concrete form: a generic collection from another module is walked through witness calls
    /// byte by byte, which made hex-encoding a 16-byte ETag cost more than hashing the body it names.
    public static func encode(_ bytes: [UInt8]) -> String {
        bytes.withUnsafeBufferPointer { input in
            String(unsafeUninitializedCapacity: input.count * 2) { out in
                var i = 0
                for b in input {
                    out[i] = digit(b >> 4)
                    out[i + 1] = digit(b & 0x0f)
                    i += 2
                }
                return i
            }
        }
    }

    @inline(__always) static func digit(_ v: UInt8) -> UInt8 { v < 10 ? 0x30 + v : 0x57 + v }
}

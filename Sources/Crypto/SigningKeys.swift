internal import CCrypto

/// The JWS signature algorithms sheetd verifies with a public key (RFC 7518 §3.3 and §3.4, RFC 8037).
public enum SignatureAlgorithm: String, Sendable, CaseIterable {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256; the signature is r || s (64 bytes).
    case es256 = "ES256"
    /// Ed25519 (RFC 8037's `EdDSA` with `crv: Ed25519`).
    case edDSA = "EdDSA"
}

/// A key OpenSSL refused, or a key of a kind sheetd does not sign or verify with.
public struct KeyError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The kinds of key pair `PrivateKey.generate` makes.
public enum KeyKind: Sendable, Equatable {
    case rsa(bits: Int)
    case p256
    case ed25519
}

/// Owns one `EVP_PKEY` (freed in `deinit`) and knows which algorithm it is for. C pointers stay in this file.
///
/// Sendable: after construction the key is only read; OpenSSL 3 allows one `EVP_PKEY` to be used
/// by several threads at once, each with its own operation context.
final class KeyHandle: @unchecked Sendable {
    let pointer: OpaquePointer
    let algorithm: SignatureAlgorithm
    let bits: Int

    init(_ pointer: OpaquePointer) throws(KeyError) {
        self.pointer = pointer
        switch EVP_PKEY_get_base_id(pointer) {
        case EVP_PKEY_RSA: algorithm = .rs256
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 32)
            var length = 0
            let ok = EVP_PKEY_get_utf8_string_param(pointer, OSSL_PKEY_PARAM_GROUP_NAME, &name, name.count, &length) == 1
            let group = ok ? String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
            guard group == "prime256v1" || group == "P-256" else {
                EVP_PKEY_free(pointer)
                throw KeyError("an EC key must be on P-256 (this one is on \(group.isEmpty ? "an unnamed curve" : group))")
            }
            algorithm = .es256
        case EVP_PKEY_ED25519: algorithm = .edDSA
        default:
            EVP_PKEY_free(pointer)
            throw KeyError("only RSA, EC P-256 and Ed25519 keys are supported")
        }
        bits = Int(EVP_PKEY_get_bits(pointer))
    }

    deinit { EVP_PKEY_free(pointer) }

    /// The key parsed from PEM text (`isPrivate`: a private key in PKCS#8 or its traditional form; else a public key).
    static func read(pem: [UInt8], isPrivate: Bool) throws(KeyError) -> KeyHandle {
        let pointer = pem.withUnsafeBytes { bytes -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(bytes.baseAddress, Int32(bytes.count)) else { return nil }
            defer { BIO_free(bio) }
            return isPrivate ? PEM_read_bio_PrivateKey(bio, nil, nil, nil) : PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let pointer else {
            ERR_clear_error()
            throw KeyError(isPrivate ? "not a PEM private key (RSA, EC P-256 or Ed25519)" : "not a PEM public key (RSA, EC P-256 or Ed25519)")
        }
        return try KeyHandle(pointer)
    }

    /// PEM text written by `write` into a memory BIO.
    func pem(_ write: (OpaquePointer) -> Int32) -> [UInt8] {
        guard let bio = BIO_new(BIO_s_mem()) else { fatalError("BIO_new failed: out of memory") }
        defer { BIO_free(bio) }
        precondition(write(bio) == 1, "PEM writing of a valid key failed")
        var bytes: UnsafeMutablePointer<CChar>?
        let count = ccrypto_bio_contents(bio, &bytes)
        guard let bytes, count > 0 else { return [] }
        return UnsafeRawBufferPointer(start: bytes, count: count).map { $0 }
    }

    /// One big-number parameter (`n`, `e`, `qx`, `qy`), `count` bytes or its own length when nil.
    func bigNumber(_ name: String, count: Int? = nil) -> [UInt8] {
        let size = count ?? Int(ccrypto_key_bn_param_size(pointer, name))
        var out = [UInt8](repeating: 0, count: size)
        let written = out.withUnsafeMutableBufferPointer { ccrypto_key_bn_param(pointer, name, $0.baseAddress, Int32(size)) }
        return written == size ? out : []
    }
}

/// SHA-256 fetched once: `EVP_sha256()` makes OpenSSL 3 look the implementation up on every use.
/// Unchecked: OpenSSL's fetched method objects are immutable and shared between threads by design.
nonisolated(unsafe) private let sha256 = EVP_MD_fetch(nil, "SHA256", nil)

/// A public key that verifies JWS signatures; the key decides the algorithm.
public final class PublicKey: Sendable {
    let handle: KeyHandle

    init(handle: KeyHandle) { self.handle = handle }

    /// The algorithm this key verifies (RSA: RS256, P-256: ES256, Ed25519: EdDSA).
    public var algorithm: SignatureAlgorithm { handle.algorithm }
    /// The key's size in bits (an RSA modulus's length).
    public var bits: Int { handle.bits }

    /// An RSA public key from its big-endian modulus and public exponent (a JWK's decoded `n`, `e`).
    public static func rsa(modulus: [UInt8], exponent: [UInt8]) throws(KeyError) -> PublicKey {
        let pointer = modulus.withUnsafeBufferPointer { n in
            exponent.withUnsafeBufferPointer { e in ccrypto_rsa_public_key(n.baseAddress, n.count, e.baseAddress, e.count) }
        }
        guard let pointer else { throw KeyError("OpenSSL refused the RSA modulus and exponent") }
        return PublicKey(handle: try KeyHandle(pointer))
    }

    /// A P-256 public key from its coordinates (a JWK's decoded `x`, `y`: 32 bytes each); a point
    /// that is not on the curve is refused.
    public static func p256(x: [UInt8], y: [UInt8]) throws(KeyError) -> PublicKey {
        guard x.count == 32, y.count == 32 else { throw KeyError("a P-256 key's x and y are 32 bytes each") }
        let point = [0x04] + x + y
        guard let pointer = point.withUnsafeBufferPointer({ ccrypto_p256_public_key($0.baseAddress, $0.count) }) else {
            throw KeyError("the point (x, y) is not on P-256")
        }
        return PublicKey(handle: try KeyHandle(pointer))
    }

    /// An Ed25519 public key (a JWK's decoded `x`: 32 bytes).
    public static func ed25519(_ x: [UInt8]) throws(KeyError) -> PublicKey {
        guard x.count == 32 else { throw KeyError("an Ed25519 key's x is 32 bytes") }
        guard let pointer = x.withUnsafeBufferPointer({ EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nil, $0.baseAddress, $0.count) })
        else { throw KeyError("OpenSSL refused the Ed25519 key") }
        return PublicKey(handle: try KeyHandle(pointer))
    }

    /// A public key from PEM text (SubjectPublicKeyInfo, `-----BEGIN PUBLIC KEY-----`).
    public convenience init(pem: [UInt8]) throws(KeyError) {
        self.init(handle: try KeyHandle.read(pem: pem, isPrivate: false))
    }

    /// The key as PEM text (SubjectPublicKeyInfo).
    public var pem: [UInt8] { handle.pem { PEM_write_bio_PUBKEY($0, handle.pointer) } }

    /// The key's JWK members (RFC 7517/7518/8037), base64url where binary: `kty` and `n`, `e`; or
    /// `kty`, `crv`, `x`, `y`; or `kty`, `crv`, `x`.
    public var jwkMembers: [(name: String, value: String)] {
        switch algorithm {
        case .rs256:
            return [("kty", "RSA"), ("n", Base64URL.encode(handle.bigNumber("n"))), ("e", Base64URL.encode(handle.bigNumber("e")))]
        case .es256:
            return [
                ("kty", "EC"), ("crv", "P-256"), ("x", Base64URL.encode(handle.bigNumber("qx", count: 32))),
                ("y", Base64URL.encode(handle.bigNumber("qy", count: 32))),
            ]
        case .edDSA:
            var raw = [UInt8](repeating: 0, count: 32)
            var count = 32
            _ = raw.withUnsafeMutableBufferPointer { EVP_PKEY_get_raw_public_key(handle.pointer, $0.baseAddress, &count) }
            return [("kty", "OKP"), ("crv", "Ed25519"), ("x", Base64URL.encode(raw.prefix(count)))]
        }
    }

    /// Whether `signature` (in its JWS form) is this key's signature of `message`, by the key's own
    /// algorithm. One verification: its cost is bounded by the key's size, whatever the input.
    public func isValidSignature(_ signature: [UInt8], for message: UnsafeRawBufferPointer) -> Bool {
        var signature = signature
        switch algorithm {
        case .rs256: guard signature.count == (bits + 7) / 8 else { return false }
        case .edDSA: guard signature.count == 64 else { return false }
        case .es256:
            guard signature.count == 64 else { return false }
            var der = [UInt8](repeating: 0, count: 72)
            let count = signature.withUnsafeBufferPointer { raw in
                der.withUnsafeMutableBufferPointer { ccrypto_es256_raw_to_der(raw.baseAddress, $0.baseAddress) }
            }
            guard count > 0 else { return false }
            signature = Array(der.prefix(Int(count)))
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, algorithm == .edDSA ? nil : sha256, nil, handle.pointer) == 1 else {
            ERR_clear_error()
            return false
        }
        // The message pointer may be nil for an empty message; OpenSSL wants a valid one.
        let empty: UInt8 = 0
        let valid = signature.withUnsafeBufferPointer { s in
            withUnsafePointer(to: empty) { fallback in
                EVP_DigestVerify(
                    context, s.baseAddress, s.count, message.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? fallback, message.count) == 1
            }
        }
        if !valid { ERR_clear_error() }
        return valid
    }

    /// `isValidSignature(_:for:)` over the bytes of a collection (copied only when not contiguous).
    public func isValidSignature(_ signature: [UInt8], for message: some Collection<UInt8>) -> Bool {
        if let result = message.withContiguousStorageIfAvailable({ isValidSignature(signature, for: UnsafeRawBufferPointer($0)) }) {
            return result
        }
        return Array(message).withUnsafeBytes { isValidSignature(signature, for: $0) }
    }
}

/// A private key that signs JWS tokens (`sheetd token --key`, tests); the key decides the algorithm.
public final class PrivateKey: Sendable {
    let handle: KeyHandle

    private init(handle: KeyHandle) { self.handle = handle }

    /// The algorithm this key signs with.
    public var algorithm: SignatureAlgorithm { handle.algorithm }
    public var bits: Int { handle.bits }

    /// A new random key pair.
    public static func generate(_ kind: KeyKind) -> PrivateKey {
        let pointer: OpaquePointer?
        switch kind {
        case .rsa(let bits): pointer = ccrypto_generate_rsa(UInt32(bits))
        case .p256: pointer = ccrypto_generate_p256()
        case .ed25519: pointer = ccrypto_generate_ed25519()
        }
        guard let pointer, let handle = try? KeyHandle(pointer) else { fatalError("OpenSSL could not generate a \(kind) key") }
        return PrivateKey(handle: handle)
    }

    /// A private key from PEM text (PKCS#8 `-----BEGIN PRIVATE KEY-----`, or the traditional RSA/EC forms).
    public convenience init(pem: [UInt8]) throws(KeyError) {
        self.init(handle: try KeyHandle.read(pem: pem, isPrivate: true))
    }

    /// The key as unencrypted PKCS#8 PEM text.
    public var pem: [UInt8] { handle.pem { PEM_write_bio_PrivateKey($0, handle.pointer, nil, nil, 0, nil, nil) } }

    /// The public half.
    public var publicKey: PublicKey {
        // Through PEM: the simplest way OpenSSL 3 offers to drop the private half.
        try! PublicKey(pem: handle.pem { PEM_write_bio_PUBKEY($0, handle.pointer) })
    }

    /// This key's signature of `message` in its JWS form (ES256: r || s).
    public func signature(for message: [UInt8]) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { fatalError("EVP_MD_CTX_new failed: out of memory") }
        defer { EVP_MD_CTX_free(context) }
        precondition(EVP_DigestSignInit(context, nil, algorithm == .edDSA ? nil : sha256, nil, handle.pointer) == 1, "EVP_DigestSignInit failed")
        return message.withUnsafeBufferPointer { m -> [UInt8] in
            var length = 0
            precondition(EVP_DigestSign(context, nil, &length, m.baseAddress, m.count) == 1, "EVP_DigestSign failed")
            var out = [UInt8](repeating: 0, count: length)
            precondition(EVP_DigestSign(context, &out, &length, m.baseAddress, m.count) == 1, "EVP_DigestSign failed")
            out.removeLast(out.count - length)
            guard algorithm == .es256 else { return out }
            var raw = [UInt8](repeating: 0, count: 64)
            let ok = out.withUnsafeBufferPointer { der in
                raw.withUnsafeMutableBufferPointer { ccrypto_es256_der_to_raw(der.baseAddress, der.count, $0.baseAddress) }
            }
            precondition(ok == 1, "an ECDSA signature OpenSSL made did not parse")
            return raw
        }
    }
}

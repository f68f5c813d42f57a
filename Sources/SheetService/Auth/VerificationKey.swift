public import Crypto

/// One key user tokens may be signed with: an HS256 secret or a public key from a JWKS. The key,
/// never the token, decides the algorithm.
public struct VerificationKey: Sendable {
    enum Material: Sendable {
        case secret([UInt8])
        case publicKey(PublicKey)
    }

    /// The `kid` tokens name it by; nil for the one key a token without `kid` is checked against.
    public let keyID: String?
    let material: Material
    /// Identifies the key's content (SHA-256 of the secret or of the public key's JWK members):
    /// a `kid` whose key changed on reload is a removal for cached tokens.
    let fingerprint: [UInt8]

    /// An HS256 shared secret.
    public static func hs256(secret: [UInt8], keyID: String?) -> VerificationKey {
        VerificationKey(keyID: keyID, material: .secret(secret), fingerprint: SHA256.hash([0x48] + SHA256.hash(secret)))
    }

    /// A public key (RS256, ES256 or EdDSA, as the key's type says).
    public static func publicKey(_ key: PublicKey, keyID: String?) -> VerificationKey {
        let members = key.jwkMembers.map { "\($0.name)=\($0.value)" }.joined(separator: ",")
        return VerificationKey(keyID: keyID, material: .publicKey(key), fingerprint: SHA256.hash(Array(members.utf8)))
    }

    /// The JWS `alg` this key verifies: a token's header must name exactly this.
    public var algorithm: String {
        switch material {
        case .secret: "HS256"
        case .publicKey(let key): key.algorithm.rawValue
        }
    }

    /// Whether `signature` is this key's signature of `signingInput` (the token's `header.payload`
    /// bytes). One HMAC or one public-key verification; the HMAC is compared in constant time.
    func verifies(_ signature: [UInt8], over signingInput: Substring.UTF8View) -> Bool {
        switch material {
        case .secret(let secret):
            return constantTimeEquals(signature, HMACSHA256.authenticationCode(for: signingInput, key: secret))
        case .publicKey(let key):
            return key.isValidSignature(signature, for: signingInput)
        }
    }
}

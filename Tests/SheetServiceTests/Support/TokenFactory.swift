import Crypto
import Foundation
import SheetService

/// A signing key of one algorithm for tests, generated through libcrypto, with its `kid`; and JWTs
/// built from any header and payload (valid or deliberately wrong).
struct TestSigningKey: @unchecked Sendable, CustomStringConvertible {
    enum Material {
        case privateKey(PrivateKey)
        case secret([UInt8])
    }

    let keyID: String
    let material: Material

    var description: String { "\(algorithm) \(keyID)" }

    static func generate(_ algorithm: String, keyID: String) -> TestSigningKey {
        switch algorithm {
        case "RS256": TestSigningKey(keyID: keyID, material: .privateKey(.generate(.rsa(bits: 2048))))
        case "ES256": TestSigningKey(keyID: keyID, material: .privateKey(.generate(.p256)))
        case "EdDSA": TestSigningKey(keyID: keyID, material: .privateKey(.generate(.ed25519)))
        default: TestSigningKey(keyID: keyID, material: .secret(Array("secret-of-\(keyID)-0123456789abcdef0123456789".utf8)))
        }
    }

    var algorithm: String {
        switch material {
        case .privateKey(let key): key.algorithm.rawValue
        case .secret: "HS256"
        }
    }

    /// The key's public JWK (an object of a JWKS), with extra members.
    func jwk(_ extra: [String: String] = [:]) -> String {
        guard case .privateKey(let key) = material else { fatalError("a shared secret has no public JWK") }
        var members = key.publicKey.jwkMembers.map { "\"\($0.name)\":\"\($0.value)\"" } + ["\"kid\":\"\(keyID)\""]
        members += extra.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\"\($0.value)\"" }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// The verification key sheetd would hold for it.
    var verificationKey: VerificationKey {
        switch material {
        case .privateKey(let key): .publicKey(key.publicKey, keyID: keyID)
        case .secret(let secret): .hs256(secret: secret, keyID: keyID)
        }
    }

    /// A JWT: `header` and `payload` as given (JSON text), signed with this key whatever `alg` says.
    func token(header: String, payload: String) -> String {
        let input = Self.b64(header) + "." + Self.b64(payload)
        return input + "." + Base64URL.encode(signature(Array(input.utf8)))
    }

    /// A JWT with the usual header (`alg` of the key, `kid`) and claims.
    func token(
        sub: String = "alice", now: Int64 = TokenFactory.now, ttl: Int64 = 3600, extraClaims: String = "", extraHeader: String = "",
        kid: String? = nil
    ) -> String {
        let header = "{\"alg\":\"\(algorithm)\",\"typ\":\"JWT\",\"kid\":\"\(kid ?? keyID)\"\(extraHeader)}"
        let payload = "{\"sub\":\"\(sub)\",\"iat\":\(now),\"exp\":\(now + ttl)\(extraClaims)}"
        return token(header: header, payload: payload)
    }

    func signature(_ input: [UInt8]) -> [UInt8] {
        switch material {
        case .privateKey(let key): key.signature(for: input)
        case .secret(let secret): HMACSHA256.authenticationCode(for: input, key: secret)
        }
    }

    static func b64(_ text: String) -> String { Base64URL.encode(Array(text.utf8)) }
}

enum TokenFactory {
    static let now: Int64 = 1_800_000_000

    static func jwks(_ keys: [String]) -> String { "{\"keys\":[" + keys.joined(separator: ",") + "]}" }
}

public import Crypto
import JSONKit
public import SheetWire

/// Signs user tokens: HS256 with a shared secret (development tokens, `sheetd token`), or with a
/// private key (`sheetd token --key`: RS256, ES256 or EdDSA, as the key's type says).
public enum TokenSigner {
    public enum Signer: Sendable {
        case secret([UInt8])
        case privateKey(PrivateKey)

        /// The JWS `alg` this signer produces.
        public var algorithm: String {
            switch self {
            case .secret: "HS256"
            case .privateKey(let key): key.algorithm.rawValue
            }
        }
    }

    /// `header.payload.signature`, the header naming the algorithm and `keyID` (when given).
    public static func token(claims: IssuedTokenClaims, signer: Signer, keyID: String?) -> String {
        var w = JSONWriter()
        w.object { o in
            o.member("alg", signer.algorithm)
            o.member("typ", "JWT")
            if let keyID { o.member("kid", keyID) }
        }
        let signingInput = Base64URL.encode(w.bytes) + "." + Base64URL.encode(claims.jsonBytes)
        let signature: [UInt8]
        switch signer {
        case .secret(let secret): signature = HMACSHA256.authenticationCode(for: Array(signingInput.utf8), key: secret)
        case .privateKey(let key): signature = key.signature(for: Array(signingInput.utf8))
        }
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// A JWKS document (`{"keys":[...]}`) with the public half of each key, `use: sig` and its `alg`.
    public static func jwks(_ keys: [(key: PublicKey, keyID: String)]) -> String {
        var w = JSONWriter()
        w.object { o in
            o.arrayMember("keys") { a in
                for (key, keyID) in keys {
                    a.object { k in
                        for (name, value) in key.jwkMembers { k.member(name, value) }
                        k.member("kid", keyID)
                        k.member("use", "sig")
                        k.member("alg", key.algorithm.rawValue)
                    }
                }
            }
        }
        return String(decoding: w.bytes, as: UTF8.self)
    }
}

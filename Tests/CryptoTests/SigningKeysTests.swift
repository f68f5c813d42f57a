import Crypto
import Testing

/// RS256, ES256 and EdDSA keys through libcrypto: generated, signed with, verified, and rebuilt from
/// their JWK members and PEM text.
struct SigningKeysTests {
    static let kinds: [KeyKind] = [.rsa(bits: 2048), .p256, .ed25519]

    /// A signature verifies under its key's public half and nowhere else: not for another message,
    /// not under another key of the same kind, not with one bit flipped.
    @Test(arguments: kinds) func signatureVerifiesOnlyForItsKeyAndMessage(kind: KeyKind) {
        let key = PrivateKey.generate(kind)
        let message = Array("header.payload".utf8)
        let signature = key.signature(for: message)
        #expect(key.publicKey.isValidSignature(signature, for: message))
        #expect(!key.publicKey.isValidSignature(signature, for: Array("header.payloaD".utf8)))
        #expect(!PrivateKey.generate(kind).publicKey.isValidSignature(signature, for: message))
        var flipped = signature
        flipped[flipped.count / 2] ^= 0x01
        #expect(!key.publicKey.isValidSignature(flipped, for: message))
        #expect(!key.publicKey.isValidSignature(Array(signature.dropLast()), for: message))
        #expect(!key.publicKey.isValidSignature([], for: message))
    }

    /// The key's type decides the algorithm and the JWS signature's shape (ES256: r || s, 64 bytes).
    @Test func keyTypeDecidesAlgorithm() {
        #expect(PrivateKey.generate(.rsa(bits: 2048)).algorithm == .rs256)
        #expect(PrivateKey.generate(.rsa(bits: 2048)).signature(for: [1]).count == 256)
        #expect(PrivateKey.generate(.p256).algorithm == .es256)
        #expect(PrivateKey.generate(.p256).signature(for: [1]).count == 64)
        #expect(PrivateKey.generate(.ed25519).algorithm == .edDSA)
        #expect(PrivateKey.generate(.ed25519).signature(for: [1]).count == 64)
    }

    /// A public key rebuilt from its JWK members verifies what the private key signed.
    @Test(arguments: kinds) func jwkMembersRebuildTheKey(kind: KeyKind) throws {
        let key = PrivateKey.generate(kind)
        let members = Dictionary(uniqueKeysWithValues: key.publicKey.jwkMembers.map { ($0.name, $0.value) })
        func bytes(_ name: String) throws -> [UInt8] {
            let text = try #require(members[name])
            return try #require(Base64URL.decode(text))
        }
        let rebuilt: PublicKey
        switch kind {
        case .rsa: rebuilt = try PublicKey.rsa(modulus: bytes("n"), exponent: bytes("e"))
        case .p256: rebuilt = try PublicKey.p256(x: bytes("x"), y: bytes("y"))
        case .ed25519: rebuilt = try PublicKey.ed25519(bytes("x"))
        }
        #expect(rebuilt.algorithm == key.algorithm)
        #expect(rebuilt.isValidSignature(key.signature(for: [1, 2, 3]), for: [1, 2, 3]))
        #expect(rebuilt.jwkMembers.map(\.value) == key.publicKey.jwkMembers.map(\.value))
    }

    /// PEM text round-trips: a private key read back signs like the original; a public key verifies.
    @Test(arguments: kinds) func pemRoundTrips(kind: KeyKind) throws {
        let key = PrivateKey.generate(kind)
        let again = try PrivateKey(pem: key.pem)
        #expect(String(decoding: key.pem, as: UTF8.self).hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let publicKey = try PublicKey(pem: key.publicKey.pem)
        #expect(publicKey.isValidSignature(again.signature(for: [7]), for: [7]))
        #expect(throws: KeyError.self) { try PrivateKey(pem: key.publicKey.pem) }
        #expect(throws: KeyError.self) { try PublicKey(pem: Array("not a key".utf8)) }
    }

    /// A P-256 point off the curve, and keys of the wrong length, are refused.
    @Test func invalidKeyMaterialIsRefused() throws {
        let key = PrivateKey.generate(.p256)
        let members = Dictionary(uniqueKeysWithValues: key.publicKey.jwkMembers.map { ($0.name, $0.value) })
        let (xText, yText) = (try #require(members["x"]), try #require(members["y"]))
        var y = try #require(Base64URL.decode(yText))
        y[31] ^= 0x01
        let x = try #require(Base64URL.decode(xText))
        #expect(throws: KeyError.self) { try PublicKey.p256(x: x, y: y) }
        #expect(throws: KeyError.self) { try PublicKey.p256(x: Array(x.prefix(31)), y: y) }
        #expect(throws: KeyError.self) { try PublicKey.ed25519([UInt8](repeating: 1, count: 31)) }
        #expect(PrivateKey.generate(.rsa(bits: 1024)).publicKey.bits == 1024)
    }
}

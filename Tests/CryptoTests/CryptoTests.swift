import Crypto
import Testing

struct DigestTests {
    /// SHA-256 matches the FIPS 180-2 test vector for "abc".
    @Test func sha256MatchesKnownVector() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// HMAC-SHA256 matches RFC 4231 test case 2.
    @Test func hmacMatchesRFC4231() {
        let mac = HMACSHA256.authenticationCode(for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(Hex.encode(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    /// Every byte value encodes as two lowercase digits, from arrays and from other collections alike.
    @Test func hexEncodesEveryByte() {
        let all = (0...255).map { UInt8($0) }
        let expected = all.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
        #expect(Hex.encode(all) == expected)
        #expect(Hex.encode(all[16..<32]) == String(expected.dropFirst(32).prefix(32)))
        #expect(Hex.encode([UInt8]()) == "")
    }

    /// Constant-time comparison still compares.
    @Test func constantTimeEqualsCompares() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2], [1, 2, 3]))
    }

    /// Random bytes have the asked length and differ between calls.
    @Test func randomBytesDiffer() {
        #expect(secureRandomBytes(16).count == 16)
        #expect(secureRandomBytes(16) != secureRandomBytes(16))
    }
}

struct Base64URLTests {
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ])
    func roundTripsRFC4648Vectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(Array(plain.utf8)) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    /// Padding, the standard alphabet's + and /, and non-canonical trailing bits are refused.
    @Test(arguments: ["Zg==", "a+b/", "Zh", "A"])
    func rejectsInvalidInput(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test func usesURLAlphabet() {
        #expect(Base64URL.encode([0xfb, 0xff]) == "-_8")
    }
}

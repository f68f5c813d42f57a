import Crypto
import Testing

struct DigestTests {
    /// SHA-256 matches the FIPS 180-2 test vector for "abc".
    @Test func sha256MatchesKnownVector() {
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex([UInt8]()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    /// SHA-256 matches the FIPS 180-2 vectors that span blocks: 448 bits (two blocks after padding)
    /// and a million bytes; a slice hashes like the array of its bytes.
    @Test func sha256MatchesMultiBlockVectors() {
        #expect(
            SHA256.hex(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // Slices and other collections take the copying path and must hash the same bytes.
        let bytes = Array("xxabcxx".utf8)
        #expect(SHA256.hex(bytes[2..<5]) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hash(Array("abc".utf8)).count == SHA256.byteCount)
    }

    /// The quoted hex prefix is the digest's first bytes in hex between double quotes, for any length.
    @Test func quotedHexPrefixIsTheDigestsPrefix() {
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        #expect(SHA256.quotedHexPrefix(of: Array("abc".utf8), length: 16) == "\"" + abc.prefix(32) + "\"")
        #expect(SHA256.quotedHexPrefix(of: Array("abc".utf8), length: 32) == "\"" + abc + "\"")
        #expect(SHA256.quotedHexPrefix(of: Array("abc".utf8), length: 0) == "\"\"")
        #expect(SHA256.quotedHexPrefix(of: [], length: 16) == "\"e3b0c44298fc1c149afbf4c8996fb924\"")
        for count in [55, 56, 63, 64, 65, 119, 120, 1906, 4096] {
            let body = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
            #expect(SHA256.quotedHexPrefix(of: body, length: 16) == "\"" + SHA256.hex(body).prefix(32) + "\"")
        }
    }

    /// Digests computed on many threads at once are each the digest of their own input (the digest
    /// keeps no state between calls).
    @Test func sha256OnManyThreadsAtOnce() async {
        let inputs = (0..<8).map { t in (0..<(1000 + 97 * t)).map { UInt8(truncatingIfNeeded: $0 ^ t) } }
        let expected = inputs.map { SHA256.hex($0) }
        let results = await withTaskGroup(of: (Int, Bool).self) { group in
            for (t, input) in inputs.enumerated() {
                group.addTask {
                    var same = true
                    for _ in 0..<200 where SHA256.hex(input) != expected[t] { same = false }
                    return (t, same)
                }
            }
            var all: [Int: Bool] = [:]
            for await (t, same) in group { all[t] = same }
            return all
        }
        #expect(results.count == inputs.count && results.values.allSatisfy { $0 })
        #expect(Set(expected).count == inputs.count)
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

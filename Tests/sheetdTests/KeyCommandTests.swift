import Crypto
import Foundation
import SheetWire
import TestSupport
import Testing

@testable import SheetService

/// `sheetd jwks` and `sheetd token --key` with keys made here, and the start-up that refuses bad keys.
@Suite(.serialized) struct KeyCommandTests {
    /// The JWKS `sheetd jwks` prints holds every key under its kid; a token from `sheetd token --key`
    /// verifies against it, for RSA, P-256 and Ed25519 keys (the private key's file or its public one).
    @Test func jwksAndTokenCommandsWorkTogether() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-keys")
        defer { dir.remove() }
        let kinds: [(String, KeyKind)] = [("rsa", .rsa(bits: 2048)), ("ec", .p256), ("ed", .ed25519)]
        var arguments = ["jwks"]
        for (name, kind) in kinds {
            let key = PrivateKey.generate(kind)
            try Data(key.pem).write(to: URL(fileURLWithPath: dir.file("\(name).pem")))
            try Data(key.publicKey.pem).write(to: URL(fileURLWithPath: dir.file("\(name).pub.pem")))
            arguments += ["--key", dir.file(name == "ed" ? "\(name).pub.pem" : "\(name).pem"), "--kid", "kid-\(name)"]
        }
        let jwks = try CommandLineTests.run(arguments, in: dir.path)
        #expect(jwks.status == 0, "\(jwks.stderr)")
        #expect(!jwks.stdout.contains("\"d\""), "no private member is printed")
        let set = try JSONWebKeySet.parse(Array(jwks.stdout.utf8))
        #expect(set.keys.map(\.keyID) == ["kid-rsa", "kid-ec", "kid-ed"])
        #expect(set.keys.map(\.algorithm) == ["RS256", "ES256", "EdDSA"])
        let verifier = TokenVerifier(
            keys: try KeyRing(set, source: "SHEETD_JWKS_FILE"), claimRules: TokenClaimRules(issuer: "https://id.example/"), adminToken: "")
        for (name, _) in kinds {
            let token = try CommandLineTests.run(
                ["token", "--user", "alice", "--key", dir.file("\(name).pem"), "--kid", "kid-\(name)"], in: dir.path,
                environment: ["SHEETD_JWT_ISSUER": "https://id.example/"])
            #expect(token.status == 0, "\(token.stderr)")
            let now = Int64(Date().timeIntervalSince1970)
            #expect(
                try verifier.principal(authorization: "Bearer " + token.stdout.trimmingCharacters(in: .whitespacesAndNewlines), now: now)
                    == .user("alice"))
        }
        let bad = try CommandLineTests.run(["jwks", "--key", dir.file("rsa.pem")], in: dir.path)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("each --key needs its --kid"), "\(bad.stderr)")
        let notKey = try CommandLineTests.run(["token", "--user", "a", "--key", dir.file("rsa.pub.pem")], in: dir.path)
        #expect(notKey.status == 2)
        #expect(notKey.stderr.contains("not a PEM private key"), "\(notKey.stderr)")
    }

    /// `sheetd serve` with a malformed JWKS file, or an unreachable JWKS URL and no other key, stops
    /// at once (exit 2) with a message naming the problem, before any database is created.
    @Test func serveRefusesToStartWithoutUsableKeys() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-badkeys")
        defer { dir.remove() }
        try #"{"keys":[{"kid":"k1","kty":"EC","crv":"P-256","x":"AQAB"}]}"#.write(toFile: dir.file("jwks.json"), atomically: true, encoding: .utf8)
        let malformed = try CommandLineTests.run(["serve", "--port", "0", "--jwks-file", dir.file("jwks.json")], in: dir.path)
        #expect(malformed.status == 2)
        #expect(malformed.stderr.contains("SHEETD_JWKS_FILE \(dir.file("jwks.json")): key \"k1\": y is required"), "\(malformed.stderr)")
        let unreachable = try CommandLineTests.run(["serve", "--port", "0", "--jwks-url", "http://127.0.0.1:1/jwks.json"], in: dir.path)
        #expect(unreachable.status == 2)
        #expect(unreachable.stderr.contains("SHEETD_JWKS_URL: cannot fetch http://127.0.0.1:1/jwks.json"), "\(unreachable.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/data/sheetd.sqlite"))
    }
}

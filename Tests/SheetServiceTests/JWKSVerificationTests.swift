import Crypto
import Foundation
import SheetWire
import TestSupport
import Testing

@testable import SheetService

/// User tokens from an identity provider: RS256, ES256 and EdDSA keys from a JWKS, HS256 secrets by
/// `kid`, the claims a server requires, and every refusal the key set and the header can cause.
/// Keys and tokens are generated here through libcrypto.
struct JWKSVerificationTests {
    static let algorithms = ["RS256", "ES256", "EdDSA", "HS256"]
    /// One key per algorithm (RSA generation is slow: once per run).
    static let keys: [String: TestSigningKey] = Dictionary(
        uniqueKeysWithValues: algorithms.map { ($0, TestSigningKey.generate($0, keyID: "k-\($0.lowercased())")) })
    static let now = TokenFactory.now
    static let rules = TokenClaimRules(issuer: "https://issuer.example/", audience: "sheetd-app")
    static let claims = #","iss":"https://issuer.example/","aud":"sheetd-app""#

    /// A verifier holding every test key (public keys as a JWKS, the HS256 secret by kid).
    static func verifier(rules: TokenClaimRules = rules, extraJWKs: [String] = []) throws -> TokenVerifier {
        let ring = KeyRing()
        let jwks = TokenFactory.jwks(["RS256", "ES256", "EdDSA"].map { keys[$0]!.jwk() } + extraJWKs)
        try ring.replace(source: "SHEETD_JWKS_FILE", with: try JSONWebKeySet.parse(Array(jwks.utf8)))
        try ring.replace(source: "SHEETD_JWT_SECRETS_FILE", with: JSONWebKeySet(keys: [keys["HS256"]!.verificationKey]))
        return TokenVerifier(keys: ring, claimRules: rules, adminToken: "admin-token-for-jwks-tests")
    }

    static func outcome(_ verifier: TokenVerifier, _ token: String, now: Int64 = now) -> Result<Principal, TokenError> {
        Result { () throws(TokenError) in try verifier.principal(authorization: "Bearer " + token, now: now) }
    }

    /// A token signed by the key its kid names, with the right issuer and audience, is the user's.
    @Test(arguments: algorithms) func validTokenIsAccepted(algorithm: String) throws {
        let key = Self.keys[algorithm]!
        #expect(Self.outcome(try Self.verifier(), key.token(extraClaims: Self.claims)) == .success(.user("alice")))
        // An audience array containing the configured one is accepted too.
        let many = #","iss":"https://issuer.example/","aud":["other","sheetd-app"]"#
        #expect(Self.outcome(try Self.verifier(), key.token(sub: "bob", extraClaims: many)) == .success(.user("bob")))
    }

    /// A token whose signature is another key's (same kid, same algorithm) is refused.
    @Test(arguments: algorithms) func wrongSignatureIsRefused(algorithm: String) throws {
        let impostor = TestSigningKey.generate(algorithm, keyID: Self.keys[algorithm]!.keyID + "-impostor")
        let forged = impostor.token(extraClaims: Self.claims, kid: Self.keys[algorithm]!.keyID)
        #expect(Self.outcome(try Self.verifier(), forged) == .failure(.badSignature))
    }

    /// Expired (past the leeway) and not-yet-valid (nbf beyond the leeway) tokens are refused.
    @Test(arguments: algorithms) func timeIsChecked(algorithm: String) throws {
        let key = Self.keys[algorithm]!
        let verifier = try Self.verifier()
        #expect(Self.outcome(verifier, key.token(ttl: 100, extraClaims: Self.claims), now: Self.now + 161) == .failure(.expired))
        #expect(Self.outcome(verifier, key.token(ttl: 100, extraClaims: Self.claims), now: Self.now + 159) == .success(.user("alice")))
        let early = key.token(extraClaims: Self.claims + ",\"nbf\":\(Self.now + 600)")
        #expect(Self.outcome(verifier, early) == .failure(.notYetValid))
        #expect(Self.outcome(verifier, early, now: Self.now + 541) == .success(.user("alice")))
    }

    /// The issuer must match exactly and the audience must be named.
    @Test(arguments: algorithms) func issuerAndAudienceAreChecked(algorithm: String) throws {
        let key = Self.keys[algorithm]!
        let verifier = try Self.verifier()
        let wrongIssuer = key.token(extraClaims: #","iss":"https://issuer.example","aud":"sheetd-app""#)
        #expect(Self.outcome(verifier, wrongIssuer) == .failure(.invalidClaims("iss is not the configured issuer")))
        #expect(
            Self.outcome(verifier, key.token(extraClaims: #","aud":"sheetd-app""#)) == .failure(.invalidClaims("iss is not the configured issuer")))
        let wrongAudience = key.token(extraClaims: #","iss":"https://issuer.example/","aud":["other"]"#)
        #expect(Self.outcome(verifier, wrongAudience) == .failure(.invalidClaims("aud does not name the configured audience")))
        #expect(
            Self.outcome(verifier, key.token(extraClaims: #","iss":"https://issuer.example/""#))
                == .failure(.invalidClaims("aud does not name the configured audience")))
    }

    /// A kid no source has is refused with the kid named; a token without kid is refused when several keys are configured.
    @Test(arguments: algorithms) func unknownKeyIDIsRefused(algorithm: String) throws {
        let key = Self.keys[algorithm]!
        let verifier = try Self.verifier()
        #expect(Self.outcome(verifier, key.token(extraClaims: Self.claims, kid: "rotated-away")) == .failure(.unknownKey("rotated-away")))
        let header = "{\"alg\":\"\(algorithm)\",\"typ\":\"JWT\"}"
        let noKid = key.token(header: header, payload: "{\"sub\":\"alice\",\"exp\":\(Self.now + 60)\(Self.claims)}")
        #expect(Self.outcome(verifier, noKid) == .failure(.missingKeyID))
    }

    /// Algorithm confusion: an HS256 token "signed" with the RSA public key's PEM (or its JWK's n)
    /// as the secret, `alg: none`, an RS256 header on the EC key's kid, and an EdDSA key's kid with
    /// ES256 are all refused before any signature is checked: the key decides the algorithm.
    @Test func algorithmConfusionIsRefused() throws {
        let verifier = try Self.verifier()
        let rsa = Self.keys["RS256"]!
        guard case .privateKey(let rsaKey) = rsa.material else { throw TestError("not an RSA key") }
        let payload = "{\"sub\":\"mallory\",\"exp\":\(Self.now + 60)\(Self.claims)}"
        for secret in [rsaKey.publicKey.pem, Array(rsaKey.publicKey.jwkMembers.first { $0.name == "n" }!.value.utf8)] {
            let hmac = TestSigningKey(keyID: rsa.keyID, material: .secret(secret))
            let confused = hmac.token(header: #"{"alg":"HS256","typ":"JWT","kid":"k-rs256"}"#, payload: payload)
            #expect(Self.outcome(verifier, confused) == .failure(.unsupportedAlgorithm))
        }
        let none = TestSigningKey.b64(#"{"alg":"none","kid":"k-rs256"}"#) + "." + TestSigningKey.b64(payload) + "."
        #expect(Self.outcome(verifier, none) == .failure(.unsupportedAlgorithm))
        let rsaOnEC = rsa.token(header: #"{"alg":"RS256","typ":"JWT","kid":"k-es256"}"#, payload: payload)
        #expect(Self.outcome(verifier, rsaOnEC) == .failure(.unsupportedAlgorithm))
        let esOnEd = Self.keys["ES256"]!.token(header: #"{"alg":"ES256","kid":"k-eddsa"}"#, payload: payload)
        #expect(Self.outcome(verifier, esOnEd) == .failure(.unsupportedAlgorithm))
        // The HS256 secret's kid with an RS256 header, signed by the RSA key: refused too.
        let rsOnSecret = rsa.token(header: #"{"alg":"RS256","kid":"k-hs256"}"#, payload: payload)
        #expect(Self.outcome(verifier, rsOnSecret) == .failure(.unsupportedAlgorithm))
    }

    /// Header members that carry or point to a key (`jku`, `x5u`, `jwk`, `x5c`) and `crit` are refused, even with a valid signature.
    @Test(arguments: ["jku", "x5u", "jwk", "x5c", "crit"]) func keyCarryingHeadersAreRefused(member: String) throws {
        let key = Self.keys["ES256"]!
        let token = key.token(extraClaims: Self.claims, extraHeader: ",\"\(member)\":\"https://attacker.example/keys\"")
        #expect(Self.outcome(try Self.verifier(), token) == .failure(.forbiddenHeader(member)))
    }

    /// A weak RSA key (1024 bits), a key for encryption and a key whose `alg` does not fit its type
    /// are left out of the set: tokens naming them are refused with the reason; the rest works.
    @Test func unusableKeysInTheSetAreRefusedByName() throws {
        let weak = TestSigningKey(keyID: "weak", material: .privateKey(.generate(.rsa(bits: 1024))))
        let encryption = TestSigningKey.generate("ES256", keyID: "enc")
        let mislabelled = TestSigningKey.generate("EdDSA", keyID: "mislabelled")
        let verifier = try Self.verifier(extraJWKs: [weak.jwk(), encryption.jwk(["use": "enc"]), mislabelled.jwk(["alg": "RS256"])])
        for (key, reason) in [
            (weak, "the RSA key has fewer than 2048 bits"), (encryption, "the key is for use \"enc\", not \"sig\""),
            (mislabelled, "the key's alg RS256 does not fit its type OKP (EdDSA expected)"),
        ] {
            #expect(Self.outcome(verifier, key.token(extraClaims: Self.claims)) == .failure(.refusedKey(key.keyID, reason: reason)))
        }
        #expect(Self.outcome(verifier, Self.keys["RS256"]!.token(extraClaims: Self.claims)) == .success(.user("alice")))
    }

    /// A JWKS that is not one is refused as a whole, with a message naming the problem.
    @Test(arguments: [
        ("not json", "the JWKS is not a JSON object"),
        (#"{"kids":[]}"#, "the JWKS has no \"keys\" array"),
        (#"{"keys":[]}"#, "the JWKS has no keys"),
        (#"{"keys":[{"kid":"a","n":"AQAB","e":"AQAB"}]}"#, "key \"a\": kty is required"),
        (#"{"keys":[{"kid":"a","kty":"RSA","n":"@@@","e":"AQAB"}]}"#, "key \"a\": n is not base64url"),
        (#"{"keys":[{"kid":"a","kty":"OKP","crv":"Ed25519","x":"AQAB"}]}"#, "key \"a\": an Ed25519 key's x is 32 bytes"),
        (#"{"keys":[{"kid":"a","kty":"EC","crv":"P-256"}]}"#, "key \"a\": x is required"),
        (#"{"keys":[{"kid":"a","kty":"oct","k":"AQAB"},{"kid":"a","kty":"oct","k":"AQAB"}]}"#, "the kid \"a\" is used twice"),
        (#"{"keys":[{"kid":7,"kty":"RSA"}]}"#, "keys[0]: kid must be a string of 1 to 256 bytes"),
    ]) func malformedJWKSIsRefusedWithTheProblemNamed(document: String, message: String) {
        #expect(throws: KeySetError(message)) { try JSONWebKeySet.parse(Array(document.utf8)) }
    }

    /// An EC point that is not on P-256 makes the set malformed.
    @Test func pointOffTheCurveIsMalformed() throws {
        let key = Self.keys["ES256"]!
        let jwk = key.jwk().replacingOccurrences(of: "\"y\":\"", with: "\"y\":\"A")
        let message = try #require(#expect(throws: KeySetError.self) { try JSONWebKeySet.parse(Array(TokenFactory.jwks([jwk]).utf8)) })
        #expect(message.message.hasPrefix("key \"k-es256\": "), "\(message)")
    }

    /// The user may be named by another claim (Auth0's custom claims); `sub` is then not read.
    @Test func subjectClaimIsConfigurable() throws {
        var rules = Self.rules
        rules.subjectClaim = "https://sheetd.example/user_id"
        let verifier = try Self.verifier(rules: rules)
        let key = Self.keys["RS256"]!
        let token = key.token(sub: "auth0|abc", extraClaims: Self.claims + #","https://sheetd.example/user_id":"u-42""#)
        #expect(Self.outcome(verifier, token) == .success(.user("u-42")))
        guard case .failure(.invalidClaims(let why)) = Self.outcome(verifier, key.token(extraClaims: Self.claims)) else {
            Issue.record("a token without the subject claim was not refused")
            return
        }
        #expect(why.hasPrefix("https://sheetd.example/user_id must be a user id"))
    }

    /// A token carrying the admin claim (a string or an array containing the value) is the admin,
    /// named by its subject, until its exp; without it, a user.
    @Test func adminClaimMakesAnAdmin() throws {
        var rules = Self.rules
        rules.adminClaim = ("roles", "sheetd-admin")
        let verifier = try Self.verifier(rules: rules)
        let key = Self.keys["ES256"]!
        let admin = key.token(sub: "ops-anna", extraClaims: Self.claims + #","roles":["viewer","sheetd-admin"]"#)
        #expect(Self.outcome(verifier, admin) == .success(.admin))
        #expect(try verifier.validUntil(authorization: "Bearer " + admin, now: Self.now) == Self.now + 3600 + 60)
        #expect(Self.outcome(verifier, admin, now: Self.now + 3661) == .failure(.expired))
        let single = key.token(sub: "ops-ben", extraClaims: Self.claims + #","roles":"sheetd-admin""#)
        #expect(Self.outcome(verifier, single) == .success(.admin))
        let viewer = key.token(sub: "carl", extraClaims: Self.claims + #","roles":["sheetd-admin-not"]"#)
        #expect(Self.outcome(verifier, viewer) == .success(.user("carl")))
        #expect(try verifier.validUntil(authorization: "Bearer admin-token-for-jwks-tests", now: Self.now) == nil)
    }

    /// Cached tokens stay exact across reloads: adding a key keeps them; removing (or replacing) the
    /// key they verified with refuses them at once.
    @Test func cacheFollowsKeyRemoval() throws {
        let verifier = try Self.verifier()
        let rsa = Self.keys["RS256"]!, ec = Self.keys["ES256"]!, ed = Self.keys["EdDSA"]!
        let rsaToken = rsa.token(extraClaims: Self.claims), ecToken = ec.token(extraClaims: Self.claims)
        #expect(Self.outcome(verifier, rsaToken) == .success(.user("alice")))
        #expect(Self.outcome(verifier, ecToken) == .success(.user("alice")))
        #expect(verifier.verified.count == 2)
        let epoch = verifier.keys.epoch
        let added = TestSigningKey.generate("EdDSA", keyID: "added")
        try verifier.keys.replace(
            source: "SHEETD_JWKS_FILE", with: try JSONWebKeySet.parse(Array(TokenFactory.jwks([rsa.jwk(), ec.jwk(), ed.jwk(), added.jwk()]).utf8)))
        #expect(verifier.keys.epoch == epoch)
        #expect(Self.outcome(verifier, added.token(extraClaims: Self.claims)) == .success(.user("alice")))
        // The EC key leaves: its cached token is refused by the bytes path (the hot path) as well.
        try verifier.keys.replace(
            source: "SHEETD_JWKS_FILE", with: try JSONWebKeySet.parse(Array(TokenFactory.jwks([rsa.jwk(), ed.jwk(), added.jwk()]).utf8)))
        #expect(verifier.keys.epoch == epoch + 1)
        var header = "Bearer \(ecToken)"
        let viaBytes = header.withUTF8 { b in Result { () throws(TokenError) in try verifier.principal(authorizationBytes: b.span, now: Self.now) } }
        #expect(viaBytes == .failure(.unknownKey("k-es256")))
        #expect(Self.outcome(verifier, rsaToken) == .success(.user("alice")))
    }

    /// Two sources may not claim one kid, nor both have a key without kid; the ring is unchanged then.
    @Test func conflictingSourcesAreRefused() throws {
        let verifier = try Self.verifier()
        let clash = JSONWebKeySet(keys: [.hs256(secret: Array("x".utf8), keyID: "k-rs256")])
        #expect(throws: KeySetError("SHEETD_JWT_SECRETS_FILE: the kid \"k-rs256\" is also in SHEETD_JWKS_FILE")) {
            try verifier.keys.replace(source: "SHEETD_JWT_SECRETS_FILE", with: clash)
        }
        #expect(Self.outcome(verifier, Self.keys["HS256"]!.token(extraClaims: Self.claims)) == .success(.user("alice")))
    }

    /// The shared-secrets file: `kid secret` lines, comments skipped, errors name the line, never the secret.
    @Test func sharedSecretsFileIsParsed() throws {
        let set = try JSONWebKeySet.sharedSecrets("# rotation\n2025-a first-secret-value\n\n2026-b second-secret-value\n")
        #expect(set.keys.map(\.keyID) == ["2025-a", "2026-b"])
        #expect(throws: KeySetError("line 2 is not 'kid secret'")) { try JSONWebKeySet.sharedSecrets("a s1\nb\n") }
        #expect(throws: KeySetError("line 2: the kid a is used twice")) { try JSONWebKeySet.sharedSecrets("a s1\na s2\n") }
        #expect(throws: KeySetError("line 1: the secret is too weak: use at least 32 random characters")) {
            try JSONWebKeySet.sharedSecrets("a short-secret\n", minimumLength: 32)
        }
    }

    /// A flood of distinct forged RS256 tokens costs one bounded verification each and fills no
    /// cache (the 5 ms per-request bound of `make reliability`, with a wide margin).
    @Test func forgedSignatureFloodIsBoundedAndUncached() throws {
        let verifier = try Self.verifier()
        let rsa = Self.keys["RS256"]!
        let valid = rsa.token(extraClaims: Self.claims)
        let parts = valid.split(separator: ".")
        let start = clock()
        for i in 0..<200 {
            var signature = Base64URL.decode(parts[2])!
            signature[i % signature.count] ^= UInt8(1 + i % 255)
            let forged = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)
            #expect(Self.outcome(verifier, String(forged)) == .failure(.badSignature))
        }
        let seconds = Double(clock() - start) / Double(CLOCKS_PER_SEC)
        #expect(seconds / 200 < 0.005, "\(seconds / 200 * 1e6) us per forged token")
        #expect(verifier.verified.count == 0)
    }
}

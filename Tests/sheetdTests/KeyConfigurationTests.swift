import Crypto
import Foundation
import SheetService
import SheetWire
import TestSupport
import Testing

@testable import sheetd

/// The settings of user-token keys and claims, and the admin tokens file's digests.
@Suite(.serialized) struct KeyConfigurationTests {
    /// Every key and claim setting is read from its flag and its variable.
    @Test func keyAndClaimSettingsAreRead() throws {
        let env = [
            "SHEETD_JWKS_URL": "https://tenant.example.auth0.com/.well-known/jwks.json", "SHEETD_JWKS_REFRESH": "600",
            "SHEETD_JWKS_FILE": "/etc/sheetd/jwks.json", "SHEETD_JWT_SECRETS_FILE": "/etc/sheetd/secrets",
            "SHEETD_JWT_ISSUER": "https://tenant.example.auth0.com/", "SHEETD_JWT_AUDIENCE": "https://sheetd.example",
            "SHEETD_JWT_SUBJECT_CLAIM": "https://sheetd.example/user_id", "SHEETD_ADMIN_CLAIM": "https://sheetd.example/roles=sheetd-admin",
        ]
        let c = try Configuration.parse(arguments: [], environment: env)
        #expect(c.keySources.jwksURL == "https://tenant.example.auth0.com/.well-known/jwks.json")
        #expect(c.keySources.refreshSeconds == 600)
        #expect(c.keySources.jwksFile == "/etc/sheetd/jwks.json")
        #expect(c.keySources.secretsFile == "/etc/sheetd/secrets")
        #expect(c.claimRules.issuer == "https://tenant.example.auth0.com/")
        #expect(c.claimRules.audience == "https://sheetd.example")
        #expect(c.claimRules.subjectClaim == "https://sheetd.example/user_id")
        #expect(c.claimRules.adminClaim?.name == "https://sheetd.example/roles")
        #expect(c.claimRules.adminClaim?.value == "sheetd-admin")
        #expect(c.hasUserTokenKeys)
        let flags = try Configuration.parse(
            arguments: ["--jwks-url=http://127.0.0.1:9000/jwks", "--admin-claim", "cognito:groups=admins"], environment: [:])
        #expect(flags.keySources.jwksURL == "http://127.0.0.1:9000/jwks")
        #expect(flags.claimRules.adminClaim?.name == "cognito:groups")
    }

    /// A JWKS URL must be https (plain http only to this machine); the admin claim must be CLAIM=VALUE.
    @Test(arguments: [
        (["--jwks-url", "http://idp.example/jwks.json"], "is not an https:// URL"),
        (["--jwks-url", "ftp://idp.example/jwks.json"], "is not an https:// URL"),
        (["--jwks-url", "http://127.0.0.1.evil.example/jwks"], "is not an https:// URL"),
        (["--admin-claim", "roles"], "is not CLAIM=VALUE"),
        (["--admin-claim", "=admin"], "is not CLAIM=VALUE"),
        (["--jwks-refresh", "1"], "is not a whole number from 10 to 86400"),
    ]) func badKeySettingsAreRefused(arguments: [String], message: String) {
        #expect {
            try Configuration.parse(arguments: arguments, environment: [:])
        } throws: { error in
            (error as? ConfigurationError)?.message.contains(message) == true
        }
    }

    /// The admin tokens file holds `name sha256:<hex>` lines; a plain token still works, with a
    /// warning naming its line (never the token).
    @Test func adminTokensFileTakesDigests() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-digests")
        defer { dir.remove() }
        let token = "ops-token-0123456789abcdef0123456789abcdef"
        let digest = SHA256.hex(Array(token.utf8))
        let path = dir.file("admins")
        try "# digests\nops sha256:\(digest)\nci ci-plain-token-0123456789abcdef0123456789\n".write(toFile: path, atomically: true, encoding: .utf8)
        let c = try Configuration.parse(arguments: ["--admin-tokens-file", path], environment: [:])
        #expect(c.adminTokens.map(\.name) == ["ops", "ci"])
        #expect(c.adminTokens[0].token == nil)
        #expect(c.warnings.count == 1)
        #expect(c.warnings[0].contains("line 3 holds a plain admin token"), "\(c.warnings)")
        #expect(!c.warnings[0].contains("ci-plain-token"))
        let verifier = TokenVerifier(jwtSecret: "s", adminToken: "", adminTokens: c.adminTokens)
        #expect(verifier.adminName(authorization: "Bearer \(token)") == "ops")
        #expect(verifier.adminName(authorization: "Bearer ci-plain-token-0123456789abcdef0123456789") == "ci")
        #expect(verifier.adminName(authorization: "Bearer sha256:\(digest)") == nil, "the digest itself is not a token")

        try "ops sha256:abc\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError("--admin-tokens-file/SHEETD_ADMIN_TOKENS_FILE: line 1: sha256: must be followed by 64 hex digits")) {
            try Configuration.parse(arguments: ["--admin-tokens-file", path], environment: [:])
        }
        try "a sha256:\(digest)\nb \(token)\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(throws: ConfigurationError("--admin-tokens-file/SHEETD_ADMIN_TOKENS_FILE: line 2: a token is used twice")) {
            try Configuration.parse(arguments: ["--admin-tokens-file", path], environment: [:])
        }
    }

    /// In production a JWKS stands in for the JWT secret, and digests for checked admin tokens.
    @Test func productionAcceptsAJWKSInsteadOfASecret() throws {
        var c = try Configuration.parse(
            arguments: ["--env", "production", "--jwks-url", "https://idp.example/jwks.json"], environment: [:])
        c.adminTokens = [AdminToken(name: "ops", digest: SHA256.hash(Array("x".utf8)))]
        try c.checkSecretsForProduction()
        #expect(c.keySources.minimumSecretLength == Configuration.minimumSecretLength)
        c.keySources.jwksURL = nil
        #expect(throws: ConfigurationError("SHEETD_JWT_SECRET is required when SHEETD_ENV=production")) { try c.checkSecretsForProduction() }
    }
}

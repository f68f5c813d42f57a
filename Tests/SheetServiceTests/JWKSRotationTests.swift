import Concurrency
import CurlKit
import Foundation
import MicroHTTP
import TestSupport
import Testing

@testable import SheetService

/// A JWKS served on loopback by a real HTTP server, whose document the test changes; `nil` answers 503.
final class JWKSServer: Sendable {
    let document = Locked<String?>(nil)
    let fetches = Locked(0)
    let server: HTTPServer
    var url: String { "http://127.0.0.1:\(server.port)/.well-known/jwks.json" }

    init(_ document: String?) throws {
        self.document.withLock { $0 = document }
        let router = Router()
        let current = self.document, fetches = self.fetches
        router.add(.GET, "/.well-known/jwks.json") { _ in
            fetches.withLock { $0 += 1 }
            guard let text = current.withLock({ $0 }) else { return .json(503, Array(#"{"error":"down"}"#.utf8)) }
            return .json(200, Array(text.utf8))
        }
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        configuration.accessLog = false
        server = HTTPServer(configuration: configuration, router: router, metrics: HTTPMetrics())
        try server.start()
    }

    func serve(_ keys: [TestSigningKey]) { document.withLock { $0 = TokenFactory.jwks(keys.map { $0.jwk() }) } }

    deinit { server.stop(drainTimeout: .seconds(1)) }
}

/// Keys that change while sheetd serves: a JWKS URL gaining and losing keys, a JWKS file rewritten,
/// a provider that is down, and the start-up that refuses to serve without a key.
@Suite(.serialized) struct JWKSRotationTests {
    static let first = TestSigningKey.generate("RS256", keyID: "2026-01")
    static let second = TestSigningKey.generate("ES256", keyID: "2026-02")

    /// Polls `condition` every 50 ms for up to 10 s (background reloads take a moment, never a fixed one).
    static func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        for _ in 0..<200 {
            if try condition() { return true }
            usleep(50_000)
        }
        return try condition()
    }

    static func urlSettings(_ url: String) -> KeySourceSettings {
        var settings = KeySourceSettings()
        settings.jwksURL = url
        settings.unknownKeyRefetchSeconds = 0
        settings.fetchTimeoutSeconds = 2
        return settings
    }

    func decision(_ live: LiveService, _ key: TestSigningKey, user: String = "alice") throws -> LiveService.Response {
        let token = key.token(sub: user, now: Int64(time(nil)))
        return try live.get("/v1/users/\(user)/decision?screen=home&platform=ios", token: token)
    }

    /// Rotation without a restart: a kid the JWKS gains is accepted once fetched (an unknown kid asks
    /// for the fetch), the old kid works until the JWKS drops it, and while the URL is down
    /// `/healthz` and decisions go on with the last good keys. On both backends.
    @Test(arguments: LiveService.backends) func rotationOverHTTP(postgres: Bool) throws {
        let jwks = try JWKSServer(TokenFactory.jwks([Self.first.jwk()]))
        let sources = KeySources(Self.urlSettings(jwks.url))
        try sources.load()
        sources.start()
        defer { sources.stop() }
        let verifier = TokenVerifier(keys: sources.ring, adminToken: LiveService.adminToken)
        let live = try LiveService(postgres: postgres, tokens: verifier)

        #expect(try decision(live, Self.first).status == 200)
        let before = try decision(live, Self.second)
        #expect(before.status == 401)
        #expect(before.text.contains("names no known key"), "\(before.text)")

        jwks.serve([Self.first, Self.second])
        #expect(try Self.eventually { try decision(live, Self.second).status == 200 })
        #expect(try decision(live, Self.first).status == 200)

        jwks.serve([Self.second])
        sources.reload()
        #expect(try Self.eventually { try decision(live, Self.first).status == 401 })
        #expect(try decision(live, Self.second).status == 200)

        // The provider goes down: fetches fail, nothing else does.
        let failures = sources.fetchFailures
        jwks.document.withLock { $0 = nil }
        sources.reload()
        #expect(Self.eventually { sources.fetchFailures > failures })
        #expect(try live.get("/healthz", token: nil).status == 200)
        #expect(try decision(live, Self.second).status == 200)
        #expect(try decision(live, Self.second, user: "bob").status == 200, "a token never seen before verifies with the kept keys")
        #expect(try decision(live, Self.first, user: "bob").status == 401)
    }

    /// The start-up refuses to serve without any key: an unreachable JWKS URL, a provider answering
    /// an error, or a malformed document (named).
    @Test func startupRefusesWithoutKeys() throws {
        let jwks = try JWKSServer(nil)
        let unreachable = KeySources(Self.urlSettings("http://127.0.0.1:1/jwks.json"))
        #expect(throws: KeySetError.self) { try unreachable.load() }
        #expect(throws: KeySetError("SHEETD_JWKS_URL: cannot fetch \(jwks.url): HTTP 503")) { try KeySources(Self.urlSettings(jwks.url)).load() }
        jwks.document.withLock { $0 = #"{"keys":"none"}"# }
        #expect(throws: KeySetError("SHEETD_JWKS_URL \(jwks.url): the JWKS has no \"keys\" array")) {
            try KeySources(Self.urlSettings(jwks.url)).load()
        }
        // With another key, an unreachable URL is not fatal (it is fetched again in the background).
        var settings = Self.urlSettings("http://127.0.0.1:1/jwks.json")
        settings.jwtSecret = "a-secret"
        let withSecret = KeySources(settings)
        try withSecret.load()
        #expect(withSecret.ring.hasKeys)
    }

    /// A JWKS file: malformed at start-up is refused naming the file and the problem; rewritten
    /// malformed later it is ignored (the old keys stay); rewritten with a new key, that key works.
    @Test func fileReloadsKeepTheLastGoodSet() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-jwks")
        defer { dir.remove() }
        let path = dir.path + "/jwks.json"
        try #"{"keys":[{"kid":"x","kty":"RSA"}]}"#.write(toFile: path, atomically: true, encoding: .utf8)
        var settings = KeySourceSettings()
        settings.jwksFile = path
        settings.fileCheckMilliseconds = 20
        #expect(throws: KeySetError("SHEETD_JWKS_FILE \(path): key \"x\": n is required")) { try KeySources(settings).load() }

        try TokenFactory.jwks([Self.first.jwk()]).write(toFile: path, atomically: true, encoding: .utf8)
        let sources = KeySources(settings)
        try sources.load()
        sources.start()
        defer { sources.stop() }
        let verifier = TokenVerifier(keys: sources.ring, adminToken: "file-admin")
        let now = Int64(time(nil))
        let reloads = sources.fileReloads
        try "{ not json".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(Self.eventually { sources.fileReloadFailures > 0 })
        #expect(sources.fileReloads == reloads)
        #expect(try verifier.principal(authorization: "Bearer " + Self.first.token(now: now), now: now) == .user("alice"))

        try TokenFactory.jwks([Self.first.jwk(), Self.second.jwk()]).write(toFile: path, atomically: true, encoding: .utf8)
        #expect(Self.eventually { (try? verifier.principal(authorization: "Bearer " + Self.second.token(now: now), now: now)) == .user("alice") })
        #expect(try verifier.principal(authorization: "Bearer " + Self.first.token(now: now), now: now) == .user("alice"))
    }

    /// An https:// URL goes through TLS: against a plain-HTTP port the handshake fails, and says so.
    @Test func httpsURLsUseTLS() throws {
        let jwks = try JWKSServer(TokenFactory.jwks([Self.first.jwk()]))
        #expect(try HTTPGet.fetch(jwks.url).status == 200)
        let https = jwks.url.replacingOccurrences(of: "http://", with: "https://")
        let error = try #require(#expect(throws: FetchError.self) { try HTTPGet.fetch(https, timeoutSeconds: 3) })
        #expect(error.message.contains("SSL") || error.message.contains("TLS"), "\(error.message)")
    }
}

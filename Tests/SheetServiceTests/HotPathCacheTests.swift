import Foundation
import MicroHTTP
@testable import SheetService
import Testing

/// The hot-path caches (issue 6) must not change any answer: verified tokens still expire, the admin
/// token is never cached, and cached decisions follow every write.
@Suite struct HotPathCacheTests {
    let verifier = TokenVerifier(jwtSecret: "cache-secret", adminToken: "cache-admin", clockSkewSeconds: 60)

    @Test func cachedTokenStillExpires() throws {
        let now: Int64 = 1_800_000_000
        let token = verifier.issueUserToken(sub: "alice", now: now, ttl: 100)
        #expect(try verifier.principal(authorization: "Bearer \(token)", now: now) == .user("alice"))
        #expect(try verifier.principal(authorization: "bearer \(token)", now: now + 10) == .user("alice"))
        #expect(verifier.verified.count >= 1)
        #expect(throws: TokenError.expired) { try verifier.principal(authorization: "Bearer \(token)", now: now + 100 + 61) }
        // Still within the skew: accepted again from the cache.
        #expect(try verifier.principal(authorization: "Bearer \(token)", now: now + 100 + 60) == .user("alice"))
    }

    @Test func adminIsNeverCachedAndWhitespaceStillTrims() throws {
        #expect(try verifier.principal(authorization: "Bearer cache-admin", now: 0) == .admin)
        #expect(try verifier.principal(authorization: "Bearer  cache-admin ", now: 0) == .admin)
        #expect(verifier.verified.count == 0)
        #expect(throws: TokenError.malformed) { try verifier.principal(authorization: "Bearer    ", now: 0) }
        #expect(throws: TokenError.malformed) { try verifier.principal(authorization: "Basic abc", now: 0) }
    }

    @Test func badSignatureIsNotCached() {
        let other = TokenVerifier(jwtSecret: "another-secret", adminToken: "x")
        let token = other.issueUserToken(sub: "bob", now: 1_800_000_000, ttl: 100)
        #expect(throws: TokenError.badSignature) { try verifier.principal(authorization: "Bearer \(token)", now: 1_800_000_000) }
        #expect(throws: TokenError.badSignature) { try verifier.principal(authorization: "Bearer \(token)", now: 1_800_000_000) }
    }

    @Test func decisionCacheFollowsEpochs() {
        let cache = DecisionCache(generationCapacity: 1)
        let context = ClientContextForTests.home
        let e0 = cache.epoch(of: "u1")
        cache.insert(userId: "u1", context: context, catalogVersion: 0, epoch: e0, answer: .init(body: [1], etag: "\"a\""))
        #expect(cache.lookup(userId: "u1", context: context, catalogVersion: 0)?.etag == "\"a\"")
        #expect(cache.lookup(userId: "u1", context: context, catalogVersion: 1) == nil)
        cache.invalidate("u1")
        #expect(cache.lookup(userId: "u1", context: context, catalogVersion: 0) == nil)
        // A state read that started before the write must not be stored afterwards.
        cache.insert(userId: "u1", context: context, catalogVersion: 0, epoch: e0, answer: .init(body: [2], etag: "\"b\""))
        #expect(cache.lookup(userId: "u1", context: context, catalogVersion: 0) == nil)
        // Bounded: 64 shards of two generations of one user each.
        for n in 0..<200 {
            let u = "user\(n)"
            cache.insert(userId: u, context: context, catalogVersion: 0, epoch: cache.epoch(of: u), answer: .init(body: [3], etag: "\"c\""))
        }
        #expect(cache.count <= 128)
        #expect(cache.lookup(userId: "user199", context: context, catalogVersion: 0)?.body == [3])
    }

    /// `SHEETD_DECISION_CACHE=0` keeps nothing; a size rounds to whole shards of two generations.
    @Test func decisionCacheSizeAndOff() throws {
        let off = DecisionCache(users: 0)
        off.insert(userId: "u1", context: ClientContextForTests.home, catalogVersion: 0, epoch: off.epoch(of: "u1"),
                   answer: .init(body: [1], etag: "\"a\""))
        #expect(off.lookup(userId: "u1", context: ClientContextForTests.home, catalogVersion: 0) == nil)
        #expect(off.count == 0)
        #expect(DecisionCache(users: 65_536).generationCapacity == 512)
        #expect(DecisionCache(users: 1).generationCapacity == 1)
        let c = try Configuration.parse(arguments: ["--decision-cache", "0"], environment: [:])
        #expect(c.decisionCacheUsers == 0)
        #expect(try Configuration.parse(arguments: [], environment: ["SHEETD_DECISION_CACHE": "1000"]).decisionCacheUsers == 1000)
        #expect(throws: ConfigurationError.self) { try Configuration.parse(arguments: ["--decision-cache", "-1"], environment: [:]) }
    }
}

import SheetPolicy
enum ClientContextForTests {
    static let home = ClientContext(screen: "home", tab: "accounts", platform: .ios)
}

/// Member type hints only make parsing cheaper: with or without them, and whatever the hint says,
/// every body parses to the same nodes and fails the same way.
@Suite struct JSONHintTests {
    static let allHints: [JSONNode.Hints] = [
        .none,
        JSONNode.Hints(["a": .integer, "b": .integer, "c": .integer]),
        JSONNode.Hints(["a": .string, "b": .string, "c": .string]),
        JSONNode.Hints(["a": .number, "b": .number, "c": .number]),
        JSONNode.Hints(["a": .bool, "b": .bool, "c": .bool]),
        BodyHints.count, BodyHints.contentHeight,
    ]

    static let bodies = [
        #"{"a":1,"b":"x","c":null}"#, #"{"a":1.5,"b":1e2,"c":-0}"#, #"{"a":true,"b":false,"c":"true"}"#,
        #"{"a":{"x":[1,"2",{"y":null}]},"b":[],"c":{}}"#, #"{"a":99999999999999999999,"b":-9223372036854775808,"c":1.0}"#,
        #"{"count":3,"seq":"7","filter":5,"eventId":null}"#, #"{"height":312.5,"platform":"ios","eventId":"e1"}"#,
        #"{"height":300,"platform":["ios"]}"#, #"{"a":"\u00e9\n","b":"","c":" "}"#,
    ]

    @Test(arguments: bodies)
    func hintsNeverChangeTheResult(_ body: String) throws {
        let bytes = Array(body.utf8)
        let reference = try #require(try JSONNode.parse(bytes).objectMembers)
        for hints in Self.allHints {
            #expect(try JSONValue.parseObject(bytes, hints: hints) == reference, "hints \(hints.kinds)")
        }
    }

    @Test func nodesAreNamedByType() throws {
        let object = try JSONValue.parseObject(Array(#"{"i":1,"f":1.5,"e":1e2,"s":"x","n":null,"t":true,"o":{"a":[false]},"big":1e19}"#.utf8))
        #expect(object == [
            "i": .integer(1), "f": .number(1.5), "e": .integer(100), "s": .string("x"), "n": .null, "t": .bool(true),
            "o": .object(["a": .array([.bool(false)])]), "big": .number(1e19),
        ])
    }

    @Test(arguments: ["[1]", "1", "null", "\"x\"", "{", #"{"a":1,}"#, #"{"a":01}"#, #"{"a":1}x"#, "{\"a\":\"\u{1}\"}"])
    func nonObjectsAndBadJSONFailAlike(_ body: String) {
        let plain = Result { try JSONValue.parseObject(Array(body.utf8)) }
        let hinted = Result { try JSONValue.parseObject(Array(body.utf8), hints: JSONNode.Hints(["a": .integer])) }
        switch (plain, hinted) {
        case (.failure(let a as Problem), .failure(let b as Problem)):
            #expect(a.detail == b.detail)
        default:
            Issue.record("\(body): \(plain) vs \(hinted)")
        }
    }
}

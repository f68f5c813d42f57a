import Foundation
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
}

import SheetPolicy
enum ClientContextForTests {
    static let home = ClientContext(screen: "home", tab: "accounts", platform: .ios)
}

import Concurrency
import Foundation
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization
import Testing

@testable import SheetService

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
        #expect(throws: TokenError.notBearer) { try verifier.principal(authorization: "Bearer    ", now: 0) }
        #expect(throws: TokenError.notBearer) { try verifier.principal(authorization: "Basic abc", now: 0) }
    }

    @Test func badSignatureIsNotCached() {
        let other = TokenVerifier(jwtSecret: "another-secret", adminToken: "x")
        let token = other.issueUserToken(sub: "bob", now: 1_800_000_000, ttl: 100)
        #expect(throws: TokenError.badSignature) { try verifier.principal(authorization: "Bearer \(token)", now: 1_800_000_000) }
        #expect(throws: TokenError.badSignature) { try verifier.principal(authorization: "Bearer \(token)", now: 1_800_000_000) }
    }

    /// The hot path reads the Authorization header's bytes: every shape of header gets the same
    /// outcome as through the String path, before and after the token is cached, and after expiry.
    @Test func headerBytesAndStringsAgree() throws {
        let now: Int64 = 1_800_000_000
        let verifier = TokenVerifier(jwtSecret: "bytes-secret", adminToken: "bytes-admin", clockSkewSeconds: 60)
        let token = verifier.issueUserToken(sub: "carol", now: now, ttl: 100)
        let forged = TokenVerifier(jwtSecret: "another-secret", adminToken: "x").issueUserToken(sub: "carol", now: now, ttl: 100)
        let values = [
            "Bearer \(token)", "bearer \(token)", "BEARER \(token)", "Bearer  \(token) ", "Bearer \(token)x",
            "Bearer \(token.dropLast())", "Bearer \(forged)", "Basic abc", "", "Bearer ", "Bearer bytes-admin",
            "Bearer\t\(token)", "Bearer \u{e9}\(token)",
        ]
        for t in [now, now, now + 161] {
            for v in values {
                let viaString = Result { () throws(TokenError) in try verifier.principal(authorization: v, now: t) }
                var copy = v
                let viaBytes = copy.withUTF8 { b in Result { () throws(TokenError) in try verifier.principal(authorizationBytes: b.span, now: t) } }
                #expect(viaString == viaBytes, "\(v.prefix(12)) at \(t - now)")
            }
        }
        #expect(try verifier.principal(authorization: "Bearer \(token)", now: now) == .user("carol"))
        #expect(throws: TokenError.missing) { try verifier.principal(authorizationBytes: nil, now: now) }
    }

    /// Token keys: a borrowed key (request bytes) equals the stored copy; fingerprints are defined
    /// for any length and differ with the signature's bytes.
    @Test func tokenKeysCompareBytes() {
        let a = Array("header.payload.signature-abcdefghijklmnop".utf8)
        var b = a
        b[b.count - 5] ^= 1
        let fingerprint = VerifiedTokenCache.fingerprint(a.span), otherFingerprint = VerifiedTokenCache.fingerprint(b.span)
        let owned = ByteKey(copying: a.span, fingerprint: fingerprint)
        ByteKey.withBorrowed(a.span, fingerprint: fingerprint) { borrowed in
            #expect(borrowed == owned)
            #expect(borrowed.hashValue == owned.hashValue)
            ByteKey.withBorrowed(b.span, fingerprint: otherFingerprint) { #expect(borrowed != $0) }
        }
        #expect(fingerprint != otherFingerprint)
        for n in 0..<3 {
            let short = [UInt8](repeating: 0x41, count: n)
            let fingerprint = VerifiedTokenCache.fingerprint(short.span)
            let owned = ByteKey(copying: short.span, fingerprint: fingerprint)
            ByteKey.withBorrowed(short.span, fingerprint: fingerprint) { #expect($0 == owned) }
        }
    }

    /// A full token cache keeps its bound and the tokens in use.
    @Test func tokenCacheIsBounded() throws {
        let cache = VerifiedTokenCache(generationCapacity: 2)
        let entry = VerifiedTokenCache.Entry(subject: "u", exp: 10, nbf: nil)
        for n in 0..<1_000 { cache.insert("header.payload.signature-\(n)", entry) }
        #expect(cache.count <= 2 * 2 * VerifiedTokenCache.shardCount)
        #expect(try cache.lookup("header.payload.signature-999")?.check(now: 0, skew: 0) == "u")
    }

    /// Users whose decisions are the same bytes share one answer (and one ETag computation); a user keeps at most
    /// `contextsPerUser` contexts, the most recent ones.
    @Test func decisionCacheSharesAnswersAndBoundsContexts() {
        let cache = DecisionCache()
        let home = ClientContextForTests.home
        // Answers are interned by their bytes, not by user: a second user in another shard of the
        // user table (per-user interning kept a copy per shard: 25 MiB in the mix) shares it too.
        let shard = { (u: String) in (u.hashValue >> 16) & (DecisionCache.shardCount - 1) }
        let second = (0..<10_000).lazy.map { "b\($0)" }.first { shard($0) != shard("a") }!
        var etagsComputed = 0
        func etag(_ body: [UInt8]) -> String {
            etagsComputed += 1
            return "\"\(body.map(String.init).joined())\""
        }
        for u in ["a", second] {
            let answer = cache.answer(userId: u, body: [7, 7], etag: etag)
            cache.insert(
                userId: u, basis: cache.freshness.beginRead(u), context: home, catalogVersion: 0, answer: answer)
        }
        let a = cache.lookup(userId: "a", context: home, catalogVersion: 0, now: Timestamp.now)?.answer
        #expect(a != nil && a === cache.lookup(userId: second, context: home, catalogVersion: 0, now: Timestamp.now)?.answer)
        #expect(etagsComputed == 1)  // the second user's identical body reused the first one's ETag
        // A thousand users in the same state, spread over every shard, hold one answer.
        let many = (0..<1_000).map { cache.answer(userId: "m\($0)", body: [7, 7], etag: etag) }
        #expect(many.allSatisfy { $0 === a } && etagsComputed == 1)
        let other = cache.answer(userId: second, body: [7, 8], etag: etag)
        #expect(etagsComputed == 2 && other.etag == "\"78\"" && a?.etag == "\"77\"")
        // With the cache off no decision is kept, but identical bytes still share one answer and ETag.
        let off = DecisionCache(users: 0)
        let first = off.answer(userId: "a", body: [7, 7], etag: etag)
        #expect(off.answer(userId: "a", body: [7, 7], etag: etag) === first)
        #expect(off.lookup(userId: "a", context: home, catalogVersion: 0, now: Timestamp.now) == nil)
        #expect(etagsComputed == 3)
        let screens = (0..<6).map { "screen\($0)" }
        for (i, screen) in screens.enumerated() {
            cache.insert(
                userId: "c", basis: cache.freshness.beginRead("c"), context: ClientContext(screen: screen, tab: nil, platform: .android),
                catalogVersion: 0, answer: .init(body: [UInt8(i)], etag: "\"\(i)\""))
        }
        let held = screens.map {
            cache.lookup(userId: "c", context: ClientContext(screen: $0, tab: nil, platform: .android), catalogVersion: 0, now: Timestamp.now)?.answer
                .body
        }
        #expect(held == [nil, nil, [2], [3], [4], [5]])
        // Computing an already held context again replaces it and keeps the others.
        cache.insert(
            userId: "c", basis: cache.freshness.beginRead("c"), context: ClientContext(screen: "screen2", tab: nil, platform: .android),
            catalogVersion: 0, answer: .init(body: [9], etag: "\"9\""))
        #expect(
            cache.lookup(userId: "c", context: ClientContext(screen: "screen2", tab: nil, platform: .android), catalogVersion: 0, now: Timestamp.now)?
                .answer.body == [9])
        #expect(
            cache.lookup(userId: "c", context: ClientContext(screen: "screen3", tab: nil, platform: .android), catalogVersion: 0, now: Timestamp.now)?
                .answer.body == [3])
    }

    /// The intern table's fingerprint depends on every byte and the length (the tail shorter than 16
    /// bytes included), and interning finds bodies of any length again.
    @Test func decisionCacheFingerprintCoversEveryByte() {
        let body = (0..<100).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var seen: Set<Int> = []
        for length in 0...body.count {
            let prefix = Array(body.prefix(length))
            let copy = Array(prefix)
            let (key, copyKey) = (DecisionCache.fingerprint(prefix.span), DecisionCache.fingerprint(copy.span))
            #expect(key == copyKey)
            seen.insert(key)
        }
        #expect(seen.count == body.count + 1)
        for index in body.indices {
            var changed = body
            changed[index] ^= 1
            let (changedKey, key) = (DecisionCache.fingerprint(changed.span), DecisionCache.fingerprint(body.span))
            #expect(changedKey != key)
            let same = DecisionCache.sameBytes(changed.span, body.span)
            #expect(!same)
        }
        let copy = Array(body), empty: [UInt8] = []
        let (bodySame, emptySame) = (DecisionCache.sameBytes(body.span, copy.span), DecisionCache.sameBytes(empty.span, empty.span))
        #expect(bodySame && emptySame)
        let cache = DecisionCache()
        var computed = 0
        for length in [0, 1, 15, 16, 17, 31, 32, 33, 100] {
            let bytes = Array(body.prefix(length))
            let first = cache.answer(
                userId: "u", body: bytes,
                etag: { _ in
                    computed += 1; return "\"\(length)\""
                })
            let again = cache.answer(
                userId: "u", body: Array(bytes),
                etag: { _ in
                    computed += 1; return ""
                })
            #expect(first === again && again.etag == "\"\(length)\"")
        }
        #expect(computed == 9)
    }

    /// `DecisionFreshness` applies what happened as its invariants say: a local write and another
    /// replica's notification make the user's answers stale, a listener reset makes every answer stale
    /// and the catalog unknown, a catalog notification the catalog unknown until it is loaded again;
    /// without a listener no candidate is proven.
    @Test func decisionFreshnessFollowsWhatHappened() {
        let freshness = DecisionFreshness()
        let b1 = freshness.beginRead("u1")
        let b2 = freshness.beginRead("u2")
        #expect(freshness.isCurrent(b1) && freshness.isCurrent(b2))
        // (A local write bumps through `UserStateWrites`: ServingRulesTests.userWritesMakeBasesStale.)
        freshness.heard(.users(["u2"]))
        #expect(!freshness.isCurrent(b2) && freshness.isCurrent(b1))
        let b3 = freshness.beginRead("u3")
        freshness.heard(.listenerReset(connected: false))
        #expect(!freshness.isCurrent(b3) && !freshness.isCurrent(b1), "a reset makes every answer stale")
        // The catalog mark: unknown until loaded; a notification or a reset makes it unknown again.
        #expect(freshness.needsCatalogReload(seen: 5))
        freshness.catalogLoaded(atStoreVersion: 5)
        #expect(!freshness.needsCatalogReload(seen: 5) && freshness.needsCatalogReload(seen: 4))
        freshness.heard(.catalog)
        #expect(freshness.needsCatalogReload(seen: 5))
        freshness.catalogLoaded(atStoreVersion: 5)
        freshness.heard(.listenerReset(connected: true))
        #expect(freshness.needsCatalogReload(seen: 5))
        // A store only this process writes has no barrier: nothing is proven by one.
        let candidate = DecisionCache.Candidate(
            fresh: DecisionCache.Fresh(answer: .init(body: [1], etag: "\"a\""), validUntil: nil), catalogVersion: 0,
            basis: freshness.beginRead("u3").read(atStoreVersion: 1))
        let proven = Mutex<Bool?>(nil)
        freshness.confirm(candidate, now: Timestamp.now) { exact in proven.withLock { $0 = exact } }
        #expect(proven.withLock { $0 } == false)
    }

    @Test func decisionCacheFollowsEpochs() {
        let cache = DecisionCache(generationCapacity: 1)
        let context = ClientContextForTests.home
        let e0 = cache.freshness.beginRead("u1")
        cache.insert(userId: "u1", basis: e0, context: context, catalogVersion: 0, answer: .init(body: [1], etag: "\"a\""))
        #expect(cache.lookup(userId: "u1", context: context, catalogVersion: 0, now: Timestamp.now)?.answer.etag == "\"a\"")
        #expect(cache.lookup(userId: "u1", context: context, catalogVersion: 1, now: Timestamp.now)?.answer == nil)
        cache.freshness.heard(.users(["u1"]))  // as a write through `UserStateWrites` does
        #expect(cache.lookup(userId: "u1", context: context, catalogVersion: 0, now: Timestamp.now)?.answer == nil)
        // A state read that started before the write must not be stored afterwards.
        cache.insert(userId: "u1", basis: e0, context: context, catalogVersion: 0, answer: .init(body: [2], etag: "\"b\""))
        #expect(cache.lookup(userId: "u1", context: context, catalogVersion: 0, now: Timestamp.now)?.answer == nil)
        // Bounded: 64 shards of two generations of one user each.
        for n in 0..<200 {
            let u = "user\(n)"
            cache.insert(
                userId: u, basis: cache.freshness.beginRead(u), context: context, catalogVersion: 0, answer: .init(body: [3], etag: "\"c\""))
        }
        #expect(cache.count <= 128)
        #expect(cache.lookup(userId: "user199", context: context, catalogVersion: 0, now: Timestamp.now)?.answer.body == [3])
    }

    /// `SHEETD_DECISION_CACHE=0` keeps nothing; a size rounds to whole shards of two generations.
    @Test func decisionCacheSizeAndOff() throws {
        let off = DecisionCache(users: 0)
        off.insert(
            userId: "u1", basis: off.freshness.beginRead("u1"), context: ClientContextForTests.home, catalogVersion: 0,
            answer: .init(body: [1], etag: "\"a\""))
        #expect(off.lookup(userId: "u1", context: ClientContextForTests.home, catalogVersion: 0, now: Timestamp.now)?.answer == nil)
        #expect(off.count == 0)
        #expect(DecisionCache(users: 65_536).generationCapacity == 512)
        #expect(DecisionCache(users: 1).generationCapacity == 1)
    }

    /// Each worker keeps the contexts of the last few query strings it parsed: answers must be those
    /// of the query sent, however many queries take turns (more than it keeps), with refusals never
    /// kept and never taking a valid query's place.
    @Test func recentlyParsedQueriesAnswerAsTheirOwnQuery() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        _ = try live.put("/v1/users/dana/containers/offers-home/count", #"{"count":2}"#)
        let queries =
            ["ios", "android"].flatMap { platform in
                ["phone", "pad"].flatMap { idiom in
                    ["portrait", "landscape"].map { "screen=home&tab=accounts&platform=\(platform)&idiom=\(idiom)&orientation=\($0)" }
                }
            } + ["screen=home&platform=ios", "screen=home&tab=accounts&platform=ios&viewportHeight=700"]
        #expect(queries.count > 8)
        var first: [String: String] = [:]
        for round in 0..<3 {
            for (index, query) in queries.enumerated() {
                let r = try live.get("/v1/users/dana/decision?\(query)")
                #expect(r.status == 200, "\(query)")
                let sheet = r.json["sheet"] as? [String: Any]
                if query.contains("tab=accounts") {
                    #expect(sheet?[query.contains("android") ? "android" : "ios"] != nil, "\(query)")
                    #expect(sheet?["presentationStyle"] as? String == Self.expectedStyle(query), "\(query)")
                } else {
                    #expect(r.json["present"] as? Bool == false, "\(query)")
                }
                if round == 0 { first[query] = r.text } else { #expect(r.text == first[query], "\(query) in round \(round)") }
                // A refusal in between is answered as a refusal, and is not remembered in its place.
                if index % 3 == 0 {
                    let bad = try live.get("/v1/users/dana/decision?\(query)&idiom=watch")
                    #expect(bad.status == 400)
                }
            }
        }
    }

    private static func expectedStyle(_ query: String) -> String {
        if query.contains("android") { return "sheet" }
        if query.contains("idiom=pad") { return "popover" }
        return query.contains("landscape") ? "edgeAttached" : "sheet"
    }
}

extension DecisionCache {
    /// A lookup as `LocalDecisions` makes it (a store only this process writes).
    func lookup(userId: String, context: ClientContext, catalogVersion: Int, now: () -> Timestamp) -> Fresh? {
        lookup(userId: userId, context: context, request: ServingRequest(catalogVersion: catalogVersion, proof: .local), now: now)
    }
}

enum ClientContextForTests {
    static let home = ClientContext(screen: "home", tab: "accounts", platform: .ios)
}

import Synchronization

/// A bounded cache of user tokens whose signature and claims already verified, keyed by the exact
/// token string (performance: HMAC, base64url and two JSON parses per request were about 30 % of
/// the decision route's CPU).
///
/// Exactness: for a given verifier (secret), everything about a token except the time checks is a
/// function of the token string, so an entry keeps the verified subject and its `exp`/`nbf`, and
/// every hit re-runs the time checks with the request's clock in the original order (`exp`, then
/// `nbf`). Only tokens that verified (valid signature, valid `sub`, `exp` present, `nbf` absent or
/// a valid NumericDate) are stored, so invalid tokens cannot fill it. The admin token is never
/// stored (it keeps its constant-time digest comparison).
///
/// Bound: 64 shards of two generations of at most `generationCapacity` entries each (65 536 tokens in
/// all by default); when a shard's current generation is full it becomes the previous one (the older
/// one is dropped). A hit in the previous generation
/// moves the entry into the current one, so often-used tokens survive (LRU-like, O(1)).
final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let subject: String
        let exp: Int64
        let nbf: Int64?

        /// The same checks, in the same order and with the same errors, as full verification.
        func check(now: Int64, skew: Int64) throws(TokenError) -> String {
            guard now <= exp + skew else { throw .expired }
            if let nbf { guard now + skew >= nbf else { throw .notYetValid } }
            return subject
        }
    }

    /// One shard's entries: two generations (see the type's comment).
    struct Generations {
        var current: [String: Entry] = [:]
        var previous: [String: Entry] = [:]
    }

    final class Shard: Sendable {
        let generations = Mutex(Generations())
    }

    /// Shards, each behind its own lock, picked by the token's hash: the two (or N) HTTP workers
    /// rarely want the same lock at once, and every worker sees every cached token.
    static let shardCount = 64
    let generationCapacity: Int
    private let shards: [Shard]

    /// `generationCapacity` is per shard.
    init(generationCapacity: Int = 512) {
        self.generationCapacity = max(1, generationCapacity)
        self.shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    /// Picked by two characters near the end of the token (of an HS256 signature, which are random;
    /// not the very last one, which carries only 4 bits of a 32-byte signature): hashing a ~200-byte
    /// token twice per request (here and in the dictionary) showed up in profiles.
    @inline(__always) private func shard(_ token: String) -> Shard {
        var tail = token.utf8.reversed().makeIterator()
        _ = tail.next()
        let a = Int(tail.next() ?? 0), b = Int(tail.next() ?? 0)
        return shards[(a &* 31 &+ b) & (Self.shardCount - 1)]
    }

    func lookup(_ token: String) -> Entry? {
        shard(token).generations.withLock { g in
            if let entry = g.current[token] { return entry }
            guard let entry = g.previous.removeValue(forKey: token) else { return nil }
            Self.insert(token, entry, into: &g, capacity: generationCapacity)
            return entry
        }
    }

    func insert(_ token: String, _ entry: Entry) {
        shard(token).generations.withLock { g in Self.insert(token, entry, into: &g, capacity: generationCapacity) }
    }

    /// Entries held (both generations of every shard), for tests.
    var count: Int { shards.reduce(0) { n, s in n + s.generations.withLock { $0.current.count + $0.previous.count } } }

    private static func insert(_ token: String, _ entry: Entry, into g: inout Generations, capacity: Int) {
        if g.current.count >= capacity {
            g.previous = g.current
            g.current = [:]
            g.current.reserveCapacity(capacity)
        }
        g.current[token] = entry
    }
}

/// `Authorization: Bearer <token>` parsing without Foundation for the common shape: ASCII
/// `bearer ` in any case, then a token whose first and last bytes are printable ASCII (so trimming
/// white space would change nothing). Anything else returns nil and takes the general path.
enum BearerFastPath {
    static func token(_ authorization: String) -> String? {
        return authorization.utf8.withContiguousStorageIfAvailable { b -> String? in
            guard b.count > 7 else { return nil }
            let scheme: [UInt8] = [0x62, 0x65, 0x61, 0x72, 0x65, 0x72, 0x20]  // "bearer "
            for i in 0..<7 {
                let c = b[i]
                let lower = (c >= 0x41 && c <= 0x5A) ? c | 0x20 : c
                guard lower == scheme[i] else { return nil }
            }
            let first = b[7], last = b[b.count - 1]
            guard first > 0x20 && first < 0x7F && last > 0x20 && last < 0x7F else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: b[7...]), as: UTF8.self)
        } ?? nil
    }
}

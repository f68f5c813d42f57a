import Synchronization
#if canImport(Glibc)
import Glibc
#endif

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
        var current: [TokenKey: Entry] = [:]
        var previous: [TokenKey: Entry] = [:]
    }

    final class Shard: Sendable {
        let generations = Mutex(Generations())
    }

    /// Shards, each behind its own lock, picked by the token's fingerprint: the two (or N) HTTP workers
    /// rarely want the same lock at once, and every worker sees every cached token.
    static let shardCount = 64
    let generationCapacity: Int
    private let shards: [Shard]

    /// `generationCapacity` is per shard.
    init(generationCapacity: Int = 512) {
        self.generationCapacity = max(1, generationCapacity)
        self.shards = (0..<Self.shardCount).map { _ in Shard() }
    }

    @inline(__always) private func shard(_ fingerprint: UInt64) -> Shard {
        shards[Int(truncatingIfNeeded: fingerprint >> 58) & (Self.shardCount - 1)]
    }

    /// Looks up the token's exact bytes without copying them (the request header, on the hot path).
    func lookup(_ token: UnsafeBufferPointer<UInt8>) -> Entry? {
        let key = TokenKey(borrowing: token)
        return shard(key.fingerprint).generations.withLock { g in
            if let entry = g.current[key] { return entry }
            guard let entry = g.previous.removeValue(forKey: key) else { return nil }
            Self.insert(TokenKey(copying: token, fingerprint: key.fingerprint), entry, into: &g, capacity: generationCapacity)
            return entry
        }
    }

    func lookup(_ token: String) -> Entry? {
        var token = token
        return token.withUTF8 { lookup($0) }
    }

    func insert(_ token: String, _ entry: Entry) {
        var token = token
        token.withUTF8 { bytes in
            let key = TokenKey(copying: bytes, fingerprint: TokenKey.fingerprint(bytes))
            shard(key.fingerprint).generations.withLock { g in Self.insert(key, entry, into: &g, capacity: generationCapacity) }
        }
    }

    /// Entries held (both generations of every shard), for tests.
    var count: Int { shards.reduce(0) { n, s in n + s.generations.withLock { $0.current.count + $0.previous.count } } }

    private static func insert(_ key: TokenKey, _ entry: Entry, into g: inout Generations, capacity: Int) {
        if g.current.count >= capacity {
            g.previous = g.current
            g.current = [:]
            g.current.reserveCapacity(capacity)
        }
        g.current[key] = entry
    }
}

/// A dictionary key for a token: its exact bytes, hashed by a cheap fingerprint of its tail.
///
/// Only tokens whose HS256 signature verified are stored, and a JWT ends with its signature, so the
/// last bytes are effectively random: hashing ~16 of them instead of SipHashing ~200 bytes per request
/// loses nothing, and nobody without the secret can make stored tokens collide. Equality still
/// compares every byte. A `borrowed` key points into a request header and is used for lookups only,
/// never stored (the dictionary keeps the keys it was given by `insert`, which are `owned`).
/// `@unchecked Sendable`: owned keys are immutable arrays; a borrowed key lives only for one lookup
/// on the thread that owns the header bytes.
struct TokenKey: Hashable, @unchecked Sendable {
    private enum Bytes {
        case owned([UInt8])
        case borrowed(UnsafeBufferPointer<UInt8>)
    }

    let fingerprint: UInt64
    private let bytes: Bytes

    init(borrowing token: UnsafeBufferPointer<UInt8>) {
        fingerprint = Self.fingerprint(token)
        bytes = .borrowed(token)
    }

    init(copying token: UnsafeBufferPointer<UInt8>, fingerprint: UInt64) {
        self.fingerprint = fingerprint
        bytes = .owned(Array(token))
    }

    /// The length and the 16 bytes before the last one (the last base64url character of an HS256
    /// signature carries only 4 bits), mixed by multiply-xorshift; shorter tokens use what they have.
    static func fingerprint(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var h = UInt64(truncatingIfNeeded: b.count) &* 0x9E37_79B9_7F4A_7C15
        var i = max(0, b.count - 17)
        let end = max(0, b.count - 1)
        while i < end {
            h = (h ^ UInt64(b[i])) &* 0x100_0000_01B3
            i += 1
        }
        h ^= h >> 29
        h = h &* 0xBF58_476D_1CE4_E5B9
        return h ^ (h >> 32)
    }

    private func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch bytes {
        case .owned(let a): a.withUnsafeBufferPointer(body)
        case .borrowed(let p): body(p)
        }
    }

    static func == (a: TokenKey, b: TokenKey) -> Bool {
        guard a.fingerprint == b.fingerprint else { return false }
        return a.withBytes { x in b.withBytes { y in x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) } }
    }

    func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }
}

/// `Authorization: Bearer <token>` parsing without Foundation for the common shape: ASCII
/// `bearer ` in any case, then a token whose first and last bytes are printable ASCII (so trimming
/// white space would change nothing). Anything else returns nil and takes the general path.
enum BearerFastPath {
    static func token(_ authorization: String) -> String? {
        var authorization = authorization
        return authorization.withUTF8 { b in token(b).map { String(decoding: $0, as: UTF8.self) } }
    }

    /// The token's bytes within the header value, without copying.
    static func token(_ b: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8>? {
        guard b.count > 7 else { return nil }
        // "bearer " in any case: `| 0x20` maps exactly the two cases of a letter onto its lower case.
        guard b[0] | 0x20 == 0x62, b[1] | 0x20 == 0x65, b[2] | 0x20 == 0x61, b[3] | 0x20 == 0x72,
              b[4] | 0x20 == 0x65, b[5] | 0x20 == 0x72, b[6] == 0x20 else { return nil }
        let first = b[7], last = b[b.count - 1]
        guard first > 0x20 && first < 0x7F && last > 0x20 && last < 0x7F else { return nil }
        return UnsafeBufferPointer(rebasing: b[7...])
    }
}

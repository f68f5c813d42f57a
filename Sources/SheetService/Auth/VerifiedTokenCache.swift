import Concurrency

/// A bounded cache of user tokens whose signature and claims already verified, keyed by the exact
/// token bytes (HMAC, base64url and two JSON parses per request are the decision route's largest
/// cost without it).
///
/// Exactness: for given keys, everything about a token except the time checks is a function of the
/// token string, so an entry keeps the verified subject, whether it is an admin by claim, its
/// `exp`/`nbf` and the key ring's epoch it verified under (an entry of an older epoch, after a key
/// was removed or replaced, is a miss and the token is verified again), and
/// every hit re-runs the time checks with the request's clock in the original order (`exp`, then
/// `nbf`). Only tokens that verified (valid signature, valid `sub`, `exp` present, `nbf` absent or
/// a valid NumericDate) are stored, so invalid tokens cannot fill it. The admin token is never
/// stored (it keeps its constant-time digest comparison).
///
/// Across replicas (a shared PostgreSQL database) it needs no invalidation: an entry depends on the
/// token's bytes and this process's secret only, never on anything stored, so no write on another
/// replica can make it wrong; user erasure does not revoke tokens on one replica either. A key
/// removed from a reloaded JWKS moves the epoch.
///
/// Bound: a `GenerationalCache` of 64 shards of two generations of at most `generationCapacity`
/// tokens (65 536 tokens in all by default); often-used tokens survive a new generation.
final class VerifiedTokenCache: Sendable {
    struct Entry: Sendable {
        let subject: String
        let exp: Int64
        let nbf: Int64?
        /// The token carries the admin claim (`SHEETD_ADMIN_CLAIM`).
        var isAdmin = false
        /// The key ring's epoch when it verified.
        var epoch = 0

        /// The principal, after the time checks.
        func principal(now: Int64, skew: Int64) throws(TokenError) -> Principal {
            let subject = try check(now: now, skew: skew)
            return isAdmin ? .admin : .user(subject)
        }

        /// The same checks, in the same order and with the same errors, as full verification.
        func check(now: Int64, skew: Int64) throws(TokenError) -> String {
            guard !TokenVerifier.isExpired(exp: exp, now: now, leeway: skew) else { throw .expired }
            if let nbf, TokenVerifier.isNotYetValid(nbf: nbf, now: now, leeway: skew) { throw .notYetValid }
            return subject
        }
    }

    static let shardCount = 64
    private let entries: GenerationalCache<ByteKey, Entry>
    /// Tokens per generation of one shard.
    var generationCapacity: Int { entries.generationCapacity }

    init(generationCapacity: Int = 512) {
        entries = GenerationalCache(generationCapacity: generationCapacity, shardCount: Self.shardCount)
    }

    /// Looks up the token's exact bytes without copying them (the request header, on the hot path).
    func lookup(_ token: Span<UInt8>) -> Entry? {
        let fingerprint = Self.fingerprint(token)
        return ByteKey.withBorrowed(token, fingerprint: fingerprint) { key in
            entries.value(for: key, hash: Int(truncatingIfNeeded: fingerprint))
        }
    }

    func lookup(_ token: String) -> Entry? {
        var token = token
        return token.withUTF8 { lookup($0.span) }
    }

    func insert(_ token: String, _ entry: Entry) {
        var token = token
        token.withUTF8 { bytes in
            let fingerprint = Self.fingerprint(bytes.span)
            entries.insert(entry, for: ByteKey(copying: bytes.span, fingerprint: fingerprint), hash: Int(truncatingIfNeeded: fingerprint))
        }
    }

    /// Entries held (both generations of every shard), for tests.
    var count: Int { entries.count }

    /// A token's hash: its length and the 16 bytes before the last one, mixed by multiply-xorshift
    /// (shorter tokens use what they have). Only tokens whose signature verified are stored,
    /// and a JWT ends with its signature, so these bytes are effectively random: hashing them instead
    /// of SipHashing the whole token loses nothing, and nobody without the secret can make stored
    /// tokens collide. The last base64url character of an HS256 signature carries only 4 bits.
    static func fingerprint(_ b: Span<UInt8>) -> UInt64 {
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
}

/// `Authorization: Bearer <token>` parsing without Foundation for the common shape: ASCII
/// `bearer ` in any case, then a token whose first and last bytes are printable ASCII (so trimming
/// white space would change nothing). Anything else returns nil and takes the general path.
enum BearerFastPath {
    static func token(_ authorization: String) -> String? {
        var authorization = authorization
        return authorization.withUTF8 { b in tokenRange(b.span).map { String(decoding: b[$0], as: UTF8.self) } }
    }

    /// Where the token is within the header value (`extracting` it copies nothing).
    static func tokenRange(_ b: Span<UInt8>) -> Range<Int>? {
        guard b.count > 7 else { return nil }
        // "bearer " in any case: `| 0x20` maps exactly the two cases of a letter onto its lower case.
        guard b[0] | 0x20 == 0x62, b[1] | 0x20 == 0x65, b[2] | 0x20 == 0x61, b[3] | 0x20 == 0x72,
            b[4] | 0x20 == 0x65, b[5] | 0x20 == 0x72, b[6] == 0x20
        else { return nil }
        let first = b[7], last = b[b.count - 1]
        guard first > 0x20 && first < 0x7F && last > 0x20 && last < 0x7F else { return nil }
        return 7..<b.count
    }
}

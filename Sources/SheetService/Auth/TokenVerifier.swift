import Crypto
import JSONKit
import SheetPolicy
public import SheetWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Who is calling: the admin, or one user proven by a JWT.
public enum Principal: Sendable, Equatable {
    case admin
    case user(String)
}

/// Why a bearer token was refused; every case answers 401.
public enum TokenError: Error, Equatable, Sendable {
    case missing, notBearer, tooLong, malformed, unsupportedAlgorithm, badSignature, expired, notYetValid
    case invalidClaims(String)
    /// The header names a key by `kid` that no configured source has.
    case unknownKey(String)
    /// The header names a key sheetd refuses (too weak, for another use...), with why.
    case refusedKey(String, reason: String)
    /// Several keys are configured and the header names none of them.
    case missingKeyID
    /// The header carries a member that would let the token choose its own key (`jku`, `x5u`, `jwk`,
    /// `x5c`) or extensions sheetd does not implement (`crit`).
    case forbiddenHeader(String)

    var detail: String {
        switch self {
        case .missing: "an Authorization: Bearer token is required"
        case .notBearer: "the Authorization header must look like: Authorization: Bearer <token>"
        case .tooLong: "the bearer token is longer than \(TokenVerifier.maximumTokenBytes) bytes"
        case .malformed: "the bearer token is not a well-formed JWT (three base64url parts: header.payload.signature)"
        case .unsupportedAlgorithm: "the token's alg is not its key's algorithm (the key decides: HS256, RS256, ES256 or EdDSA; never none)"
        case .badSignature: "the token's signature does not verify"
        case .expired: "the token has expired"
        case .notYetValid: "the token is not valid yet (nbf)"
        case .invalidClaims(let why): "the token's claims are invalid: \(why)"
        case .unknownKey(let kid): "the token's kid \"\(kid.prefix(64))\" names no known key"
        case .refusedKey(let kid, let reason): "the token's key \"\(kid.prefix(64))\" is refused: \(reason)"
        case .missingKeyID: "the token has no kid, and several keys are configured"
        case .forbiddenHeader(let name): "the token's header member \(name) is refused (the server's keys alone decide)"
        }
    }
}

/// A named admin token (`SHEETD_ADMIN_TOKENS_FILE`: one `name sha256:<hex>` or `name token` a line).
/// Only its SHA-256 digest is kept for checking; `token` is there when the token itself was given.
public struct AdminToken: Sendable, Equatable {
    public var name: String
    public var digest: [UInt8]
    public var token: String?
    public init(name: String, token: String) {
        self.name = name
        self.token = token
        self.digest = SHA256.hash(Array(token.utf8))
    }
    public init(name: String, digest: [UInt8]) {
        self.name = name
        self.token = nil
        self.digest = digest
    }
}

/// Verifies admin tokens and user tokens (HS256 with a shared secret; RS256, ES256 and EdDSA with a
/// JWKS's public keys), and issues HS256 user tokens (`sheetd token`).
public struct TokenVerifier: Sendable {
    /// The keys user tokens are checked against, replaced as their sources reload.
    public let keys: KeyRing
    public let claimRules: TokenClaimRules
    /// The single secret, for `issueUserToken` (nil when only other keys are configured).
    private let secret: [UInt8]?
    /// Every admin token's digest with its name (the single `SHEETD_ADMIN_TOKEN` is `admin`).
    private let adminDigests: [(name: String, digest: [UInt8])]
    /// Tolerated clock difference for `exp` and `nbf` (`SHEETD_JWT_LEEWAY`).
    public let clockSkewSeconds: Int64
    /// Longer tokens are refused before any work (admin and user tokens alike).
    public static let maximumTokenBytes = 4096
    /// A JOSE header longer than this (base64url) is refused before it is decoded: with several keys
    /// the header is read before the signature (for its `kid`), so this bounds that work.
    static let maximumHeaderBytes = 1024
    /// Header members that would let a token pick or carry its own key, and `crit` (no extension is implemented).
    static let forbiddenHeaderMembers = ["jku", "x5u", "jwk", "x5c", "crit"]
    /// Tokens that already verified (see `VerifiedTokenCache`); shared by copies of this verifier.
    let verified = VerifiedTokenCache()

    /// `adminTokens` are named admin tokens (`SHEETD_ADMIN_TOKENS_FILE`) beside `adminToken`, whose
    /// name is `admin`; an empty token is no token. User tokens are HS256 under `jwtSecret` alone.
    public init(jwtSecret: String, adminToken: String, adminTokens: [AdminToken] = [], clockSkewSeconds: Int = 60) {
        let ring = try! KeyRing(JSONWebKeySet(keys: [.hs256(secret: Array(jwtSecret.utf8), keyID: nil)]), source: "SHEETD_JWT_SECRET")
        self.init(keys: ring, jwtSecret: jwtSecret, adminToken: adminToken, adminTokens: adminTokens, clockSkewSeconds: clockSkewSeconds)
    }

    /// A verifier over `keys` (which may hold the single secret, shared secrets by `kid` and public
    /// keys); `jwtSecret` is only for issuing HS256 tokens.
    public init(
        keys: KeyRing, claimRules: TokenClaimRules = TokenClaimRules(), jwtSecret: String? = nil, adminToken: String, adminTokens: [AdminToken] = [],
        clockSkewSeconds: Int = 60
    ) {
        self.keys = keys
        self.claimRules = claimRules
        self.secret = jwtSecret.map { Array($0.utf8) }
        // Compare digests so neither the length nor the content of an admin token leaks through timing.
        let all = (adminToken.isEmpty ? [] : [AdminToken(name: "admin", token: adminToken)]) + adminTokens.filter { $0.token != "" }
        self.adminDigests = all.map { ($0.name, $0.digest) }
        self.clockSkewSeconds = Int64(clockSkewSeconds)
    }

    /// The name of the admin an `Authorization` header value carries: an admin token's name, or the
    /// subject of a user token carrying the admin claim; nil for anything else. Names, never
    /// tokens, go into revisions and logs.
    public func adminName(authorization: String?) -> String? {
        guard let authorization, authorization.prefix(7).lowercased() == "bearer " else { return nil }
        let token = authorization.dropFirst(7).trimmed()
        if let name = adminName(token: token) { return name }
        guard claimRules.adminClaim != nil, let entry = try? verifiedEntry(token: token, now: Int64(time(nil))), entry.isAdmin else { return nil }
        return entry.subject
    }

    /// Every digest is compared (no early exit), so the time does not tell which token matched.
    private func adminName(token: String) -> String? {
        guard !token.isEmpty else { return nil }
        let digest = SHA256.hash(Array(token.utf8))
        var name: String?
        for admin in adminDigests where constantTimeEquals(digest, admin.digest) && name == nil { name = admin.name }
        return name
    }

    /// The principal for the raw bytes of an `Authorization` header value: a cached user token is
    /// found without building any String (the hot path); everything else goes through the String
    /// overload, with the same outcome.
    public func principal(authorizationBytes: Span<UInt8>?, now: Int64) throws(TokenError) -> Principal {
        guard let bytes = authorizationBytes else { throw .missing }
        if let token = BearerFastPath.tokenRange(bytes), token.count <= Self.maximumTokenBytes,
            let entry = verified.lookup(bytes.extracting(token)), entry.epoch == keys.epoch
        {
            return try entry.principal(now: now, skew: clockSkewSeconds)
        }
        return try principal(authorization: bytes.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }, now: now)
    }

    /// The principal for an `Authorization` header value.
    public func principal(authorization: String?, now: Int64) throws(TokenError) -> Principal {
        try verified(authorization: authorization, now: now).principal
    }

    /// Until when (Unix seconds) the credentials of an `Authorization` header value stay valid: a
    /// user token's `exp` plus the leeway (an admin by claim too); nil for an admin token, which does not expire.
    public func validUntil(authorization: String?, now: Int64) throws(TokenError) -> Int64? {
        guard let exp = try verified(authorization: authorization, now: now).exp else { return nil }
        let (limit, overflow) = exp.addingReportingOverflow(clockSkewSeconds)
        return overflow ? Int64.max : limit
    }

    /// The principal of an `Authorization` header value, with its token's `exp` (nil: an admin token).
    private func verified(authorization: String?, now: Int64) throws(TokenError) -> (principal: Principal, exp: Int64?) {
        guard let authorization, !authorization.isEmpty else { throw .missing }
        let token: String
        if let fast = BearerFastPath.token(authorization) {
            token = fast
        } else {
            let scheme = authorization.prefix(7)
            guard scheme.count == 7, scheme.lowercased() == "bearer " else { throw .notBearer }
            token = authorization.dropFirst(7).trimmed()
        }
        guard !token.isEmpty else { throw .notBearer }
        guard token.utf8.count <= Self.maximumTokenBytes else { throw .tooLong }
        // Admin tokens are never cached, so a cache hit is always a JWT that verified.
        if let entry = verified.lookup(token), entry.epoch == keys.epoch {
            return (try entry.principal(now: now, skew: clockSkewSeconds), entry.exp)
        }
        if adminName(token: token) != nil { return (.admin, nil) }
        let entry = try verifyUserToken(token, now: now, cache: true)
        return (try entry.principal(now: now, skew: clockSkewSeconds), entry.exp)
    }

    /// A JWT's verified entry, from the cache or verified now (not stored).
    private func verifiedEntry(token: String, now: Int64) throws(TokenError) -> VerifiedTokenCache.Entry {
        if let entry = verified.lookup(token), entry.epoch == keys.epoch {
            _ = try entry.check(now: now, skew: clockSkewSeconds)
            return entry
        }
        return try verifyUserToken(token, now: now, cache: false)
    }

    /// Verifies a user token and returns its subject.
    public func verifyUserToken(_ token: String, now: Int64) throws(TokenError) -> String {
        try verifyUserToken(token, now: now, cache: false).subject
    }

    /// One verification, bounded whatever the token: at most a 1 KiB header decoded and parsed (only
    /// when several keys are configured, to find the token's `kid`), then exactly one HMAC or one
    /// public-key verification with the key that `kid` names; nothing else in the token is decoded
    /// before its signature verifies.
    private func verifyUserToken(_ token: String, now: Int64, cache: Bool) throws(TokenError) -> VerifiedTokenCache.Entry {
        guard token.utf8.count <= Self.maximumTokenBytes else { throw .tooLong }
        // Exactly three parts, the dots found in the UTF-8 view (a split by Character would walk
        // grapheme breaks over the whole token on every first request of a token).
        let utf8 = token.utf8
        let dot = UInt8(ascii: ".")
        guard let dot1 = utf8.firstIndex(of: dot),
            let dot2 = utf8[utf8.index(after: dot1)...].firstIndex(of: dot),
            !utf8[utf8.index(after: dot2)...].contains(dot)
        else { throw .malformed }
        let parts = [token[..<dot1], token[utf8.index(after: dot1)..<dot2], token[utf8.index(after: dot2)...]]
        let keySet = keys.snapshot
        let key: VerificationKey
        var headerChecked = false
        if keySet.byID.isEmpty, let only = keySet.withoutID {
            // One key: the signature is checked before anything in the token is decoded.
            key = only
        } else {
            // Several keys: the header (at most 1 KiB) names the key; it is checked before the signature.
            guard parts[0].utf8.count <= Self.maximumHeaderBytes else { throw .malformed }
            let header = try Self.header(parts[0])
            key = try self.key(for: header, in: keySet)
            try Self.check(header, for: key)
            headerChecked = true
        }
        guard let signature = Base64URL.decode(parts[2]) else { throw .malformed }
        // The signature is checked over the raw `header.payload` bytes before the payload is
        // decoded or parsed: an unauthenticated client gets no further than one verification.
        guard key.verifies(signature, over: token[..<dot2].utf8) else { throw .badSignature }
        if !headerChecked { try Self.check(try Self.header(parts[0]), for: key) }
        guard let payload = Base64URL.decode(parts[1]) else { throw .malformed }
        let entry = try claims(payload, epoch: keySet.epoch)
        _ = try entry.check(now: now, skew: clockSkewSeconds)
        // Only now is the token known to verify (the time checks are redone on every hit).
        if cache { verified.insert(token, entry) }
        return entry
    }

    /// The JOSE header, a JSON object.
    private static func header(_ part: Substring) throws(TokenError) -> [String: JSONValue] {
        guard let bytes = Base64URL.decode(part), let header = object(bytes) else { throw .malformed }
        return header
    }

    /// The key decides the algorithm, never the token: "none" and every other are refused, and so
    /// are headers that would carry or point to a key.
    private static func check(_ header: [String: JSONValue], for key: VerificationKey) throws(TokenError) {
        guard case .string(key.algorithm)? = header["alg"] else { throw .unsupportedAlgorithm }
        if let typ = header["typ"] { guard case .string(let t) = typ, t.uppercased() == "JWT" else { throw .malformed } }
        if let name = forbiddenHeaderMembers.first(where: { header[$0] != nil }) { throw .forbiddenHeader(name) }
    }

    /// The key the header's `kid` names (or the one key without `kid`, when the header has none).
    private func key(for header: [String: JSONValue], in keySet: KeyRing.Snapshot) throws(TokenError) -> VerificationKey {
        guard let rawKeyID = header["kid"] else {
            guard let key = keySet.withoutID else { throw .missingKeyID }
            return key
        }
        guard case .string(let kid) = rawKeyID else { throw .malformed }
        if let key = keySet.byID[kid] { return key }
        if let reason = keySet.refused[kid] { throw .refusedKey(kid, reason: reason) }
        // A token with a kid may still fit the single shared secret when it is the only key (as before kids were read).
        if keySet.byID.isEmpty, let only = keySet.withoutID { return only }
        keys.reportUnknownKeyID(kid)
        throw .unknownKey(kid)
    }

    /// The verified token's claims (SheetWire reads them against the rules), as a cache entry.
    private func claims(_ payload: [UInt8], epoch: Int) throws(TokenError) -> VerifiedTokenCache.Entry {
        let claims: VerifiedTokenClaims
        do {
            claims = try claimRules.claims(ofPayload: payload)
        } catch {
            switch error {
            case .malformed: throw .malformed
            case .invalid(let why): throw .invalidClaims(why)
            }
        }
        return VerifiedTokenCache.Entry(subject: claims.subject, exp: claims.expires, nbf: claims.notBefore, isAdmin: claims.isAdmin, epoch: epoch)
    }

    /// A signed HS256 user token for `sub`, valid for `ttl` seconds from `now` (the single secret).
    public func issueUserToken(sub: String, now: Int64, ttl: Int64) -> String {
        let claims = IssuedTokenClaims(subject: sub, issuedAt: now, expires: now + ttl)
        return TokenSigner.token(claims: claims, signer: .secret(secret ?? []), keyID: nil)
    }

    private static func object(_ bytes: [UInt8]) -> [String: JSONValue]? {
        (try? JSONReader.read(bytes))?.objectMembers
    }

    /// `now` is past `exp` by more than `leeway`; never overflows (a sum that would is no expiry).
    static func isExpired(exp: Int64, now: Int64, leeway: Int64) -> Bool {
        let (limit, overflow) = exp.addingReportingOverflow(leeway)
        return !overflow && now > limit
    }

    /// `now` is before `nbf` by more than `leeway`; never overflows.
    static func isNotYetValid(nbf: Int64, now: Int64, leeway: Int64) -> Bool {
        let (earliest, overflow) = nbf.subtractingReportingOverflow(leeway)
        return !overflow && now < earliest
    }
}

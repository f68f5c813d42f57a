import Crypto
import JSONKit
import SheetPolicy
import SheetWire

/// Who is calling: the admin, or one user proven by an HS256 JWT.
public enum Principal: Sendable, Equatable {
    case admin
    case user(String)
}

/// Why a bearer token was refused; every case answers 401.
public enum TokenError: Error, Equatable, Sendable {
    case missing, notBearer, tooLong, malformed, unsupportedAlgorithm, badSignature, expired, notYetValid
    case invalidClaims(String)

    var detail: String {
        switch self {
        case .missing: "an Authorization: Bearer token is required"
        case .notBearer: "the Authorization header must look like: Authorization: Bearer <token>"
        case .tooLong: "the bearer token is longer than \(TokenVerifier.maximumTokenBytes) bytes"
        case .malformed: "the bearer token is not a well-formed JWT (three base64url parts: header.payload.signature)"
        case .unsupportedAlgorithm: "only HS256 tokens are accepted"
        case .badSignature: "the token's signature does not verify"
        case .expired: "the token has expired"
        case .notYetValid: "the token is not valid yet (nbf)"
        case .invalidClaims(let why): "the token's claims are invalid: \(why)"
        }
    }
}

/// A named admin token (`SHEETD_ADMIN_TOKENS_FILE`: one `name token` a line).
public struct AdminToken: Sendable, Equatable {
    public var name: String
    public var token: String
    public init(name: String, token: String) { self.name = name; self.token = token }
}

/// Verifies admin tokens and HS256 user tokens, and issues user tokens (`sheetd token`).
public struct TokenVerifier: Sendable {
    private let secret: [UInt8]
    /// Every admin token's digest with its name (the single `SHEETD_ADMIN_TOKEN` is `admin`).
    private let adminDigests: [(name: String, digest: [UInt8])]
    /// Tolerated clock difference for `exp` and `nbf` (`SHEETD_JWT_LEEWAY`).
    public let clockSkewSeconds: Int64
    /// Longer tokens are refused before any work (admin and user tokens alike).
    public static let maximumTokenBytes = 4096
    /// `exp`, `nbf` and `iat` outside 1970 to 9999 are refused: a NumericDate out there is a forgery or a bug.
    static let numericDateRange: ClosedRange<Int64> = 0...253_402_300_799
    /// Tokens that already verified (see `VerifiedTokenCache`); shared by copies of this verifier.
    let verified = VerifiedTokenCache()

    /// `adminTokens` are named admin tokens (`SHEETD_ADMIN_TOKENS_FILE`) beside `adminToken`, whose
    /// name is `admin`; an empty token is no token.
    public init(jwtSecret: String, adminToken: String, adminTokens: [AdminToken] = [], clockSkewSeconds: Int = 60) {
        self.secret = Array(jwtSecret.utf8)
        // Compare digests so neither the length nor the content of an admin token leaks through timing.
        let all = (adminToken.isEmpty ? [] : [AdminToken(name: "admin", token: adminToken)]) + adminTokens.filter { !$0.token.isEmpty }
        self.adminDigests = all.map { ($0.name, SHA256.hash(Array($0.token.utf8))) }
        self.clockSkewSeconds = Int64(clockSkewSeconds)
    }

    /// The name of the admin token an `Authorization` header value carries; nil for anything else.
    /// Names, never tokens, go into revisions and logs.
    public func adminName(authorization: String?) -> String? {
        guard let authorization, authorization.prefix(7).lowercased() == "bearer " else { return nil }
        return adminName(token: authorization.dropFirst(7).trimmed())
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
            let entry = verified.lookup(bytes.extracting(token))
        {
            return .user(try entry.check(now: now, skew: clockSkewSeconds))
        }
        return try principal(authorization: bytes.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }, now: now)
    }

    /// The principal for an `Authorization` header value.
    public func principal(authorization: String?, now: Int64) throws(TokenError) -> Principal {
        try verified(authorization: authorization, now: now).principal
    }

    /// Until when (Unix seconds) the credentials of an `Authorization` header value stay valid: a
    /// user token's `exp` plus the leeway; nil for the admin token, which does not expire.
    public func validUntil(authorization: String?, now: Int64) throws(TokenError) -> Int64? {
        guard let exp = try verified(authorization: authorization, now: now).exp else { return nil }
        let (limit, overflow) = exp.addingReportingOverflow(clockSkewSeconds)
        return overflow ? Int64.max : limit
    }

    /// The principal of an `Authorization` header value, with its token's `exp` (nil: the admin).
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
        // The admin token is never cached, so a cache hit is always a user token that verified.
        if let entry = verified.lookup(token) { return (.user(try entry.check(now: now, skew: clockSkewSeconds)), entry.exp) }
        if adminName(token: token) != nil { return (.admin, nil) }
        let entry = try verifyUserToken(token, now: now, cache: true)
        return (.user(entry.subject), entry.exp)
    }

    /// Verifies an HS256 JWT and returns its subject.
    public func verifyUserToken(_ token: String, now: Int64) throws(TokenError) -> String {
        try verifyUserToken(token, now: now, cache: false).subject
    }

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
        guard let signature = Base64URL.decode(parts[2]) else { throw .malformed }
        // The signature is checked over the raw `header.payload` bytes before anything in them is
        // decoded or parsed: an unauthenticated client gets no further than one HMAC.
        let signingInput = utf8[..<dot2]
        let expected = HMACSHA256.authenticationCode(for: signingInput, key: secret)
        guard constantTimeEquals(signature, expected) else { throw .badSignature }

        guard let headerBytes = Base64URL.decode(parts[0]),
            let payloadBytes = Base64URL.decode(parts[1]),
            let header = Self.object(headerBytes),
            let payload = Self.object(payloadBytes)
        else { throw .malformed }
        // The algorithm is fixed by the server, never chosen by the token: "none" and every other are refused.
        guard case .string("HS256")? = header["alg"] else { throw .unsupportedAlgorithm }
        if let typ = header["typ"] { guard case .string(let t) = typ, t.uppercased() == "JWT" else { throw .malformed } }

        guard case .string(let sub)? = payload["sub"], Identifier.isValid(sub) else {
            throw .invalidClaims("sub must be a user id (1-128 of A-Z a-z 0-9 . _ : @ -)")
        }
        guard let rawExp = payload["exp"] else { throw .invalidClaims("exp (a NumericDate) is required") }
        let exp = try Self.numericDate(rawExp, "exp")
        if let rawIat = payload["iat"] { _ = try Self.numericDate(rawIat, "iat") }
        let nbf = try payload["nbf"].map { v throws(TokenError) in try Self.numericDate(v, "nbf") }
        let entry = VerifiedTokenCache.Entry(subject: sub, exp: exp, nbf: nbf)
        _ = try entry.check(now: now, skew: clockSkewSeconds)
        // Only now is the token known to verify (the time checks are redone on every hit).
        if cache { verified.insert(token, entry) }
        return entry
    }

    /// A signed user token for `sub`, valid for `ttl` seconds from `now`.
    public func issueUserToken(sub: String, now: Int64, ttl: Int64) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let payload = Base64URL.encode(IssuedTokenClaims(subject: sub, issuedAt: now, expires: now + ttl).jsonBytes)
        let signingInput = Array("\(header).\(payload)".utf8)
        let signature = Base64URL.encode(HMACSHA256.authenticationCode(for: signingInput, key: secret))
        return "\(header).\(payload).\(signature)"
    }

    private static func object(_ bytes: [UInt8]) -> [String: JSONValue]? {
        (try? JSONReader.read(bytes))?.objectMembers
    }

    /// A JSON NumericDate from 1970 to 9999: an integer or a finite number of seconds (fractions are truncated).
    private static func numericDate(_ value: JSONValue, _ name: String) throws(TokenError) -> Int64 {
        let seconds: Int64?
        switch value {
        case .integer(let i): seconds = i
        case .number(let d) where d.isFinite && abs(d) < 1e15: seconds = Int64(d)
        default: seconds = nil
        }
        guard let seconds, numericDateRange.contains(seconds) else {
            throw .invalidClaims(
                "\(name) must be a NumericDate from \(numericDateRange.lowerBound) to \(numericDateRange.upperBound) (seconds since 1970)")
        }
        return seconds
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

import JSONKit

// The JWT claims of user tokens, both ways: the claims sheetd issues (encoded here and signed by the
// service's TokenSigner) and the claims of a token whose signature verified (read here against the
// server's rules; the verifier only checks signatures and keys).

/// The claims of a user token sheetd issues (`sheetd token`, development tokens): the JWT payload.
public struct IssuedTokenClaims: Sendable, Equatable {
    public let subject: String
    public let issuedAt: Int64
    public let expires: Int64
    /// `iss`, when the server requires one (`SHEETD_JWT_ISSUER`).
    public var issuer: String?
    /// `aud`, when the server requires one (`SHEETD_JWT_AUDIENCE`).
    public var audience: String?
    /// The claim that names the user (`SHEETD_JWT_SUBJECT_CLAIM`, `sub` by default).
    public var subjectClaim = "sub"

    public init(subject: String, issuedAt: Int64, expires: Int64, issuer: String? = nil, audience: String? = nil, subjectClaim: String = "sub") {
        self.subject = subject
        self.issuedAt = issuedAt
        self.expires = expires
        self.issuer = issuer
        self.audience = audience
        self.subjectClaim = subjectClaim
    }

    /// `{"sub", "iat", "exp"}` (RFC 7519 registered claims; `iss` and `aud` when set, the subject under
    /// its configured claim), the bytes that are base64url-encoded and signed.
    public var jsonBytes: [UInt8] {
        var w = JSONWriter()
        w.object { o in
            if let issuer { o.member("iss", issuer) }
            if let audience { o.member("aud", audience) }
            o.member(subjectClaim, subject)
            o.member("iat", Int(issuedAt))
            o.member("exp", Int(expires))
        }
        return w.bytes
    }
}

/// What a user token's claims must say, beyond a valid signature and time (`SHEETD_JWT_ISSUER`,
/// `SHEETD_JWT_AUDIENCE`, `SHEETD_JWT_SUBJECT_CLAIM`, `SHEETD_ADMIN_CLAIM`).
public struct TokenClaimRules: Sendable, Equatable {
    /// `iss` must be exactly this, when set.
    public var issuer: String?
    /// `aud` must be this string or an array containing it, when set.
    public var audience: String?
    /// The claim that names the user (`sub` by default).
    public var subjectClaim = "sub"
    /// A token whose claim `name` is `value` (or an array containing it) is the admin's.
    public var adminClaim: (name: String, value: String)? {
        get { adminClaimName.map { ($0, adminClaimValue ?? "") } }
        set {
            adminClaimName = newValue?.name
            adminClaimValue = newValue?.value
        }
    }
    private var adminClaimName: String?
    private var adminClaimValue: String?

    public init(issuer: String? = nil, audience: String? = nil, subjectClaim: String = "sub", adminClaim: (name: String, value: String)? = nil) {
        self.issuer = issuer
        self.audience = audience
        self.subjectClaim = subjectClaim
        self.adminClaim = adminClaim
    }
}

/// The claims of a user token whose signature verified, read against `TokenClaimRules`.
public struct VerifiedTokenClaims: Sendable, Equatable {
    /// The user id (the rules' subject claim).
    public let subject: String
    /// `exp`, required.
    public let expires: Int64
    /// `nbf`, when present.
    public let notBefore: Int64?
    /// Whether the rules' admin claim names the admin.
    public let isAdmin: Bool
}

/// Why a verified token's payload is refused.
public enum TokenClaimsError: Error, Equatable, Sendable {
    /// Not a JSON object.
    case malformed
    /// A claim breaks a rule (the reason).
    case invalid(String)
}

extension TokenClaimRules {
    /// `exp`, `nbf` and `iat` outside 1970 to 9999 are refused: a NumericDate out there is a forgery or a bug.
    public static let numericDateRange: ClosedRange<Int64> = 0...253_402_300_799

    /// The claims of a verified token's payload (the decoded JSON bytes), checked against the rules:
    /// issuer, audience, the subject is a user id, `exp` required, NumericDates in range, the admin claim.
    public func claims(ofPayload bytes: [UInt8]) throws(TokenClaimsError) -> VerifiedTokenClaims {
        guard let payload = (try? JSONReader.read(bytes))?.objectMembers else { throw .malformed }
        if let issuer {
            guard case .string(issuer)? = payload["iss"] else { throw .invalid("iss is not the configured issuer") }
        }
        if let audience {
            switch payload["aud"] {
            case .string(audience)?: break
            case .array(let list)? where list.contains(.string(audience)): break
            default: throw .invalid("aud does not name the configured audience")
            }
        }
        guard case .string(let sub)? = payload[subjectClaim], Identifier.isValid(sub) else {
            throw .invalid("\(subjectClaim) must be a user id (1-128 of A-Z a-z 0-9 . _ : @ -)")
        }
        guard let rawExp = payload["exp"] else { throw .invalid("exp (a NumericDate) is required") }
        let exp = try Self.numericDate(rawExp, "exp")
        if let rawIat = payload["iat"] { _ = try Self.numericDate(rawIat, "iat") }
        let nbf = try payload["nbf"].map { v throws(TokenClaimsError) in try Self.numericDate(v, "nbf") }
        var isAdmin = false
        if let (name, value) = adminClaim {
            switch payload[name] {
            case .string(value)?: isAdmin = true
            case .array(let list)?: isAdmin = list.contains(.string(value))
            default: break
            }
        }
        return VerifiedTokenClaims(subject: sub, expires: exp, notBefore: nbf, isAdmin: isAdmin)
    }

    /// A JSON NumericDate from 1970 to 9999: an integer or a finite number of seconds (fractions are truncated).
    private static func numericDate(_ value: JSONValue, _ name: String) throws(TokenClaimsError) -> Int64 {
        let seconds: Int64?
        switch value {
        case .integer(let i): seconds = i
        case .number(let d) where d.isFinite && abs(d) < 1e15: seconds = Int64(d)
        default: seconds = nil
        }
        guard let seconds, numericDateRange.contains(seconds) else {
            throw .invalid("\(name) must be a NumericDate from \(numericDateRange.lowerBound) to \(numericDateRange.upperBound) (seconds since 1970)")
        }
        return seconds
    }
}

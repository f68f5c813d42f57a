import JSONKit

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

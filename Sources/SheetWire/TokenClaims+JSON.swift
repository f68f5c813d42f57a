import JSONKit

/// The claims of a user token sheetd issues (`sheetd token`, development tokens): the JWT payload.
public struct IssuedTokenClaims: Sendable, Equatable {
    public let subject: String
    public let issuedAt: Int64
    public let expires: Int64

    public init(subject: String, issuedAt: Int64, expires: Int64) {
        self.subject = subject
        self.issuedAt = issuedAt
        self.expires = expires
    }

    /// `{"sub", "iat", "exp"}` (RFC 7519 registered claims), the bytes that are base64url-encoded and signed.
    public var jsonBytes: [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.member("sub", subject)
            o.member("iat", Int(issuedAt))
            o.member("exp", Int(expires))
        }
        return w.bytes
    }
}

// RFC 9457 problem details (openapi.yaml `Problem`, `InvalidParam`) and the ops answers.

/// An `application/problem+json` answer (RFC 9457; openapi.yaml `Problem`, `ProblemBadRequest`,
/// `ProblemLimitExceeded`: the members of every problem type sheetd answers).
public struct Problem: Codable, Sendable, Equatable, Hashable {
    /// `urn:sheetd:problem:<slug>`.
    public var type: String
    /// A short summary of the kind of problem.
    public var title: String
    /// The HTTP status.
    public var status: Int
    /// What went wrong in this case.
    public var detail: String
    /// For a 400 about fields: each field at fault (`invalid-params`).
    public var invalidParams: [InvalidParam]?
    /// For a 409 `limit-exceeded`: which limit the event would exceed (`containers-per-user`,
    /// `stack-depth`, `content-heights-per-user`). Not retried: retrying cannot fix it.
    public var limit: String?
    /// For a 409 `limit-exceeded`: the limit's value on this server.
    public var maximum: Int?

    /// A value with every member.
    public init(
        type: String, title: String, status: Int, detail: String, invalidParams: [InvalidParam]? = nil, limit: String? = nil,
        maximum: Int? = nil
    ) {
        self.type = type
        self.title = title
        self.status = status
        self.detail = detail
        self.invalidParams = invalidParams
        self.limit = limit
        self.maximum = maximum
    }

    private enum CodingKeys: String, CodingKey {
        case type
        case title
        case status
        case detail
        case invalidParams = "invalid-params"
        case limit
        case maximum
    }
}

/// One field at fault in a 400 (openapi.yaml `InvalidParam`).
public struct InvalidParam: Codable, Sendable, Equatable, Hashable {
    /// The member, path parameter or query parameter.
    public var name: String
    /// Why.
    public var reason: String

    /// A value with every member.
    public init(name: String, reason: String) {
        self.name = name
        self.reason = reason
    }
}

/// The liveness answer (openapi.yaml `Health`).
public struct Health: Codable, Sendable, Equatable, Hashable {
    /// `ok`.
    public var status: String

    /// A value with every member.
    public init(status: String) {
        self.status = status
    }
}

/// The readiness answer (openapi.yaml `Readiness`).
public struct Readiness: Codable, Sendable, Equatable, Hashable {
    /// `ready`.
    public var status: String

    /// A value with every member.
    public init(status: String) {
        self.status = status
    }
}

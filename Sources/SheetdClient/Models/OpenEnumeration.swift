/// A string enumeration of the API that stays open to values a newer server adds.
///
/// Every enumeration in sheetd's API is a struct over its raw string rather than a Swift `enum`, so a
/// value this client does not know yet (say a new `reason`) decodes as itself instead of failing the
/// whole response. Known values are static constants (`SheetKind.cards`); ``isKnown`` tells whether a
/// value is one of them. Switch over them with a `default:` branch.
public protocol OpenEnumeration: RawRepresentable, Codable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
where RawValue == String {
    /// Wraps any raw value, known or not.
    init(rawValue: String)
    /// The values this client was built with, in the API's order.
    static var knownValues: [Self] { get }
}

extension OpenEnumeration {
    /// Whether this value is one the client was built with (false for a value a newer server added).
    public var isKnown: Bool { Self.knownValues.contains(self) }

    /// The raw value.
    public var description: String { rawValue }

    /// A value from a string literal (`let kind: SheetKind = "cards"`).
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// Decodes any string, known or not.
    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    /// Encodes the raw string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

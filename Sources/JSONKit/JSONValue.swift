/// A JSON value as `JSONReader` reads it (RFC 8259).
///
/// Numbers keep what their decimal text says exactly: an integer that fits 64 bits, an integer
/// outside that range, or a number that is not an integer. So `2.9999999999999999999` is never
/// taken for 3, and `1e20` is known to be an integer (too large) rather than a fraction.
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number whose text denotes an integer in `Int64`'s range (`7`, `-0`, `1.0`, `1e2`).
    case integer(Int64)
    /// A number whose text denotes an integer outside `Int64`'s range; the nearest double (maybe infinite).
    case largeInteger(Double)
    /// A number whose text does not denote an integer; the nearest double (`1e-400` reads as 0).
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The members when this is an object.
    public var objectMembers: [String: JSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }
}

import Concurrency
import FoundationEssentials

/// A parsed JSON value. Foundation's `JSONDecoder` does the parsing (UTF-8, escapes, numbers, depth
/// limit); this type only names what it found, so validation can say exactly what is wrong.
///
/// The decoder offers no way to ask a value's type: each wrong guess is a thrown `DecodingError`
/// whose message is formatted (measured alone: a two-string body took 18 µs with the old guessing
/// order, 8 µs with strings first). So the
/// guesses go in order of likelihood (strings and integers first), and a caller that knows its
/// members' types passes them as `Kind` hints, which are tried first: a well-formed request body
/// parses without a single thrown error. Hints never change the result, only its cost.
enum JSONNode: Decodable, Sendable, Equatable {
    case null
    case bool(Bool)
    /// A number with no fraction that fits in 64 bits.
    case integer(Int64)
    /// Any other finite number.
    case number(Double)
    case string(String)
    case array([JSONNode])
    case object([String: JSONNode])

    /// The type a member is expected to have (a hint for `parseObject`).
    enum Kind: Sendable {
        case string, integer, number, bool
    }

    /// The expected member types of one kind of body. Made once (a `static let`): a thread's decoder
    /// keeps the set it used last, so the hot path does not build the decoder's `userInfo` per request.
    final class Hints: Sendable {
        let kinds: [String: Kind]
        init(_ kinds: [String: Kind]) { self.kinds = kinds }
        static let none = Hints([:])
    }

    init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer()
        if let s = try? value.decode(String.self) {
            self = .string(s)
        } else if let node = Self.numberOrScalar(value) {
            self = node
        } else if let object = try? decoder.container(keyedBy: MemberName.self) {
            self = .object(try Self.members(of: object, hints: nil))
        } else {
            var array = try decoder.unkeyedContainer()
            var elements: [JSONNode] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONNode.self)) }
            self = .array(elements)
        }
    }

    /// Integers before fractions (1.0 and 1e2 are integers), then null and booleans.
    private static func numberOrScalar(_ value: any SingleValueDecodingContainer) -> JSONNode? {
        if let i = try? value.decode(Int64.self) { return .integer(i) }
        if value.decodeNil() { return .null }
        if let b = try? value.decode(Bool.self) { return .bool(b) }
        if let d = try? value.decode(Double.self) { return .number(d) }
        return nil
    }

    private static func members(of object: KeyedDecodingContainer<MemberName>, hints: [String: Kind]?) throws -> [String: JSONNode] {
        var members: [String: JSONNode] = [:]
        members.reserveCapacity(object.allKeys.count)
        for key in object.allKeys {
            if let kind = hints?[key.stringValue], let node = hinted(kind, object, key) {
                members[key.stringValue] = node
            } else {
                members[key.stringValue] = try object.decode(JSONNode.self, forKey: key)
            }
        }
        return members
    }

    /// The member decoded as `kind`, or nil when it is something else (then the general path decides).
    private static func hinted(_ kind: Kind, _ object: KeyedDecodingContainer<MemberName>, _ key: MemberName) -> JSONNode? {
        switch kind {
        case .string: return (try? object.decode(String.self, forKey: key)).map(JSONNode.string)
        case .integer: return (try? object.decode(Int64.self, forKey: key)).map(JSONNode.integer)
        case .bool: return (try? object.decode(Bool.self, forKey: key)).map(JSONNode.bool)
        case .number:
            // The same order as the general path: an integral number is an `.integer`.
            if let i = try? object.decode(Int64.self, forKey: key) { return .integer(i) }
            return nil
        }
    }

    /// Parses one JSON document; throws on anything that is not JSON.
    static func parse(_ bytes: [UInt8]) throws -> JSONNode {
        try decoders.value.decoder.decode(JSONNode.self, from: Data(bytes))
    }

    /// Parses one JSON document that should be an object, trying `hints` first for its top-level
    /// members. Nil when the document is JSON but not an object.
    static func parseObject(_ bytes: [UInt8], hints: Hints) throws -> [String: JSONNode]? {
        let slot = decoders.value
        if slot.hints !== hints {
            slot.decoder.userInfo = [TopLevelObject.hintsKey: hints]
            slot.hints = hints
        }
        return try slot.decoder.decode(TopLevelObject.self, from: Data(bytes)).members
    }

    /// A top-level value that is read with the member hints from the decoder's `userInfo`.
    private struct TopLevelObject: Decodable {
        static let hintsKey = CodingUserInfoKey(rawValue: "sheetd.memberHints")!
        let members: [String: JSONNode]?

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                members = nil
            } else if let object = try? decoder.container(keyedBy: MemberName.self) {
                members = try JSONNode.members(of: object, hints: (decoder.userInfo[Self.hintsKey] as? Hints)?.kinds)
            } else {
                _ = try JSONNode(from: decoder)  // any other JSON value: not an object, but valid
                members = nil
            }
        }
    }

    /// One decoder per thread (making one costs about as much as parsing a small body), with the
    /// hints its `userInfo` holds. Only its own thread touches it.
    private final class ThreadDecoder {
        let decoder = JSONDecoder()
        var hints: Hints?
    }

    private static let decoders = ThreadLocal { ThreadDecoder() }

    var objectMembers: [String: JSONNode]? {
        if case .object(let members) = self { return members }
        return nil
    }

    private struct MemberName: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

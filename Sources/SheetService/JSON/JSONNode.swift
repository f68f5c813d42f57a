import FoundationEssentials

/// A parsed JSON value. Foundation's `JSONDecoder` does the parsing (UTF-8, escapes, numbers, depth
/// limit); this type only names what it found, so validation can say exactly what is wrong.
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

    init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: MemberName.self) {
            var members: [String: JSONNode] = [:]
            members.reserveCapacity(object.allKeys.count)
            for key in object.allKeys { members[key.stringValue] = try object.decode(JSONNode.self, forKey: key) }
            self = .object(members)
        } else if var array = try? decoder.unkeyedContainer() {
            var elements: [JSONNode] = []
            while !array.isAtEnd { elements.append(try array.decode(JSONNode.self)) }
            self = .array(elements)
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let b = try? value.decode(Bool.self) {
                self = .bool(b)
            } else if let i = try? value.decode(Int64.self) {
                self = .integer(i)
            } else if let d = try? value.decode(Double.self) {
                self = .number(d)
            } else {
                self = .string(try value.decode(String.self))
            }
        }
    }

    /// Parses one JSON document; throws on anything that is not JSON.
    static func parse(_ bytes: [UInt8]) throws -> JSONNode {
        try JSONDecoder().decode(JSONNode.self, from: Data(bytes))
    }

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

public import JSONKit

/// What is wrong with a request body (or a stored or configured document): a malformed document
/// (`detail` alone), or members that are invalid, each named (`invalidParams`, RFC 9457's
/// invalid-params; `detail` then sums them up). The service answers it as a 400 problem.
public struct WireError: Error, Sendable {
    /// What is wrong, in one sentence.
    public let detail: String
    /// Each invalid member by its path (`experiment.arms[0].id`) and why; empty for a malformed document.
    public let invalidParams: [(name: String, reason: String)]

    /// A document that cannot be read at all.
    public static func malformed(_ detail: String) -> WireError {
        WireError(detail: detail, invalidParams: [])
    }

    /// Invalid members; `detail` names the first three.
    public static func invalid(_ params: [(name: String, reason: String)]) -> WireError {
        let summary = params.prefix(3).map { "\($0.name) \($0.reason)" }.joined(separator: "; ")
        return WireError(detail: params.count > 3 ? summary + "; and \(params.count - 3) more" : summary, invalidParams: params)
    }
}

/// Request bodies (and stored or configured documents) as JSON objects, read by `JSONReader`.
public enum JSONBody {
    /// Members one object of a request body may have: no API object has more than a few dozen, and a
    /// body of thousands of unknown members is refused after this many instead of parsed whole.
    public static let maximumMembers = 1024

    /// Parses a body into an object, or an error that says what is wrong with it and where.
    /// `subject` names the document in messages.
    public static func object(_ body: [UInt8], subject: String = "the request body") throws(WireError) -> [String: JSONValue] {
        guard !body.isEmpty else { throw .malformed("\(subject) is empty; a JSON object is expected") }
        if let encoding = otherUnicodeEncoding(body) {
            throw .malformed("\(subject) must be UTF-8 without a byte order mark (it looks like \(encoding))")
        }
        let value: JSONValue
        do {
            value = try JSONReader(maximumMembers: maximumMembers).read(body)
        } catch {
            switch error.reason {
            case .duplicateMember(let name): throw .invalid([(name, "appears more than once in the same object")])
            case .tooDeep, .numberTooLong, .tooManyMembers: throw .malformed("\(subject) is over a limit: \(error)")
            default: throw .malformed("\(subject) is not valid JSON: \(error)")
            }
        }
        guard case .object(let object) = value else {
            throw .malformed("\(subject) must be a JSON object")
        }
        return object
    }

    /// UTF-16 and UTF-32, with or without a byte order mark (RFC 8259 section 8.1 allows only UTF-8).
    /// A JSON text starts with an ASCII character, so one of its first two bytes is 0 in those encodings.
    static func otherUnicodeEncoding(_ b: [UInt8]) -> String? {
        if b.count >= 4 && b[0] == 0 && b[1] == 0 && (b[2] == 0xFE || b[2] == 0) { return "UTF-32BE" }
        if b.count >= 4 && b[2] == 0 && b[3] == 0 && (b[0] == 0xFF || b[1] == 0) { return "UTF-32LE" }
        if b.count >= 2 && ((b[0] == 0xFE && b[1] == 0xFF) || b[0] == 0) { return "UTF-16BE" }
        if b.count >= 2 && ((b[0] == 0xFF && b[1] == 0xFE) || b[1] == 0) { return "UTF-16LE" }
        return nil
    }
}

/// Reads typed members out of a JSON object, collecting every problem as an RFC 9457 invalid-param.
struct BodyReader {
    private let object: [String: JSONValue]
    private(set) var invalid: [(name: String, reason: String)] = []
    /// The names read so far (a handful per body: a list is cheaper than hashing each name).
    private var known: [String] = []
    /// How many of the object's members are among `known`: all of them, and none is unknown.
    private var knownPresent = 0
    private let prefix: String

    init(_ object: [String: JSONValue], prefix: String = "") {
        self.object = object
        self.prefix = prefix
    }

    mutating func fail(_ name: String, _ reason: String) { invalid.append((prefix + name, reason)) }

    /// The member is present and not JSON null.
    func isGiven(_ name: String) -> Bool { object[name].map { $0 != .null } ?? false }

    /// The member's raw value; absent and JSON null both read as nil (recording "is required" when it is).
    private mutating func member(_ name: String, required: Bool) -> JSONValue? {
        let raw = object[name]
        if !known.contains(name) {
            known.append(name)
            if raw != nil { knownPresent += 1 }
        }
        guard let raw, raw != .null else {
            if required { fail(name, "is required") }
            return nil
        }
        return raw
    }

    /// Nil when absent (or JSON null); records a problem on a wrong type.
    mutating func string(_ name: String, maxLength: Int = 128, required: Bool = false) -> String? {
        guard let raw = member(name, required: required) else { return nil }
        guard case .string(let s) = raw else { fail(name, "must be a string"); return nil }
        if s.unicodeScalars.contains(where: { $0.value == 0 }) { fail(name, "must not contain NUL characters"); return nil }
        guard s.unicodeScalars.count <= maxLength else { fail(name, "must be at most \(maxLength) characters"); return nil }
        return s
    }

    /// An event's `eventId`: an identifier of at most `EventID.maximumLength` characters. Every id is
    /// kept for the replay window, so its length is what one event costs the database.
    mutating func eventId() -> String? {
        guard let s = identifier("eventId") else { return nil }
        guard s.utf8.count <= EventID.maximumLength else { fail("eventId", EventID.rule); return nil }
        return s
    }

    mutating func identifier(_ name: String, required: Bool = false, allowEmpty: Bool = false) -> String? {
        guard let s = string(name, required: required) else { return nil }
        if allowEmpty && s.isEmpty { return s }
        guard Identifier.isValid(s) else { fail(name, Identifier.rule); return nil }
        return s
    }

    mutating func enumeration<E: RawRepresentable & CaseIterable>(_ name: String, _: E.Type, required: Bool = false) -> E?
    where E.RawValue == String {
        guard let s = string(name, maxLength: 64, required: required) else { return nil }
        guard let v = E(rawValue: s) else {
            fail(name, "must be one of \(E.allCases.map { $0.rawValue }.joined(separator: ", "))")
            return nil
        }
        return v
    }

    mutating func integer(_ name: String, _ range: ClosedRange<Int>, required: Bool = false) -> Int? {
        guard let raw = member(name, required: required) else { return nil }
        // The reader classifies the decimal text exactly: 1.0 and 1e2 are integers, 2.9999999999999999999 is not.
        switch raw {
        case .integer(let v):
            if let i = Int(exactly: v), range.contains(i) { return i }
        case .largeInteger: break
        default: fail(name, "must be an integer"); return nil
        }
        fail(name, "must be an integer from \(range.lowerBound) to \(range.upperBound)")
        return nil
    }

    mutating func number(_ name: String, _ range: ClosedRange<Double>, required: Bool = false) -> Double? {
        guard let raw = member(name, required: required) else { return nil }
        let d: Double
        switch raw {
        case .integer(let i): d = Double(i)
        case .number(let n), .largeInteger(let n): d = n
        default: fail(name, "must be a number"); return nil
        }
        guard d.isFinite, range.contains(d) else {
            fail(name, "must be a finite number from \(Self.format(range.lowerBound)) to \(Self.format(range.upperBound))"); return nil
        }
        return d
    }

    mutating func boolean(_ name: String) -> Bool? {
        guard let raw = member(name, required: false) else { return nil }
        guard case .bool(let b) = raw else { fail(name, "must be true or false"); return nil }
        return b
    }

    /// The elements of an array member (nil when absent or JSON null); records a problem on a wrong
    /// type, an empty array when `allowEmpty` is false, and more than `maxCount` elements.
    mutating func array(_ name: String, maxCount: Int, allowEmpty: Bool = false) -> [JSONValue]? {
        guard let raw = member(name, required: false) else { return nil }
        guard case .array(let items) = raw else { fail(name, "must be an array"); return nil }
        if items.isEmpty && !allowEmpty { fail(name, "must not be empty (leave it out or null for no condition)"); return nil }
        guard items.count <= maxCount else { fail(name, "must have at most \(maxCount) elements"); return nil }
        return items
    }

    /// The raw members of an object member (nil when absent or JSON null); records a wrong type.
    mutating func rawObject(_ name: String) -> [String: JSONValue]? {
        guard let raw = member(name, required: false) else { return nil }
        guard case .object(let nested) = raw else { fail(name, "must be an object"); return nil }
        return nested
    }

    mutating func object(_ name: String) -> BodyReader? {
        guard let raw = member(name, required: false) else { return nil }
        guard case .object(let nested) = raw else { fail(name, "must be an object"); return nil }
        return BodyReader(nested, prefix: prefix + name + ".")
    }

    /// Takes the problems of a nested reader (and its unknown members) into this one.
    mutating func absorb(_ nested: BodyReader) {
        var nested = nested
        nested.rejectUnknownMembers()
        invalid += nested.invalid
    }

    /// Every member not read is a mistake by the client: say so (sorted, so errors are stable).
    /// At most `unknownMembersNamed` are named, so a body of thousands of members cannot make the
    /// answer (and the work to build it) grow with them; the last one named says how many more there are.
    mutating func rejectUnknownMembers() {
        guard knownPresent < object.count else { return }
        let unknown = object.keys.filter { !known.contains($0) }.sorted()
        for key in unknown.prefix(Self.unknownMembersNamed) {
            invalid.append((prefix + key, "is not a known member"))
        }
        if unknown.count > Self.unknownMembersNamed, let last = invalid.popLast() {
            invalid.append((last.name, "is not a known member (nor are \(unknown.count - Self.unknownMembersNamed) more)"))
        }
        known += unknown
        knownPresent = object.count
    }

    static let unknownMembersNamed = 20

    /// Throws the collected problems as one 400.
    mutating func finish() throws(WireError) {
        rejectUnknownMembers()
        if !invalid.isEmpty { throw .invalid(invalid) }
    }

    /// A required member after `finish()`: it is there whenever `finish()` did not throw, and if it
    /// ever were not, the client is told so rather than the process trapping.
    func required<T>(_ value: T?, _ name: String) throws(WireError) -> T {
        guard let value else { throw .invalid([(prefix + name, "is required")]) }
        return value
    }

    static func format(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d) }
}

/// User, sheet and container ids: 1 to 128 characters of letters, digits and `._:@-`.
/// Event ids: a UUID (36 characters) or a ULID (26) fits with room to spare.
public enum EventID {
    public static let maximumLength = 64
    public static let rule = "must be 1 to 64 characters of letters, digits and ._:@- (a UUID fits)"
}

public enum Identifier {
    public static let rule = "must be 1 to 128 characters of letters, digits and ._:@-"

    /// Inlinable: every `/v1/users` request checks its path's user id, so it is specialized at the call.
    @inlinable public static func isValid(_ s: some StringProtocol) -> Bool {
        let utf8 = s.utf8
        guard !utf8.isEmpty, utf8.count <= 128 else { return false }
        return utf8.allSatisfy(isAllowed)
    }

    @inlinable @inline(__always) public static func isAllowed(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "-"):
            return true
        default: return false
        }
    }
}

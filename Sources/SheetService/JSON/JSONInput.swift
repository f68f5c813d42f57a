import MicroHTTP

/// Request bodies as JSON objects.
enum JSONValue {
    /// Parses a request body into an object, or a 400 problem that says what is wrong with it.
    /// `hints` name the types the caller expects of top-level members (only a speed-up, see `JSONNode`).
    static func parseObject(_ body: [UInt8], hints: JSONNode.Hints = .none) throws(Problem) -> [String: JSONNode] {
        guard !body.isEmpty else { throw Problems.badRequest("the request body is empty; a JSON object is expected") }
        guard String(validating: body, as: UTF8.self) != nil else {
            throw Problems.badRequest("the request body is not valid UTF-8")
        }
        let parsed: [String: JSONNode]?
        do {
            parsed = try JSONNode.parseObject(body, hints: hints)
        } catch {
            throw Problems.badRequest("the request body is not valid JSON")
        }
        guard let object = parsed else {
            throw Problems.badRequest("the request body must be a JSON object")
        }
        // Foundation's decoder silently keeps one of duplicate keys (a client sending two values means a
        // bug) and accepts trailing commas (not JSON, RFC 8259).
        switch DuplicateKeyScanner.firstProblem(in: body) {
        case .duplicate(let key)?: throw Problems.invalidParams([(key, "appears more than once in the same object")])
        case .trailingComma?: throw Problems.badRequest("the request body is not valid JSON (a trailing comma)")
        case nil: return object
        }
    }
}

/// Finds a key that occurs twice in one JSON object, or a comma right before `}` or `]`. Runs only on
/// text Foundation's decoder accepted.
enum DuplicateKeyScanner {
    enum Finding: Equatable { case duplicate(String), trailingComma }

    static func firstProblem(in bytes: [UInt8]) -> Finding? {
        var stack: [Set<[UInt8]>?] = []  // nil for arrays
        var i = 0
        let n = bytes.count
        var last: UInt8 = 0  // the last byte outside strings that is not whitespace
        while i < n {
            let c = bytes[i]
            switch c {
            case UInt8(ascii: "{"): stack.append(Set()); i += 1
            case UInt8(ascii: "["): stack.append(nil); i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                if last == UInt8(ascii: ",") { return .trailingComma }
                _ = stack.popLast(); i += 1
            case UInt8(ascii: "\""):
                let start = i + 1
                var j = start
                var escaped = false
                while j < n && bytes[j] != UInt8(ascii: "\"") {
                    if bytes[j] == UInt8(ascii: "\\") { escaped = true; j += 1 }
                    j += 1
                }
                let raw = Array(bytes[start..<min(j, n)])
                i = j + 1
                // A string followed by ':' is a key of the innermost object.
                var k = i
                while k < n && (bytes[k] == 0x20 || bytes[k] == 0x0a || bytes[k] == 0x0d || bytes[k] == 0x09) { k += 1 }
                if k < n && bytes[k] == UInt8(ascii: ":"), let top = stack.indices.last, stack[top] != nil {
                    let key = escaped ? decodedKey(raw) : raw
                    if stack[top]!.contains(key) { return .duplicate(String(decoding: key, as: UTF8.self)) }
                    stack[top]!.insert(key)
                }
                last = UInt8(ascii: "\"")
                continue
            default: i += 1
            }
            if c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09 { last = c }
        }
        return nil
    }

    private static func decodedKey(_ raw: [UInt8]) -> [UInt8] {
        guard case .string(let s)? = try? JSONNode.parse([UInt8(ascii: "\"")] + raw + [UInt8(ascii: "\"")]) else { return raw }
        return Array(s.utf8)
    }
}

/// Reads typed members out of a JSON object, collecting every problem as an RFC 9457 invalid-param.
struct BodyReader {
    private let object: [String: JSONNode]
    private(set) var invalid: [(name: String, reason: String)] = []
    private var known: Set<String> = []
    private let prefix: String

    init(_ object: [String: JSONNode], prefix: String = "") {
        self.object = object
        self.prefix = prefix
    }

    mutating func fail(_ name: String, _ reason: String) { invalid.append((prefix + name, reason)) }

    /// The member's raw value; absent and JSON null both read as nil (recording "is required" when it is).
    private mutating func member(_ name: String, required: Bool) -> JSONNode? {
        known.insert(name)
        guard let raw = object[name], raw != .null else {
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
        // Integral numbers arrive as .integer (1.0 and 1e2 included); 1.5 or 1e19 arrive as .number.
        guard case .integer(let v) = raw else { fail(name, "must be an integer"); return nil }
        guard let i = Int(exactly: v), range.contains(i) else {
            fail(name, "must be an integer from \(range.lowerBound) to \(range.upperBound)"); return nil
        }
        return i
    }

    mutating func number(_ name: String, _ range: ClosedRange<Double>, required: Bool = false) -> Double? {
        guard let raw = member(name, required: required) else { return nil }
        let d: Double
        switch raw {
        case .integer(let i): d = Double(i)
        case .number(let n): d = n
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
    mutating func rejectUnknownMembers() {
        for key in object.keys.sorted() where !known.contains(key) {
            invalid.append((prefix + key, "is not a known member"))
        }
        known.formUnion(object.keys)
    }

    /// Throws the collected problems as one 400.
    mutating func finish() throws(Problem) {
        rejectUnknownMembers()
        if !invalid.isEmpty { throw Problems.invalidParams(invalid) }
    }

    static func format(_ d: Double) -> String { d == d.rounded() && abs(d) < 1e15 ? String(Int(d)) : String(d) }
}

/// User, sheet and container ids: 1 to 128 characters of letters, digits and `._:@-`.
enum Identifier {
    static let rule = "must be 1 to 128 characters of letters, digits and ._:@-"

    static func isValid(_ s: some StringProtocol) -> Bool {
        let utf8 = s.utf8
        guard !utf8.isEmpty, utf8.count <= 128 else { return false }
        return utf8.allSatisfy(isAllowed)
    }

    @inline(__always) static func isAllowed(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "-"):
            return true
        default: return false
        }
    }
}

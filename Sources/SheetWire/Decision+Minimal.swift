public import SheetPolicy

extension Decision {
    /// The members a minimal answer (`Prefer: return=minimal`) leaves out: `sheet` repeats the top of
    /// `stack`, `trace` explains the decision.
    static let membersLeftOutOfMinimal: [[UInt8]] = [Array(#""sheet""#.utf8), Array(#""trace""#.utf8)]

    /// The minimal body of the full body `full` (as `jsonBytes()` writes it): the same members in the
    /// same order without `sheet` and `trace`. A body that is not a JSON object is returned as is.
    public static func minimalBody(fromFull full: [UInt8]) -> [UInt8] {
        var scanner = TopLevelMembers(full)
        guard scanner.begin() else { return full }
        var out: [UInt8] = [UInt8(ascii: "{")]
        out.reserveCapacity(full.count)
        while let member = scanner.next() {
            let name = full[member.name]
            if membersLeftOutOfMinimal.contains(where: { name.elementsEqual($0) }) { continue }
            if out.count > 1 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: full[member.whole])
        }
        guard scanner.isComplete else { return full }
        out.append(UInt8(ascii: "}"))
        return out
    }
}

/// The top-level members of a JSON object in compact or spaced JSON: each member's quoted name and
/// its whole `"name":value` range. Values are skipped (strings with their escapes, nested arrays and
/// objects), not parsed.
private struct TopLevelMembers {
    private let bytes: [UInt8]
    private var i = 0
    /// The closing brace was reached with every member well formed.
    private(set) var isComplete = false

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func begin() -> Bool {
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: "{") else { return false }
        i += 1
        return true
    }

    mutating func next() -> (name: Range<Int>, whole: Range<Int>)? {
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: ",") {
            i += 1
            skipSpace()
        }
        guard i < bytes.count else { return nil }
        if bytes[i] == UInt8(ascii: "}") {
            isComplete = true
            return nil
        }
        let start = i
        guard bytes[i] == UInt8(ascii: "\""), skipString() else { return nil }
        let name = start..<i
        skipSpace()
        guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return nil }
        i += 1
        skipSpace()
        guard skipValue() else { return nil }
        return (name, start..<i)
    }

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x09 || bytes[i] == 0x0A || bytes[i] == 0x0D { i += 1 }
    }

    /// From an opening quote to just past the closing one.
    private mutating func skipString() -> Bool {
        i += 1
        while i < bytes.count {
            switch bytes[i] {
            case UInt8(ascii: "\\"): i += 2
            case UInt8(ascii: "\""):
                i += 1
                return true
            default: i += 1
            }
        }
        return false
    }

    /// One value: a string, an array or object (to its matching close), or a literal or number.
    private mutating func skipValue() -> Bool {
        guard i < bytes.count else { return false }
        switch bytes[i] {
        case UInt8(ascii: "\""):
            return skipString()
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while i < bytes.count {
                switch bytes[i] {
                case UInt8(ascii: "\""):
                    guard skipString() else { return false }
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 {
                        i += 1
                        return true
                    }
                default: break
                }
                i += 1
            }
            return false
        default:
            while i < bytes.count, bytes[i] != UInt8(ascii: ","), bytes[i] != UInt8(ascii: "}") { i += 1 }
            while i > 0, bytes[i - 1] == 0x20 || bytes[i - 1] == 0x0A || bytes[i - 1] == 0x09 || bytes[i - 1] == 0x0D { i -= 1 }
            return true
        }
    }
}

/// App versions as dotted numbers (`2`, `2.10`, `2.10.0`): compared number by number, a missing
/// number reads as 0 (`2.10` equals `2.10.0`), so `2.10.0` > `2.9.1`.
public enum AppVersion {
    public static let rule = "must be dotted numbers such as 2.10.0 (1 to 8 numbers of at most 9 digits)"

    /// 1 to 8 numbers of 1 to 9 digits, separated by single dots.
    public static func isValid(_ text: some StringProtocol) -> Bool {
        var numbers = 1, digits = 0
        for c in text.utf8 {
            if c == UInt8(ascii: ".") {
                guard digits > 0 else { return false }
                numbers += 1
                digits = 0
                guard numbers <= 8 else { return false }
            } else if c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") {
                digits += 1
                guard digits <= 9 else { return false }
            } else {
                return false
            }
        }
        return digits > 0
    }

    /// Compares two valid versions without allocating: negative, 0 or positive.
    public static func compare(_ a: String, _ b: String) -> Int {
        var ia = a.utf8.makeIterator(), ib = b.utf8.makeIterator()
        while true {
            let (na, moreA) = nextNumber(&ia), (nb, moreB) = nextNumber(&ib)
            if na != nb { return na < nb ? -1 : 1 }
            if !moreA && !moreB { return 0 }
        }
    }

    /// The next number (0 once the text is used up) and whether a dot followed it.
    private static func nextNumber(_ it: inout String.UTF8View.Iterator) -> (Int, Bool) {
        var value = 0
        while let c = it.next() {
            if c == UInt8(ascii: ".") { return (value, true) }
            value = value * 10 + Int(c &- UInt8(ascii: "0"))
        }
        return (value, false)
    }
}

/// BCP 47 language tags as far as audiences need them: subtags of 1 to 8 letters or digits joined by
/// hyphens, the first of 2 to 8 letters (`de`, `de-CH`, `zh-Hant-TW`). Compared without regard to case.
public enum LanguageTag {
    public static let rule = "must be a BCP 47 language tag such as de or de-CH (subtags of 1 to 8 letters or digits, joined by -)"

    public static func isValid(_ text: some StringProtocol) -> Bool {
        let utf8 = text.utf8
        guard utf8.count <= 64 else { return false }
        var subtag = 0, first = true
        for c in utf8 {
            if c == UInt8(ascii: "-") {
                guard subtag > 0, !(first && subtag < 2) else { return false }
                first = false
                subtag = 0
                continue
            }
            let letter = (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z")
            let digit = c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
            guard letter || (digit && !first) else { return false }
            subtag += 1
            guard subtag <= 8 else { return false }
        }
        return subtag > 0 && !(first && subtag < 2)
    }

    /// `range` equals `tag` or starts it at a subtag boundary: `de` matches `de` and `de-CH`, not `den`.
    public static func matches(_ range: String, _ tag: String) -> Bool {
        var r = range.utf8.makeIterator(), t = tag.utf8.makeIterator()
        while true {
            switch (r.next(), t.next()) {
            case (nil, nil), (nil, UInt8(ascii: "-")?): return true
            case (let a?, let b?) where a | 0x20 == b | 0x20 && (a == b || isLetter(a)): continue
            default: return false
            }
        }
    }

    private static func isLetter(_ c: UInt8) -> Bool { (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") }
}

extension CampaignRules {
    /// Any member set (cheaper than `isEmpty`'s comparison, for the decision's hot path).
    @inlinable public var hasRules: Bool { schedule != nil || cooldownSeconds != nil || frequency != nil || audience != nil }
}

extension CampaignSettings {
    @inlinable public var isOff: Bool { globalCap == nil && minIntervalSeconds == nil }
}

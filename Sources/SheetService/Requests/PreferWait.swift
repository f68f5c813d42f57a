import SheetWire

/// The `wait` preference of a `Prefer` header (RFC 7240 §4.3): how long a client is willing to wait.
enum PreferWait {
    /// The longest wait honoured; larger requests are served with this one (and say so).
    static let maximumSeconds = 60

    /// Seconds to wait (1 to `maximumSeconds`), or nil when the header asks for no wait. Preferences
    /// are comma-separated `name[=value]` items with optional parameters after `;`; names are
    /// case-insensitive and values may be quoted. An unparsable `wait` is ignored, as RFC 7240 asks of
    /// preferences a server does not understand.
    static func seconds(_ header: String?) -> Int? {
        guard let value = PreferHeader.value(of: "wait", in: header) else { return nil }
        guard !value.isEmpty, value.utf8.count <= 9, value.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let n = Int(value) else {
            return nil
        }
        return n == 0 ? nil : min(n, maximumSeconds)
    }
}

/// The `return` preference of a `Prefer` header (RFC 7240 §4.2).
enum PreferReturn {
    /// Whether the header asks for `return=minimal` (the first `return` preference counts).
    static func isMinimal(_ header: String?) -> Bool {
        PreferHeader.value(of: "return", in: header)?.lowercased() == "minimal"
    }
}

/// `Prefer` (RFC 7240 §2): comma-separated `name[=value]` preferences, parameters after `;`.
enum PreferHeader {
    /// The value of the first preference named `name` (case-insensitive), unquoted; nil without one.
    static func value(of name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for item in header.split(separator: ",") {
            let preference = item.split(separator: ";", maxSplits: 1).first ?? item[...]
            let parts = preference.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmed().lowercased() == name else { continue }
            var value = parts[1].trimmed()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            return value
        }
        return nil
    }
}

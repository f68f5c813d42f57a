/// Database URLs as the configuration sees them: which ones select PostgreSQL, and how to show
/// one without its password.
public enum PostgresURL {
    /// True for `postgres://...` and `postgresql://...` (any case in the scheme).
    public static func isPostgres(_ text: String) -> Bool {
        let lower = text.prefix(13).lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// The URL with any password replaced by `***`: the userinfo one (`user:secret@`) and a
    /// `password=` query parameter. For logs and error messages.
    public static func redacted(_ url: String) -> String {
        let chars = Array(url)
        guard let schemeEnd = firstIndex(of: Array("://"), in: chars) else { return url }
        var result = String(chars[..<(schemeEnd + 3)])
        var index = schemeEnd + 3
        // The authority ends at the first '/', '?' or '#'; its userinfo at the last '@' in it.
        var authorityEnd = index
        while authorityEnd < chars.count, !"/?#".contains(chars[authorityEnd]) { authorityEnd += 1 }
        let authority = chars[index..<authorityEnd]
        if let at = authority.lastIndex(of: "@") {
            let userinfo = chars[index..<at]
            if let colon = userinfo.firstIndex(of: ":") {
                result += String(chars[index..<colon])
                result += ":***"
            } else {
                result += String(userinfo)
            }
            result += String(chars[at..<authorityEnd])
        } else {
            result += String(authority)
        }
        index = authorityEnd
        guard let question = chars[index...].firstIndex(of: "?") else { return result + String(chars[index...]) }
        result += String(chars[index...question])
        let pairs = String(chars[(question + 1)...]).split(separator: "&", omittingEmptySubsequences: false)
        let redactedPairs: [String] = pairs.map { pair in
            pair.lowercased().hasPrefix("password=") ? "password=***" : String(pair)
        }
        return result + redactedPairs.joined(separator: "&")
    }

    private static func firstIndex(of needle: [Character], in haystack: [Character]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where Array(haystack[start..<(start + needle.count)]) == needle {
            return start
        }
        return nil
    }
}

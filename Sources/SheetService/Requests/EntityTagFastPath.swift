/// `If-None-Match` with a single plain tag (what clients echo back): printable ASCII without
/// spaces, tabs or commas. Then trimming and splitting would change nothing, and the general
/// `EntityTag.matches` reduces to "`*`, or the tag without a `W/` prefix equals ours". Returns nil
/// for every other shape (lists, white space, non-ASCII), which take the general path.
enum EntityTagFastPath {
    static func matches(_ header: String, _ etag: String) -> Bool? {
        guard !etag.hasPrefix("W/"), isSingleTag(header) else { return nil }
        if header == "*" { return true }
        return candidate(header).elementsEqual(etag.utf8)
    }

    /// `matches(header, ContentCoding.gzipEntityTag(etag))` without building that tag: our tag
    /// without its closing quote, then `-gzip"` (what every URLSession client revalidates with).
    static func matchesGzipForm(_ header: String, _ etag: String) -> Bool? {
        guard !etag.hasPrefix("W/"), etag.utf8.count >= 2, etag.utf8.last == UInt8(ascii: "\""), isSingleTag(header) else { return nil }
        if header == "*" { return true }
        let candidate = candidate(header), suffix = "-gzip\"".utf8
        return candidate.count == etag.utf8.count - 1 + suffix.count && candidate.starts(with: etag.utf8.dropLast())
            && candidate.suffix(suffix.count).elementsEqual(suffix)
    }

    /// Printable ASCII without spaces, tabs or commas: one tag, nothing to trim or split.
    private static func isSingleTag(_ header: String) -> Bool {
        header.utf8.withContiguousStorageIfAvailable { b -> Bool in
            guard !b.isEmpty else { return false }
            for c in b where c <= 0x20 || c >= 0x7F || c == UInt8(ascii: ",") { return false }
            return true
        } == true
    }

    /// The tag's bytes without a `W/` prefix.
    private static func candidate(_ header: String) -> Substring.UTF8View {
        header.utf8.starts(with: "W/".utf8) ? header.utf8.dropFirst(2) : header.utf8[...]
    }
}

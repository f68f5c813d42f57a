/// `If-None-Match` with a single plain tag (what clients echo back): printable ASCII without
/// spaces, tabs or commas. Then trimming and splitting would change nothing, and the general
/// `EntityTag.matches` reduces to "`*`, or the tag without a `W/` prefix equals ours". Returns nil
/// for every other shape (lists, white space, non-ASCII), which take the general path.
enum EntityTagFastPath {
    static func matches(_ header: String, _ etag: String) -> Bool? {
        guard !etag.hasPrefix("W/") else { return nil }
        let simple = header.utf8.withContiguousStorageIfAvailable { b -> Bool in
            guard !b.isEmpty else { return false }
            for c in b where c <= 0x20 || c >= 0x7F || c == UInt8(ascii: ",") { return false }
            return true
        }
        guard simple == true else { return nil }
        if header == "*" { return true }
        let candidate = header.utf8.starts(with: "W/".utf8) ? header.utf8.dropFirst(2) : header.utf8[...]
        return candidate.elementsEqual(etag.utf8)
    }
}

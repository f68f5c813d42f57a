extension StringProtocol {
    /// The text without leading and trailing ASCII white space (space, tab, CR, LF), as HTTP header
    /// values and secret files are trimmed.
    public func trimmed() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}

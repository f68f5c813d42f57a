import SheetService

extension String {
    /// The string followed by spaces up to `width` characters (for aligned columns).
    func padded(to width: Int) -> String { count >= width ? self : self + String(repeating: " ", count: width - count) }
}

extension StringProtocol {
    /// The text without leading and trailing ASCII white space, as the service trims (secret files, numbers).
    func trimmed() -> String { CommandLineSupport.trimmed(self) }
}

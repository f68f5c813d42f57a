import Foundation

/// Admin tokens files (`SHEETD_ADMIN_TOKENS_FILE`), for the tests that read them in-process
/// (sheetdTests) and through the binary or the verifier (SheetServiceTests).
public enum AdminTokensFiles {
    public static let aliceToken = "alice-0123456789abcdef0123456789abcdef"
    public static let bobToken = "bob-0123456789abcdef0123456789abcdef00"

    /// Files refused for one of their lines; `token-1`, `token-2` and `same` are the tokens a message must never show.
    public static let bad = [
        "alice\n", "alice a b\n", "älice token-1\n", "bad/name token-1\n", "alice token-1\nalice token-2\n", "alice same\nbob same\n",
        "alice tok\ren-1\n", "alice token-1\r\rbob token-2\n", "alice token-" + String(repeating: "x", count: 4096) + "\n",
    ]

    /// `text` written to the file `tokens` in `dir`; returns its path.
    public static func write(_ text: String, in dir: TemporaryDirectory) throws -> String {
        let path = dir.file("tokens")
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}

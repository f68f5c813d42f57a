public import JSONKit
public import MicroHTTP
public import SheetPolicy

/// What the `sheetd` executable (its command line and start-up) needs of the library's internals:
/// the API's own parsing and rules, so that a catalog file and `sheetd token --user` are read
/// exactly as a request would be. Each entry point only forwards to the internal code.
public enum CommandLineSupport {
    /// The members of a catalog file's top-level object, read as a request body is (`the file` in messages).
    public static func catalogFileMembers(_ bytes: [UInt8]) throws(Problem) -> [String: JSONValue] {
        try RequestBody.object(bytes, subject: "the file")
    }

    /// One entry of a catalog file as `PUT /v1/sheets/{sheetId}` reads a definition, design rules checked.
    public static func sheetDefinition(catalogEntry object: [String: JSONValue]) throws(Problem) -> SheetDefinition {
        try SheetDefinition.parse(object, pathId: nil).checkedAgainstDesignRules()
    }

    /// Whether `id` is a user id the API accepts (see `userIdRule`).
    public static func isValidUserId(_ id: String) -> Bool { Identifier.isValid(id) }

    /// What a user id must be, as the API says it.
    public static let userIdRule = Identifier.rule

    /// `text` without leading and trailing ASCII white space, as the service trims header values.
    public static func trimmed(_ text: some StringProtocol) -> String { text.trimmed() }
}

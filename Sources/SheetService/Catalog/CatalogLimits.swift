import MicroHTTP
public import SheetPolicy

/// How large the catalog may grow. Every decision walks the card sheets of its screen and carries a
/// trace line for each, and `GET /v1/sheets` pages through all of them: these caps bound the work and
/// the size of both (a decision then fits a stream's buffer many times over; see SECURITY.md).
public struct CatalogLimits: Sendable, Equatable {
    /// Sheets in the whole catalog (`SHEETD_MAX_SHEETS`).
    public var sheets = CatalogLimits.defaultSheets
    /// Sheets that name one screen (`SHEETD_MAX_SHEETS_PER_SCREEN`).
    public var sheetsPerScreen = CatalogLimits.defaultSheetsPerScreen
    public static let defaultSheets = 1000
    public static let defaultSheetsPerScreen = 100

    public init(sheets: Int = CatalogLimits.defaultSheets, sheetsPerScreen: Int = CatalogLimits.defaultSheetsPerScreen) {
        self.sheets = sheets
        self.sheetsPerScreen = sheetsPerScreen
    }

    /// Which limit a catalog change would go over.
    public struct Violation: Error, Equatable, CustomStringConvertible {
        /// `sheets` or `sheets-per-screen`, as the problem's `limit` member names it.
        public let limit: String
        public let maximum: Int
        public let description: String

        /// 409 `limit-exceeded`, with the limit's name and maximum as members (as for a user's state).
        var problem: Problem { Problems.limitExceeded(description, limit: limit, maximum: maximum) }
    }

    /// The limit that putting `definitions` into `catalog` (each replacing the sheet of its id) would
    /// go over, or nil when the result fits.
    public func violation(upserting definitions: [SheetDefinition], into catalog: Catalog) -> Violation? {
        var total = catalog.sheets.count
        var perScreen: [String: Int] = [:]
        for sheet in catalog.sortedByID { perScreen[sheet.screen, default: 0] += 1 }
        var replaced = catalog.sheets
        for definition in definitions {
            if let old = replaced[definition.id] {
                perScreen[old.screen, default: 0] -= 1
            } else {
                total += 1
            }
            replaced[definition.id] = definition
            perScreen[definition.screen, default: 0] += 1
        }
        if total > sheets {
            return Violation(
                limit: "sheets", maximum: sheets,
                description: "the catalog would hold \(total) sheets; at most \(sheets) are allowed (SHEETD_MAX_SHEETS)")
        }
        for definition in definitions where perScreen[definition.screen, default: 0] > sheetsPerScreen {
            let count = perScreen[definition.screen, default: 0]
            return Violation(
                limit: "sheets-per-screen", maximum: sheetsPerScreen,
                description:
                    "screen '\(definition.screen)' would have \(count) sheets; at most \(sheetsPerScreen) are allowed (SHEETD_MAX_SHEETS_PER_SCREEN)")
        }
        return nil
    }
}

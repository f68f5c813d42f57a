public import SheetPolicy

/// One kept state of the catalog: every sheet and the settings as they were after a change, who
/// made the change, when and why (`GET /v1/catalog/revisions`).
public struct CatalogRevision: Sendable, Equatable {
    /// Increasing, never reused.
    public var number: Int64
    /// When it was made (RFC 3339, UTC).
    public var createdAt: String
    /// The name of the admin token that made the change (or `sheetd` for the catalog a server found).
    public var actor: String
    public var comment: String?
    /// For a restore: the revision it restored.
    public var restoredFrom: Int64?
    public var settings: CampaignSettings
    /// Every sheet, ordered by id (empty in listings: see `sheetCount`).
    public var sheets: [StoredSheet]
    public var sheetCount: Int

    public init(
        number: Int64, createdAt: String, actor: String, comment: String?, restoredFrom: Int64?, settings: CampaignSettings,
        sheets: [StoredSheet], sheetCount: Int
    ) {
        self.number = number; self.createdAt = createdAt; self.actor = actor; self.comment = comment
        self.restoredFrom = restoredFrom; self.settings = settings; self.sheets = sheets; self.sheetCount = sheetCount
    }
}

/// Who makes a catalog change and why, recorded with its revision.
public struct RevisionAuthor: Sendable, Equatable {
    public var actor: String
    public var comment: String?
    public init(actor: String, comment: String? = nil) { self.actor = actor; self.comment = comment }
}

extension CatalogRevision {
    /// Revisions kept by default (`SHEETD_CATALOG_REVISIONS`).
    public static let defaultKept = 1000
    /// Bytes of sheet definitions the history keeps by default (`SHEETD_CATALOG_HISTORY_BYTES`): 256 MiB.
    public static let defaultHistoryBytes: Int64 = 256 << 20
}

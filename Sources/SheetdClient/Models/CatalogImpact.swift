// What a proposed catalog would change (openapi.yaml `CatalogFile`, `CatalogImpact`).

/// A whole catalog as a file: `--catalog`, `sheetd catalog check` and ``SheetdAdminClient/catalogImpact(of:users:from:)``
/// (openapi.yaml `CatalogFile`). Every definition carries its `id`.
public struct CatalogFile: Codable, Sendable, Equatable, Hashable {
    public var sheets: [SheetDefinitionInput]

    /// A value with every member.
    public init(sheets: [SheetDefinitionInput]) { self.sheets = sheets }
}

/// The answer of `POST /v1/catalog/impact` (openapi.yaml `CatalogImpact`): how the decisions of a sample
/// of stored users would change under a proposed catalog. Nothing is written.
public struct CatalogImpact: Codable, Sendable, Equatable, Hashable {
    /// Who was compared.
    public struct Sample: Codable, Sendable, Equatable, Hashable {
        /// Users compared.
        public var users: Int
        public var requestedUsers: Int
        /// The user id the sample started at: pass it as `from` to compare the same users again.
        public var from: String
        /// False when the server's time budget ran out before every sampled user was compared.
        public var complete: Bool
    }

    /// Sheet ids the proposed catalog adds, removes and changes.
    public struct Sheets: Codable, Sendable, Equatable, Hashable {
        public var added: [String]
        public var removed: [String]
        public var changed: [String]
    }

    /// A screen, tab and platform both catalogs were asked about.
    public struct Context: Codable, Sendable, Equatable, Hashable {
        public var screen: String
        public var tab: String?
        public var platform: Platform
    }

    /// What the comparison looks at in one decision.
    public struct Outcome: Codable, Sendable, Equatable, Hashable {
        public var present: Bool
        public var sheetId: String?
        public var variant: SheetSize?
        public var detents: [DetentId]
        public var selectedDetent: DetentId?
    }

    /// One decision that would change.
    public struct Example: Codable, Sendable, Equatable, Hashable {
        public var userId: String
        public var screen: String
        public var tab: String?
        public var platform: Platform
        public var before: Outcome
        public var after: Outcome
    }

    /// The decisions of one kind of change: `shown`, `hidden`, `sheet-changed`, `variant-changed`,
    /// `detents-changed` (each decision counts under the first that applies).
    public struct Change: Codable, Sendable, Equatable, Hashable {
        public var change: String
        public var decisions: Int
        public var examples: [Example]
    }

    /// A presented sheet replaced by another (nil: nothing presented).
    public struct Transition: Codable, Sendable, Equatable, Hashable {
        public var from: String?
        public var to: String?
        public var decisions: Int
    }

    public var sample: Sample
    /// The instant both catalogs decided at (RFC 3339).
    public var now: String
    public var elapsedMilliseconds: Int
    public var sheets: Sheets
    public var contexts: [Context]
    /// Decisions compared (users times contexts).
    public var decisions: Int
    /// Decisions that would differ.
    public var changed: Int
    public var changes: [Change]
    public var transitions: [Transition]
}

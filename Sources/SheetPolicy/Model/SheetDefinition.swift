/// What a sheet holds; decides its default size and dismissal affordance.
public enum SheetKind: String, Sendable, CaseIterable, Comparable {
    case cards, informational, action, input
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// The three sizes of the design system: content-sized, large, and medium-resizable.
public enum SheetSize: String, Sendable, CaseIterable {
    case content, large, medium
}

/// AurumBottomSheet styles: `strict` has a 56 pt sticky header with the title, `flexible` none.
public enum SheetStyle: String, Sendable, CaseIterable {
    case strict, flexible
}

/// Detent identifiers, spelled as UIKit spells them.
public enum DetentID: String, Sendable, CaseIterable {
    case medium, large, content
}

/// The visible control that dismisses a sheet besides gestures.
public enum DismissAffordance: String, Sendable, CaseIterable {
    case none, closeIcon, cancelButton
}

/// The sticky primary button of a sheet.
public struct PrimaryButton: Sendable, Equatable {
    public var label: String
    public init(label: String) { self.label = label }
}

/// One catalog entry: everything the policy knows about a sheet before any user touches it.
public struct SheetDefinition: Sendable, Equatable {
    public var id: String
    public var kind: SheetKind
    /// The declared size; `nil` follows the guidelines (see `resolvedSize`).
    public var size: SheetSize?
    public var style: SheetStyle
    public var title: String?
    /// The screen that owns the sheet. A root or card sheet presents only here; a sheet nested in a
    /// stack presents wherever the stack's root does (a stack belongs to its root's screen and tab).
    public var screen: String
    /// The tab of `screen` that owns the sheet, when it lives in a tab view.
    public var tab: String?
    /// Card sheets: the card container whose count drives the sheet.
    public var containerId: String?
    /// Card sheets: the filter key their counts are reported under (`nil` = unfiltered counts only).
    public var containerFilter: String?
    /// Higher wins among eligible card sheets.
    public var priority: Int
    /// Input sheets: how many inputs the form holds (more than one makes it large by default).
    public var inputCount: Int
    public var confirmDismissWhenDirty: Bool
    public var primaryButton: PrimaryButton?
    /// The largest detent left undimmed (`medium` or `large`); `nil` dims at every detent.
    public var nonModalUpTo: DetentID?
    // Optional overrides of what the kind and size imply.
    public var dismissAffordance: DismissAffordance?
    public var swipeToDismiss: Bool?
    public var tapScrimToDismiss: Bool?
    public var expandsOnScrollToEdge: Bool?
    public var cornerRadius: Double?
    /// Card sheets: schedule, cooldown, frequency cap and audience; `.none` by default.
    public var campaign: CampaignRules
    /// The sheet's experiment (card sheets and nested sheets alike); nil when none.
    public var experiment: Experiment?

    public init(
        id: String, kind: SheetKind, size: SheetSize? = nil, style: SheetStyle = .flexible, title: String? = nil,
        screen: String, tab: String? = nil, containerId: String? = nil, containerFilter: String? = nil,
        priority: Int = 0, inputCount: Int = 1, confirmDismissWhenDirty: Bool = false,
        primaryButton: PrimaryButton? = nil, nonModalUpTo: DetentID? = nil,
        dismissAffordance: DismissAffordance? = nil, swipeToDismiss: Bool? = nil, tapScrimToDismiss: Bool? = nil,
        expandsOnScrollToEdge: Bool? = nil, cornerRadius: Double? = nil, campaign: CampaignRules = .none,
        experiment: Experiment? = nil
    ) {
        self.id = id; self.kind = kind; self.size = size; self.style = style; self.title = title
        self.screen = screen; self.tab = tab; self.containerId = containerId; self.containerFilter = containerFilter
        self.priority = priority; self.inputCount = inputCount; self.confirmDismissWhenDirty = confirmDismissWhenDirty
        self.primaryButton = primaryButton; self.nonModalUpTo = nonModalUpTo
        self.dismissAffordance = dismissAffordance; self.swipeToDismiss = swipeToDismiss
        self.tapScrimToDismiss = tapScrimToDismiss; self.expandsOnScrollToEdge = expandsOnScrollToEdge
        self.cornerRadius = cornerRadius
        self.campaign = campaign
        self.experiment = experiment
    }

    /// The container key this sheet watches (card sheets only).
    public var containerKey: ContainerKey? {
        containerId.map { ContainerKey(containerId: $0, filter: containerFilter ?? "") }
    }
}

/// The whole catalog, by id.
public struct Catalog: Sendable, Equatable {
    public private(set) var sheets: [String: SheetDefinition] {
        didSet {
            sortedByID = Self.sorted(sheets)
            cardSheetsByScreen = Self.cardSheets(sortedByID)
            hasExperiments = sortedByID.contains { $0.experiment != nil }
        }
    }
    /// All definitions ordered by id in byte order (deterministic iteration). Kept with `sheets`,
    /// because every decision and count report walks it and the catalog changes rarely.
    public private(set) var sortedByID: [SheetDefinition]
    /// The card sheets of each screen (every tab), ordered by id as in `sortedByID`: a decision
    /// looks at its screen's only. Kept with `sheets`.
    private var cardSheetsByScreen: [String: [SheetDefinition]]
    /// Some sheet has an experiment: without one, a decision does no experiment work at all.
    public private(set) var hasExperiments: Bool
    /// The service-wide campaign settings (`/v1/settings`): versioned, cached and invalidated with
    /// the catalog, since they change decisions the way a catalog edit does.
    public var settings: CampaignSettings = .off

    public init(_ sheets: [SheetDefinition] = []) {
        let byID = Dictionary(sheets.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
        self.sheets = byID
        self.sortedByID = Self.sorted(byID)
        self.cardSheetsByScreen = Self.cardSheets(sortedByID)
        self.hasExperiments = sortedByID.contains { $0.experiment != nil }
    }

    /// The sheet carrying the experiment `experimentId`, and the experiment.
    public func experiment(id experimentId: String) -> (sheet: SheetDefinition, experiment: Experiment)? {
        guard hasExperiments else { return nil }
        for sheet in sortedByID { if let e = sheet.experiment, e.id == experimentId { return (sheet, e) } }
        return nil
    }

    /// The card sheets owned by `context` (its screen, and its tab when the sheet names one),
    /// ordered by id in byte order: `sortedByID` filtered by `isCardSheet && isOwned(by:)`.
    public func cardSheets(ownedBy context: ClientContext) -> [SheetDefinition] {
        guard let ofScreen = cardSheetsByScreen[context.screen] else { return [] }
        if ofScreen.allSatisfy({ $0.isOwned(by: context) }) { return ofScreen }
        return ofScreen.filter { $0.isOwned(by: context) }
    }

    private static func cardSheets(_ sorted: [SheetDefinition]) -> [String: [SheetDefinition]] {
        var byScreen: [String: [SheetDefinition]] = [:]
        for sheet in sorted where sheet.isCardSheet { byScreen[sheet.screen, default: []].append(sheet) }
        return byScreen
    }
    public subscript(id: String) -> SheetDefinition? { sheets[id] }
    public mutating func upsert(_ sheet: SheetDefinition) { sheets[sheet.id] = sheet }
    public mutating func remove(id: String) { sheets[id] = nil }

    private static func sorted(_ sheets: [String: SheetDefinition]) -> [SheetDefinition] {
        sheets.values.sorted { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }
}

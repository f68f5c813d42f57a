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
///
/// A value whose fields sit in one shared, immutable box: a decision copies definitions many times
/// (every card sheet of the screen, the eligible ones, the winner), and copying the box is one
/// retain where copying the fields was one per string. A setter makes a new box (catalog parsing
/// and tests set fields; decisions never do).
public struct SheetDefinition: Sendable, Equatable {
    /// The stored fields (documented on their accessors below).
    private struct Fields: Sendable, Equatable {
        var id: String
        var kind: SheetKind
        var size: SheetSize?
        var style: SheetStyle
        var title: String?
        var screen: String
        var tab: String?
        var containerId: String?
        var containerFilter: String?
        var priority: Int
        var inputCount: Int
        var confirmDismissWhenDirty: Bool
        var primaryButton: PrimaryButton?
        var nonModalUpTo: DetentID?
        var dismissAffordance: DismissAffordance?
        var swipeToDismiss: Bool?
        var tapScrimToDismiss: Bool?
        var expandsOnScrollToEdge: Bool?
        var cornerRadius: Double?
        var campaign: CampaignRules
        var experiment: Experiment?
    }

    /// The fields, and what every decision derives from them, made once.
    private final class Box: Sendable {
        let fields: Fields
        let containerKey: ContainerKey?
        /// The trace line of this card sheet when its container has no cards (`SheetPolicy.decide`).
        let noCardsLine: String

        init(_ fields: Fields) {
            self.fields = fields
            let key = fields.containerId.map { ContainerKey(containerId: $0, filter: fields.containerFilter ?? "") }
            self.containerKey = key
            self.noCardsLine = TraceLine.join("eligibility: '", fields.id, "' has no cards (", SheetPolicy.describe(key), ")")
        }
    }

    private var box: Box

    public var id: String {
        get { box.fields.id }
        set { update { $0.id = newValue } }
    }
    public var kind: SheetKind {
        get { box.fields.kind }
        set { update { $0.kind = newValue } }
    }
    /// The declared size; `nil` follows the guidelines (see `resolvedSize`).
    public var size: SheetSize? {
        get { box.fields.size }
        set { update { $0.size = newValue } }
    }
    public var style: SheetStyle {
        get { box.fields.style }
        set { update { $0.style = newValue } }
    }
    public var title: String? {
        get { box.fields.title }
        set { update { $0.title = newValue } }
    }
    /// The screen that owns the sheet. A root or card sheet presents only here; a sheet nested in a
    /// stack presents wherever the stack's root does (a stack belongs to its root's screen and tab).
    public var screen: String {
        get { box.fields.screen }
        set { update { $0.screen = newValue } }
    }
    /// The tab of `screen` that owns the sheet, when it lives in a tab view.
    public var tab: String? {
        get { box.fields.tab }
        set { update { $0.tab = newValue } }
    }
    /// Card sheets: the card container whose count drives the sheet.
    public var containerId: String? {
        get { box.fields.containerId }
        set { update { $0.containerId = newValue } }
    }
    /// Card sheets: the filter key their counts are reported under (`nil` = unfiltered counts only).
    public var containerFilter: String? {
        get { box.fields.containerFilter }
        set { update { $0.containerFilter = newValue } }
    }
    /// Higher wins among eligible card sheets.
    public var priority: Int {
        get { box.fields.priority }
        set { update { $0.priority = newValue } }
    }
    /// Input sheets: how many inputs the form holds (more than one makes it large by default).
    public var inputCount: Int {
        get { box.fields.inputCount }
        set { update { $0.inputCount = newValue } }
    }
    public var confirmDismissWhenDirty: Bool {
        get { box.fields.confirmDismissWhenDirty }
        set { update { $0.confirmDismissWhenDirty = newValue } }
    }
    public var primaryButton: PrimaryButton? {
        get { box.fields.primaryButton }
        set { update { $0.primaryButton = newValue } }
    }
    /// The largest detent left undimmed (`medium` or `large`); `nil` dims at every detent.
    public var nonModalUpTo: DetentID? {
        get { box.fields.nonModalUpTo }
        set { update { $0.nonModalUpTo = newValue } }
    }
    // Optional overrides of what the kind and size imply.
    public var dismissAffordance: DismissAffordance? {
        get { box.fields.dismissAffordance }
        set { update { $0.dismissAffordance = newValue } }
    }
    public var swipeToDismiss: Bool? {
        get { box.fields.swipeToDismiss }
        set { update { $0.swipeToDismiss = newValue } }
    }
    public var tapScrimToDismiss: Bool? {
        get { box.fields.tapScrimToDismiss }
        set { update { $0.tapScrimToDismiss = newValue } }
    }
    public var expandsOnScrollToEdge: Bool? {
        get { box.fields.expandsOnScrollToEdge }
        set { update { $0.expandsOnScrollToEdge = newValue } }
    }
    public var cornerRadius: Double? {
        get { box.fields.cornerRadius }
        set { update { $0.cornerRadius = newValue } }
    }
    /// Card sheets: schedule, cooldown, frequency cap and audience; `.none` by default.
    public var campaign: CampaignRules {
        get { box.fields.campaign }
        set { update { $0.campaign = newValue } }
    }
    /// The sheet's experiment (card sheets and nested sheets alike); nil when none.
    public var experiment: Experiment? {
        get { box.fields.experiment }
        set { update { $0.experiment = newValue } }
    }

    public init(
        id: String, kind: SheetKind, size: SheetSize? = nil, style: SheetStyle = .flexible, title: String? = nil,
        screen: String, tab: String? = nil, containerId: String? = nil, containerFilter: String? = nil,
        priority: Int = 0, inputCount: Int = 1, confirmDismissWhenDirty: Bool = false,
        primaryButton: PrimaryButton? = nil, nonModalUpTo: DetentID? = nil,
        dismissAffordance: DismissAffordance? = nil, swipeToDismiss: Bool? = nil, tapScrimToDismiss: Bool? = nil,
        expandsOnScrollToEdge: Bool? = nil, cornerRadius: Double? = nil, campaign: CampaignRules = .none,
        experiment: Experiment? = nil
    ) {
        box = Box(
            Fields(
                id: id,
                kind: kind,
                size: size,
                style: style,
                title: title,
                screen: screen,
                tab: tab,
                containerId: containerId,
                containerFilter: containerFilter,
                priority: priority,
                inputCount: inputCount,
                confirmDismissWhenDirty: confirmDismissWhenDirty,
                primaryButton: primaryButton,
                nonModalUpTo: nonModalUpTo,
                dismissAffordance: dismissAffordance,
                swipeToDismiss: swipeToDismiss,
                tapScrimToDismiss: tapScrimToDismiss,
                expandsOnScrollToEdge: expandsOnScrollToEdge,
                cornerRadius: cornerRadius,
                campaign: campaign,
                experiment: experiment))
    }

    private mutating func update(_ change: (inout Fields) -> Void) {
        var fields = box.fields
        change(&fields)
        box = Box(fields)
    }

    public static func == (a: Self, b: Self) -> Bool { a.box === b.box || a.box.fields == b.box.fields }

    /// The container key this sheet watches (card sheets only).
    public var containerKey: ContainerKey? { box.containerKey }

    /// The trace line `SheetPolicy.decide` writes for this card sheet when its container has no cards.
    var noCardsLine: String { box.noCardsLine }
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

// The sheet catalog (openapi.yaml `SheetDefinitionInput`, `SheetDefinition`, `Catalog`).

/// A sheet definition's primary button (openapi.yaml `PrimaryButton`).
public struct PrimaryButton: Codable, Sendable, Equatable, Hashable {
    /// The label, 1 to 100 characters.
    public var label: String

    /// A value with every member.
    public init(label: String) {
        self.label = label
    }
}

/// A sheet definition as written: the body of `putSheet` (openapi.yaml `SheetDefinitionInput`).
///
/// nil members are left out of the JSON and take the server's defaults. `containerId` is required
/// for cards, `title` for the strict style.
public struct SheetDefinitionInput: Codable, Sendable, Equatable, Hashable {
    /// Optional; must equal the path's sheet id.
    public var id: String?
    /// What the sheet is for.
    public var kind: SheetKind
    /// The size; nil lets the guidelines decide.
    public var size: SheetSize?
    /// The anatomy (default flexible).
    public var style: SheetStyle?
    /// The strict style's header title.
    public var title: String?
    /// The screen the sheet belongs to.
    public var screen: String
    /// The tab it belongs to, if any.
    public var tab: String?
    /// The card container (cards only).
    public var containerId: String?
    /// Only counts under this filter count (cards only).
    public var containerFilter: String?
    /// Higher wins (default 0).
    public var priority: Int?
    /// Inputs on the sheet (default 1).
    public var inputCount: Int?
    /// Ask before dismissing unsaved input (default false).
    public var confirmDismissWhenDirty: Bool?
    /// The primary button, if any.
    public var primaryButton: PrimaryButton?
    /// The largest detent that leaves the content behind interactive.
    public var nonModalUpTo: UndimmedDetent?
    /// The close control (default: the guidelines decide).
    public var dismissAffordance: DismissAffordance?
    /// Override: swipe to dismiss.
    public var swipeToDismiss: Bool?
    /// Override: tap the scrim to dismiss.
    public var tapScrimToDismiss: Bool?
    /// Override: scrolling to the edge expands.
    public var expandsOnScrollToEdge: Bool?
    /// Corner radius in points, 0 to 100.
    public var cornerRadius: Double?
    /// Card sheets: the time window (nil: none).
    public var schedule: Schedule?
    /// Card sheets: seconds after a dismissal before it presents again (nil: none).
    public var cooldownSeconds: Int?
    /// Card sheets: at most `max` impressions per `periodSeconds` (nil: none).
    public var frequency: FrequencyCap?
    /// Card sheets: who may see it (nil: everyone).
    public var audience: Audience?
    /// The sheet's experiment (nil: none).
    public var experiment: ExperimentDefinition?

    /// A value with every member.
    public init(
        id: String? = nil, kind: SheetKind, size: SheetSize? = nil, style: SheetStyle? = nil, title: String? = nil, screen: String,
        tab: String? = nil, containerId: String? = nil, containerFilter: String? = nil, priority: Int? = nil, inputCount: Int? = nil,
        confirmDismissWhenDirty: Bool? = nil, primaryButton: PrimaryButton? = nil, nonModalUpTo: UndimmedDetent? = nil,
        dismissAffordance: DismissAffordance? = nil, swipeToDismiss: Bool? = nil, tapScrimToDismiss: Bool? = nil, expandsOnScrollToEdge: Bool? = nil,
        cornerRadius: Double? = nil, schedule: Schedule? = nil, cooldownSeconds: Int? = nil, frequency: FrequencyCap? = nil,
        audience: Audience? = nil, experiment: ExperimentDefinition? = nil
    ) {
        self.id = id
        self.kind = kind
        self.size = size
        self.style = style
        self.title = title
        self.screen = screen
        self.tab = tab
        self.containerId = containerId
        self.containerFilter = containerFilter
        self.priority = priority
        self.inputCount = inputCount
        self.confirmDismissWhenDirty = confirmDismissWhenDirty
        self.primaryButton = primaryButton
        self.nonModalUpTo = nonModalUpTo
        self.dismissAffordance = dismissAffordance
        self.swipeToDismiss = swipeToDismiss
        self.tapScrimToDismiss = tapScrimToDismiss
        self.expandsOnScrollToEdge = expandsOnScrollToEdge
        self.cornerRadius = cornerRadius
        self.schedule = schedule
        self.cooldownSeconds = cooldownSeconds
        self.frequency = frequency
        self.audience = audience
        self.experiment = experiment
    }
}

/// A stored sheet definition with every member; defaults filled, nil for absent optional members (openapi.yaml `SheetDefinition`).
public struct SheetDefinition: Codable, Sendable, Equatable, Hashable {
    /// The sheet's id.
    public var id: String
    /// What the sheet is for.
    public var kind: SheetKind
    /// The declared size; nil when the guidelines decide.
    public var size: SheetSize?
    /// The anatomy.
    public var style: SheetStyle
    /// The title, if any.
    public var title: String?
    /// The screen.
    public var screen: String
    /// The tab, if any.
    public var tab: String?
    /// The card container (cards).
    public var containerId: String?
    /// The container filter (cards), if any.
    public var containerFilter: String?
    /// Higher wins.
    public var priority: Int
    /// Inputs on the sheet.
    public var inputCount: Int
    /// Ask before dismissing unsaved input.
    public var confirmDismissWhenDirty: Bool
    /// The primary button, if any.
    public var primaryButton: PrimaryButton?
    /// The largest detent that leaves the content behind interactive.
    public var nonModalUpTo: UndimmedDetent?
    /// The close control, if declared.
    public var dismissAffordance: DismissAffordance?
    /// Override, if declared.
    public var swipeToDismiss: Bool?
    /// Override, if declared.
    public var tapScrimToDismiss: Bool?
    /// Override, if declared.
    public var expandsOnScrollToEdge: Bool?
    /// Corner radius in points, if declared.
    public var cornerRadius: Double?
    /// Card sheets: the time window (nil: none).
    public var schedule: Schedule?
    /// Card sheets: seconds after a dismissal before it presents again (nil: none).
    public var cooldownSeconds: Int?
    /// Card sheets: at most `max` impressions per `periodSeconds` (nil: none).
    public var frequency: FrequencyCap?
    /// Card sheets: who may see it (nil: everyone).
    public var audience: Audience?
    /// The sheet's experiment (nil: none, or an older server).
    public var experiment: ExperimentDefinition?
    /// What the design documents advise against in this definition (nil from an older server).
    public var warnings: [DefinitionWarning]?

    /// A value with every member.
    public init(
        id: String, kind: SheetKind, size: SheetSize? = nil, style: SheetStyle, title: String? = nil, screen: String, tab: String? = nil,
        containerId: String? = nil, containerFilter: String? = nil, priority: Int, inputCount: Int, confirmDismissWhenDirty: Bool,
        primaryButton: PrimaryButton? = nil, nonModalUpTo: UndimmedDetent? = nil, dismissAffordance: DismissAffordance? = nil,
        swipeToDismiss: Bool? = nil, tapScrimToDismiss: Bool? = nil, expandsOnScrollToEdge: Bool? = nil, cornerRadius: Double? = nil,
        schedule: Schedule? = nil, cooldownSeconds: Int? = nil, frequency: FrequencyCap? = nil, audience: Audience? = nil,
        experiment: ExperimentDefinition? = nil, warnings: [DefinitionWarning]? = nil
    ) {
        self.id = id
        self.kind = kind
        self.size = size
        self.style = style
        self.title = title
        self.screen = screen
        self.tab = tab
        self.containerId = containerId
        self.containerFilter = containerFilter
        self.priority = priority
        self.inputCount = inputCount
        self.confirmDismissWhenDirty = confirmDismissWhenDirty
        self.primaryButton = primaryButton
        self.nonModalUpTo = nonModalUpTo
        self.dismissAffordance = dismissAffordance
        self.swipeToDismiss = swipeToDismiss
        self.tapScrimToDismiss = tapScrimToDismiss
        self.expandsOnScrollToEdge = expandsOnScrollToEdge
        self.cornerRadius = cornerRadius
        self.schedule = schedule
        self.cooldownSeconds = cooldownSeconds
        self.frequency = frequency
        self.audience = audience
        self.experiment = experiment
        self.warnings = warnings
    }
}

/// One thing a definition does that the design documents advise against (accepted, not refused).
public struct DefinitionWarning: Codable, Sendable, Equatable, Hashable {
    /// The member.
    public var field: String
    /// Why.
    public var reason: String

    /// A value with every member.
    public init(field: String, reason: String) {
        self.field = field
        self.reason = reason
    }
}

/// The catalog, ordered by id (openapi.yaml `Catalog`).
public struct Catalog: Codable, Sendable, Equatable, Hashable {
    /// Every definition (of this page, for `GET /v1/sheets`).
    public var sheets: [SheetDefinition]
    /// `GET /v1/sheets`: the `after` of the next page; nil on the last page (and in a catalog file).
    public var next: String?

    /// A value with every member.
    public init(sheets: [SheetDefinition], next: String? = nil) {
        self.sheets = sheets
        self.next = next
    }
}

/// A card sheet's time window, RFC 3339 times; eligible only when start <= now < end (openapi.yaml `Schedule`).
public struct Schedule: Codable, Sendable, Equatable, Hashable {
    /// The first instant it may present (nil: no start).
    public var start: String?
    /// The first instant it may not present any more (nil: no end).
    public var end: String?

    /// A value with every member.
    public init(start: String? = nil, end: String? = nil) {
        self.start = start
        self.end = end
    }
}

/// At most `max` impressions in the last `periodSeconds` (openapi.yaml `FrequencyCap`).
public struct FrequencyCap: Codable, Sendable, Equatable, Hashable {
    /// At least 1.
    public var max: Int
    /// At least 1.
    public var periodSeconds: Int

    /// A value with every member.
    public init(max: Int, periodSeconds: Int) {
        self.max = max
        self.periodSeconds = periodSeconds
    }
}

/// Who may see a card sheet; every member given must match (openapi.yaml `Audience`).
public struct Audience: Codable, Sendable, Equatable, Hashable {
    public var platforms: [Platform]?
    public var idioms: [Idiom]?
    /// Dotted numbers, compared with the decision query's `appVersion`.
    public var minAppVersion: String?
    public var maxAppVersion: String?
    /// BCP 47 tags or prefixes, matched against the decision query's `locale` (`de` matches `de-CH`).
    public var locales: [String]?
    /// Matches when the user is in any of them.
    public var segments: [String]?

    /// A value with every member.
    public init(
        platforms: [Platform]? = nil, idioms: [Idiom]? = nil, minAppVersion: String? = nil, maxAppVersion: String? = nil,
        locales: [String]? = nil, segments: [String]? = nil
    ) {
        self.platforms = platforms
        self.idioms = idioms
        self.minAppVersion = minAppVersion
        self.maxAppVersion = maxAppVersion
        self.locales = locales
        self.segments = segments
    }
}

/// What a proposed catalog would change for stored users (`POST /v1/catalog/impact`): the current and
/// the proposed catalog decide for the same user in the same context at the same instant, and each
/// decision that differs is counted once, under its most visible change.
public struct CatalogImpact: Sendable, Equatable {
    /// How a decision changed, from the most visible to the least: a decision counts under the first
    /// that applies.
    public enum Change: String, Sendable, CaseIterable {
        /// Nothing was presented; a sheet would be.
        case shown
        /// A sheet was presented; nothing would be.
        case hidden
        /// Another sheet would be presented (the top of the stack).
        case sheetChanged = "sheet-changed"
        /// The same sheet in another size variant.
        case variantChanged = "variant-changed"
        /// The same sheet and variant with other detents or another initially selected detent.
        case detentsChanged = "detents-changed"
    }

    /// What the comparison looks at in a decision.
    public struct Outcome: Sendable, Equatable {
        public var present: Bool
        public var sheetId: String?
        public var variant: SheetSize?
        public var detents: [DetentID]
        public var selectedDetent: DetentID?

        public init(present: Bool, sheetId: String?, variant: SheetSize?, detents: [DetentID], selectedDetent: DetentID?) {
            self.present = present; self.sheetId = sheetId; self.variant = variant
            self.detents = detents; self.selectedDetent = selectedDetent
        }

        public init(_ decision: Decision) {
            present = decision.present
            sheetId = decision.sheet?.id
            variant = decision.sheet?.variant
            detents = decision.sheet?.detents.map(\.id) ?? []
            selectedDetent = decision.sheet?.selectedDetent
        }
    }

    /// One decision that changed: who, where, and both outcomes.
    public struct Example: Sendable, Equatable {
        public var userId: String
        public var context: ClientContext
        public var before: Outcome
        public var after: Outcome
    }

    /// A presented sheet replaced by another (nil: nothing presented), over the decisions that changed.
    public struct Transition: Sendable, Hashable {
        public var from: String?
        public var to: String?
        public init(from: String?, to: String?) { self.from = from; self.to = to }
    }

    /// Users compared.
    public private(set) var users = 0
    /// Decisions compared (users times contexts).
    public private(set) var decisions = 0
    /// Changed decisions per kind (kinds without any are absent).
    public private(set) var counts: [Change: Int] = [:]
    /// The first changed decisions of each kind, at most `examplesPerChange` each.
    public private(set) var examples: [Change: [Example]] = [:]
    /// Presented sheet before and after, for the decisions whose presented sheet changed.
    public private(set) var transitions: [Transition: Int] = [:]
    public let examplesPerChange: Int

    public init(examplesPerChange: Int = 3) {
        self.examplesPerChange = examplesPerChange
    }

    /// Decisions that differ.
    public var changed: Int { counts.values.reduce(0, +) }

    /// The kind of change from `before` to `after`; nil when the client would see the same thing.
    public static func change(from before: Outcome, to after: Outcome) -> Change? {
        switch (before.present, after.present) {
        case (false, false): return nil
        case (false, true): return .shown
        case (true, false): return .hidden
        case (true, true):
            if before.sheetId != after.sheetId { return .sheetChanged }
            if before.variant != after.variant { return .variantChanged }
            if before.detents != after.detents || before.selectedDetent != after.selectedDetent { return .detentsChanged }
            return nil
        }
    }

    /// The contexts the two catalogs name: every screen, once per tab named on it (a sheet without a
    /// tab belongs to every tab; a screen without tabs once, with none), on an iPhone and an Android
    /// phone in portrait. Ordered by screen, tab, then platform, so that the answer is deterministic.
    public static func contexts(of catalogs: [Catalog]) -> [ClientContext] {
        var tabsByScreen: [String: Set<String>] = [:]
        for catalog in catalogs {
            for sheet in catalog.sortedByID {
                var tabs = tabsByScreen[sheet.screen, default: []]
                if let tab = sheet.tab { tabs.insert(tab) }
                tabsByScreen[sheet.screen] = tabs
            }
        }
        var contexts: [ClientContext] = []
        for screen in tabsByScreen.keys.sorted(by: Self.byteOrder) {
            let tabs = tabsByScreen[screen]!
            let named: [String?] = tabs.isEmpty ? [nil] : tabs.sorted(by: Self.byteOrder)
            for tab in named {
                for platform in Platform.allCases.sorted() {
                    contexts.append(ClientContext(screen: screen, tab: tab, platform: platform))
                }
            }
        }
        return contexts
    }

    /// Compares one user's decisions under both catalogs in every context; `experiments` assigns the
    /// user's arms when either catalog has experiments (the same assigner as the decision route's).
    public mutating func add(
        userId: String, state: UserState, current: Catalog, proposed: Catalog, contexts: [ClientContext], now: Timestamp,
        experiments: ExperimentAssigner? = nil
    ) {
        users += 1
        for context in contexts {
            decisions += 1
            let before = Outcome(SheetPolicy.decide(catalog: current, state: state, context: context, now: now, experiments: experiments))
            let after = Outcome(SheetPolicy.decide(catalog: proposed, state: state, context: context, now: now, experiments: experiments))
            guard let change = Self.change(from: before, to: after) else { continue }
            counts[change, default: 0] += 1
            if before.sheetId != after.sheetId {
                transitions[Transition(from: before.sheetId, to: after.sheetId), default: 0] += 1
            }
            if examples[change, default: []].count < examplesPerChange {
                examples[change, default: []].append(Example(userId: userId, context: context, before: before, after: after))
            }
        }
    }

    private static func byteOrder(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
}

import SheetPolicy
import Testing

/// `CatalogImpact`: which decisions a proposed catalog changes, and how, against cases worked out by hand.
@Suite struct CatalogImpactTests {
    static let now = Timestamp(secondsSince1970: 1_800_000_000)

    static func outcome(_ present: Bool, _ sheet: String? = nil, _ variant: SheetSize? = nil, _ detents: [DetentID] = []) -> CatalogImpact.Outcome {
        CatalogImpact.Outcome(present: present, sheetId: sheet, variant: variant, detents: detents, selectedDetent: detents.first)
    }

    @Test func eachDecisionCountsUnderItsMostVisibleChange() {
        let none = Self.outcome(false)
        let a = Self.outcome(true, "a", .content, [.content])
        #expect(CatalogImpact.change(from: none, to: none) == nil)
        #expect(CatalogImpact.change(from: a, to: a) == nil)
        #expect(CatalogImpact.change(from: none, to: a) == .shown)
        #expect(CatalogImpact.change(from: a, to: none) == .hidden)
        // Another sheet in another variant is a sheet change, not a variant change.
        #expect(CatalogImpact.change(from: a, to: Self.outcome(true, "b", .large, [.large])) == .sheetChanged)
        #expect(CatalogImpact.change(from: a, to: Self.outcome(true, "a", .large, [.large])) == .variantChanged)
        #expect(CatalogImpact.change(from: a, to: Self.outcome(true, "a", .content, [.content, .large])) == .detentsChanged)
        var selected = Self.outcome(true, "a", .content, [.content, .large])
        selected.selectedDetent = .large
        #expect(CatalogImpact.change(from: Self.outcome(true, "a", .content, [.content, .large]), to: selected) == .detentsChanged)
    }

    /// Every screen of both catalogs once per tab named on it (a tab-less sheet belongs to every tab),
    /// a screen without tabs once; both platforms; screens, tabs and platforms in order.
    @Test func theContextsAreTheScreensAndTabsBothCatalogsName() {
        let current = Catalog([
            SheetDefinition(id: "a", kind: .informational, screen: "home", tab: "accounts"),
            SheetDefinition(id: "b", kind: .informational, screen: "home"),
            SheetDefinition(id: "c", kind: .informational, screen: "settings"),
        ])
        let proposed = Catalog([SheetDefinition(id: "d", kind: .informational, screen: "home", tab: "cards")])
        let contexts = CatalogImpact.contexts(of: [current, proposed]).map { "\($0.screen)/\($0.tab ?? "-")/\($0.platform.rawValue)" }
        #expect(
            contexts == [
                "home/accounts/android", "home/accounts/ios", "home/cards/android", "home/cards/ios", "settings/-/android", "settings/-/ios",
            ])
    }

    /// Current: `offers` (content size) on container `c`. Proposed: `offers` in large, and `promo`
    /// (priority 10, wins over `offers`) on container `p`. By hand, per user, on both platforms:
    /// - A (c=2): offers content -> offers large: variant-changed (2 decisions)
    /// - B (c=2, p=1): offers -> promo: sheet-changed (2), transition offers -> promo
    /// - C (nothing): nothing either way: unchanged
    /// - D (p=1): nothing -> promo: shown (2), transition none -> promo
    /// - E (c=2, latched at 2): nothing either way (the latch holds offers): unchanged
    @Test func decisionsChangeAsWorkedOutByHand() throws {
        let current = Catalog([SheetDefinition(id: "offers", kind: .cards, size: .content, screen: "home", containerId: "c")])
        let proposed = Catalog([
            SheetDefinition(id: "offers", kind: .cards, size: .large, screen: "home", containerId: "c"),
            SheetDefinition(id: "promo", kind: .cards, size: .content, screen: "home", containerId: "p", priority: 10),
        ])
        func state(c: Int? = nil, p: Int? = nil, latched: Int? = nil) -> UserState {
            var state = UserState()
            if let c { state.containers[ContainerKey(containerId: "c")] = ContainerCount(count: c) }
            if let p { state.containers[ContainerKey(containerId: "p")] = ContainerCount(count: p) }
            if let latched { state.latches["offers"] = latched }
            return state
        }
        let users: [(String, UserState)] = [
            ("A", state(c: 2)), ("B", state(c: 2, p: 1)), ("C", state()), ("D", state(p: 1)), ("E", state(c: 2, latched: 2)),
        ]
        let contexts = CatalogImpact.contexts(of: [current, proposed])
        #expect(contexts.count == 2)
        var impact = CatalogImpact(examplesPerChange: 1)
        for (id, s) in users { impact.add(userId: id, state: s, current: current, proposed: proposed, contexts: contexts, now: Self.now) }

        #expect(impact.users == 5)
        #expect(impact.decisions == 10)
        #expect(impact.changed == 6)
        #expect(impact.counts == [.variantChanged: 2, .sheetChanged: 2, .shown: 2])
        #expect(impact.transitions == [.init(from: "offers", to: "promo"): 2, .init(from: nil, to: "promo"): 2])
        // The first example of each kind, at most one each (examplesPerChange).
        #expect(impact.examples[.variantChanged]?.map(\.userId) == ["A"])
        #expect(impact.examples[.sheetChanged]?.map(\.userId) == ["B"])
        #expect(impact.examples[.shown]?.map(\.userId) == ["D"])
        let example = try #require(impact.examples[.variantChanged]?.first)
        #expect(example.before.variant == .content && example.after.variant == .large)
        #expect(example.before.sheetId == "offers" && example.after.sheetId == "offers")
    }

    /// A proposed experiment decides with the user's arm, as the decision route does: a user in the
    /// arm that overrides the size sees a variant change, a holdout user a hidden sheet, a user in the
    /// plain arm nothing.
    @Test func aProposedExperimentDecidesWithTheUsersArm() throws {
        let current = Catalog([Fixtures.offers])
        var offers = Fixtures.offers
        offers.experiment = ExperimentPolicyTests.experiment()
        let proposed = Catalog([offers])
        var state = UserState()
        state.containers[ContainerKey(containerId: "offers")] = ContainerCount(count: 3)
        let contexts = [ClientContext(screen: "home", tab: "accounts", platform: .ios)]
        var impact = CatalogImpact()
        // Buckets 100 (holdout, below 2000), 3000 (arm a), 7000 (arm b: size large).
        for (user, bucket) in [("held", 100), ("plain", 3000), ("large", 7000)] {
            impact.add(
                userId: user, state: state, current: current, proposed: proposed, contexts: contexts, now: Self.now,
                experiments: ExperimentPolicyTests.assigner(user, bucket: bucket))
        }
        #expect(impact.counts == [.hidden: 1, .variantChanged: 1])
        #expect(impact.examples[.hidden]?.map(\.userId) == ["held"])
        #expect(impact.examples[.variantChanged]?.map(\.userId) == ["large"])
    }

    /// The same catalog changes nothing, whatever the users.
    @Test func anUnchangedCatalogChangesNothing() {
        let catalog = Catalog([SheetDefinition(id: "offers", kind: .cards, screen: "home", containerId: "c")])
        var state = UserState()
        state.containers[ContainerKey(containerId: "c")] = ContainerCount(count: 3)
        var impact = CatalogImpact()
        impact.add(userId: "u", state: state, current: catalog, proposed: catalog, contexts: CatalogImpact.contexts(of: [catalog]), now: Self.now)
        #expect(impact.decisions == 2)
        #expect(impact.changed == 0 && impact.transitions.isEmpty && impact.examples.isEmpty)
    }
}

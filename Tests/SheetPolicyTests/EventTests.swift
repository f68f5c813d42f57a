import SheetPolicy
import Testing

/// One event folded into the state the setup events built.
struct EventCase: Sendable, CustomTestStringConvertible {
    var name: String
    var setup: [UserEvent]
    var event: UserEvent
    var effect: EventEffect
    /// The latches after the event, when checked.
    var latches: [String: Int]? = nil
    var testDescription: String { name }

    static func effect(
        applied: Bool = true, changed: Bool, count: Int = 0, latched: Bool = false, stack: [String] = []
    ) -> EventEffect {
        EventEffect(applied: applied, changed: changed, count: count, latched: latched, stack: stack)
    }

    static let all: [EventCase] = [
        EventCase(
            name: "a first count is stored and changes from the implicit 0",
            setup: [], event: .count("offers", 3, seq: 1), effect: effect(changed: true, count: 3)),
        EventCase(
            name: "a first count of 0 is applied but changes nothing",
            setup: [], event: .count("offers", 0), effect: effect(changed: false, count: 0)),
        EventCase(
            name: "the same count again is applied and unchanged",
            setup: [.count("offers", 3, seq: 1)], event: .count("offers", 3, seq: 2),
            effect: effect(changed: false, count: 3)),
        EventCase(
            name: "a seq equal to the last applied one is not applied",
            setup: [.count("offers", 3, seq: 5)], event: .count("offers", 9, seq: 5),
            effect: effect(applied: false, changed: false, count: 3)),
        EventCase(
            name: "a seq below the last applied one is not applied",
            setup: [.count("offers", 3, seq: 5)], event: .count("offers", 0, seq: 4),
            effect: effect(applied: false, changed: false, count: 3)),
        EventCase(
            name: "a report without seq is applied after one with seq",
            setup: [.count("offers", 3, seq: 5)], event: .count("offers", 4),
            effect: effect(changed: true, count: 4)),
        EventCase(
            name: "seqs are kept per container and filter",
            setup: [.count("offers", 3, seq: 5)], event: .count("offers", 2, filter: "vip", seq: 1),
            effect: effect(changed: true, count: 2)),
        EventCase(
            name: "dismissing a card sheet latches it at its count and keeps the count",
            setup: [.count("offers", 3)], event: .dismiss("offers"),
            effect: effect(changed: true, count: 3, latched: true), latches: ["offers": 3]),
        EventCase(
            name: "dismissing a card sheet with no cards latches it at 0",
            setup: [], event: .dismiss("offers"),
            effect: effect(changed: true, count: 0, latched: true), latches: ["offers": 0]),
        EventCase(
            name: "004: a programmatic dismissal of a card sheet does not latch it (the app closed it, not the customer)",
            // (The state changes all the same: the dismissal's time is kept for cooldowns, issue 15.)
            setup: [.count("offers", 3)], event: .dismiss("offers", .programmatic),
            effect: effect(changed: true, count: 0), latches: [:]),
        EventCase(
            name: "dismissing a sheet that is not a card sheet latches nothing",
            setup: [.push("about")], event: .dismiss("about"), effect: effect(changed: true), latches: [:]),
        EventCase(
            name: "a differing count releases the latch of sheets watching that key",
            setup: [.count("offers", 3), .dismiss("offers")], event: .count("offers", 4),
            effect: effect(changed: true, count: 4), latches: [:]),
        EventCase(
            name: "a stale report does not release a latch",
            setup: [.count("offers", 3, seq: 2), .dismiss("offers")], event: .count("offers", 4, seq: 1),
            effect: effect(applied: false, changed: false, count: 3), latches: ["offers": 3]),
        EventCase(
            name: "a count under another filter leaves the latch alone",
            setup: [.count("offers", 3), .dismiss("offers")], event: .count("offers", 4, filter: "vip"),
            effect: effect(changed: true, count: 4), latches: ["offers": 3]),
        EventCase(
            name: "a count of 0 releases a latch taken at 0",
            setup: [.dismiss("offers")], event: .count("offers", 0),
            effect: effect(changed: false, count: 0), latches: [:]),
        EventCase(
            name: "push on an empty stack makes a root",
            setup: [], event: .push("about"), effect: effect(changed: true, stack: ["about"])),
        EventCase(
            name: "push nests on the top",
            setup: [.push("account-actions")], event: .push("about"),
            effect: effect(changed: true, stack: ["account-actions", "about"])),
        EventCase(
            name: "replace swaps the top",
            setup: [.push("account-actions"), .push("transfer-amount")], event: .replace("transfer-payee"),
            effect: effect(changed: true, stack: ["account-actions", "transfer-payee"])),
        EventCase(
            name: "a parent in the stack cuts it back first",
            setup: [.push("account-actions"), .push("about")], event: .push("offer-detail", parent: "account-actions"),
            effect: effect(changed: true, stack: ["account-actions", "offer-detail"])),
        EventCase(
            name: "a parent not in the stack re-roots it",
            setup: [.count("offers", 1), .push("about")], event: .push("offer-detail", parent: "offers"),
            effect: effect(changed: true, stack: ["offers", "offer-detail"])),
        EventCase(
            name: "a nested sheet over a card sheet with no cards is not kept",
            setup: [], event: .push("offer-detail", parent: "offers"), effect: effect(changed: false)),
        EventCase(
            name: "opening a sheet already in the stack returns to it",
            setup: [.push("account-actions"), .push("about"), .push("offer-detail")], event: .push("about"),
            effect: effect(changed: true, stack: ["account-actions", "about"])),
        EventCase(
            name: "dismissing the top returns to the sheet below",
            setup: [.push("account-actions"), .push("about")], event: .dismiss("about"),
            effect: effect(changed: true, stack: ["account-actions"])),
        EventCase(
            name: "dismissing a lower sheet removes everything above it",
            setup: [.push("account-actions"), .push("about"), .push("offer-detail")], event: .dismiss("about"),
            effect: effect(changed: true, stack: ["account-actions"])),
        EventCase(
            name: "dismissing the root clears the stack",
            setup: [.push("account-actions"), .push("about")], event: .dismiss("account-actions"),
            effect: effect(changed: true)),
        EventCase(
            name: "dismissing a sheet not in the stack leaves it",
            setup: [.push("account-actions")], event: .dismiss("about"),
            effect: effect(changed: false, stack: ["account-actions"])),
        EventCase(
            name: "a stack left holding only a card sheet is dropped",
            setup: [.count("offers", 1), .push("offer-detail", parent: "offers")], event: .dismiss("offer-detail"),
            effect: effect(changed: true)),
        EventCase(
            name: "a count of 0 clears a stack rooted on a card sheet watching that key",
            setup: [.count("offers", 1), .push("offer-detail", parent: "offers")], event: .count("offers", 0),
            effect: effect(changed: true, count: 0)),
        EventCase(
            name: "a changed non-zero count keeps a stack rooted on a card sheet",
            setup: [.count("offers", 1), .push("offer-detail", parent: "offers")], event: .count("offers", 2),
            effect: effect(changed: true, count: 2, stack: ["offers", "offer-detail"])),
        EventCase(
            name: "dismissing the root card sheet latches it and clears the stack",
            setup: [.count("offers", 2), .push("offer-detail", parent: "offers")], event: .dismiss("offers"),
            effect: effect(changed: true, count: 2, latched: true), latches: ["offers": 2]),
        EventCase(
            name: "a measured height changes the state once",
            setup: [.height("about", 300)], event: .height("about", 320), effect: effect(changed: true)),
        EventCase(
            name: "the same measured height again changes nothing",
            setup: [.height("about", 300)], event: .height("about", 300), effect: effect(changed: false)),
    ]
}

struct EventTests {
    /// Each event has the documented effect on the state and says so.
    @Test(arguments: EventCase.all)
    func foldsEventIntoState(_ c: EventCase) {
        var state = fold(c.setup)
        let before = state
        let effect = SheetPolicy.apply(c.event, to: &state, catalog: Fixtures.catalog, now: Fixtures.now)
        #expect(effect == c.effect)
        #expect(state.stack.map(\.sheetId) == effect.stack)
        if let latches = c.latches { #expect(state.latches == latches) }
        if !effect.applied { #expect(state == before) }
        if case .countReported(let id, let filter, _, _) = c.event, effect.applied {
            #expect(state.count(for: ContainerKey(containerId: id, filter: filter)) == effect.count)
        }
        if case .sheetDismissed = c.event { #expect(state.containers == before.containers) }
    }

    /// The highest seq applied is kept, also when a later report carries none.
    @Test func keepsTheHighestSeq() {
        let state = fold([.count("offers", 3, seq: 5), .count("offers", 4), .count("offers", 6, seq: 7)])
        #expect(state.containers[ContainerKey(containerId: "offers")] == ContainerCount(count: 6, seq: 7))
        let again = fold([.count("offers", 3, seq: 5), .count("offers", 4)])
        #expect(again.containers[ContainerKey(containerId: "offers")] == ContainerCount(count: 4, seq: 5))
    }

    /// A replace records the step it replaced, so the decision can tell the transition.
    @Test func replaceRecordsTheReplacedStep() {
        let state = fold([.push("transfer-amount"), .replace("transfer-payee")])
        #expect(state.stack == [StackEntry(sheetId: "transfer-payee", mode: .replace, replacedSheetId: "transfer-amount")])
    }
}

struct DefensiveTests {
    /// Stack entries whose sheet left the catalog are ignored, the rest still shows.
    @Test func ignoresStackEntriesNoLongerInTheCatalog() {
        var catalog = Fixtures.catalog
        let state = fold([.push("account-actions"), .push("about"), .push("offer-detail")])
        catalog.remove(id: "about")
        let decision = SheetPolicy.decide(catalog: catalog, state: state, context: Fixtures.context(), now: Fixtures.now)
        #expect(decision.stack.map(\.id) == ["account-actions", "offer-detail"])
        #expect(decision.trace.contains { $0.contains("'about'") && $0.contains("no longer in the catalog") })
    }

    /// A stored stack rooted on a card sheet that is no longer eligible is never presented.
    @Test(arguments: [
        UserState(containers: [ContainerKey(containerId: "offers"): ContainerCount(count: 0)]),
        UserState(containers: [ContainerKey(containerId: "offers"): ContainerCount(count: 2)], latches: ["offers": 2]),
    ])
    func neverPresentsAStackRootedOnAClosedCardSheet(_ base: UserState) {
        var state = base
        state.stack = [StackEntry(sheetId: "offers", mode: .push), StackEntry(sheetId: "offer-detail", mode: .push)]
        let decision = SheetPolicy.decide(catalog: Fixtures.catalog, state: state, context: Fixtures.context(), now: Fixtures.now)
        #expect(!decision.present)
        #expect(decision.stack.isEmpty)
        #expect(decision.reason != .stack)
    }

    /// A stored stack holding only a card sheet falls back to the card rules.
    @Test func loneCardSheetStackFallsBackToTheCardRules() {
        let state = UserState(
            containers: [ContainerKey(containerId: "offers"): ContainerCount(count: 2)],
            stack: [StackEntry(sheetId: "offers", mode: .push)])
        let decision = SheetPolicy.decide(catalog: Fixtures.catalog, state: state, context: Fixtures.context(), now: Fixtures.now)
        #expect(decision.reason == .cardsAvailable)
        #expect(decision.stack.map(\.id) == ["offers"])
        #expect(decision.sheet?.transition == nil)
    }

    /// A latch stored at a count the container no longer has does not keep the sheet closed.
    @Test func staleLatchDoesNotHold() {
        let state = UserState(
            containers: [ContainerKey(containerId: "offers"): ContainerCount(count: 4)], latches: ["offers": 3])
        let decision = SheetPolicy.decide(catalog: Fixtures.catalog, state: state, context: Fixtures.context(), now: Fixtures.now)
        #expect(decision.sheet?.id == "offers")
    }
}

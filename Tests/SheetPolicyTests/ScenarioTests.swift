import SheetPolicy
import Testing

/// What a step expects of the presented top; `nil` members are not checked (`.some(nil)` expects null).
struct TopExpectation: Sendable {
    var variant: SheetSize? = nil
    var detents: [DetentID]? = nil
    var contentHeight: Double? = nil
    var selected: DetentID? = nil
    var grabber: Bool? = nil
    var swipe: Bool? = nil
    var tapScrim: Bool? = nil
    var undimmed: DetentID?? = nil
    var affordance: DismissAffordance? = nil
    var confirm: Bool? = nil
    var expands: Bool? = nil
    var parentScales: Bool? = nil
    var awaiting: Bool? = nil
    var scrollable: Bool? = nil
    var scrimAccessible: Bool? = nil
    var header: String?? = nil
    var button: ButtonSize?? = nil
    var style: PresentationStyle? = nil
    var transition: Transition?? = nil
    // iOS block.
    var modalInPresentation: Bool? = nil
    var edgeAttached: Bool? = nil
    var cornerRadius: Double?? = nil
    // Android block.
    var skipPartiallyExpanded: Bool? = nil
    var initialValue: AndroidSheetValue? = nil
    var gestures: Bool? = nil
    var backPress: Bool? = nil
    var confirmDialog: Bool? = nil
}

/// One step of a scenario: events folded in, then the decision in a context.
struct Step: Sendable {
    var events: [UserEvent]
    var context: ClientContext
    var present: Bool
    var reason: DecisionReason
    var stack: [String]
    var yielded: [String] = []
    var top: TopExpectation? = nil
}

/// A named scenario from the rules or the design documents.
struct Scenario: Sendable, CustomTestStringConvertible {
    var name: String
    var steps: [Step]
    var testDescription: String { name }
}

private let home = Fixtures.context()
private let transfer = Fixtures.context("transfer", tab: nil)

/// Shorthand for a step that presents `stack`.
private func shows(
    _ stack: [String], after events: [UserEvent], in context: ClientContext = home, reason: DecisionReason = .stack,
    yielded: [String] = [], top: TopExpectation? = nil
) -> Step {
    Step(events: events, context: context, present: true, reason: reason, stack: stack, yielded: yielded, top: top)
}

/// Shorthand for a step that presents nothing.
private func showsNothing(_ reason: DecisionReason, after events: [UserEvent], in context: ClientContext = home) -> Step {
    Step(events: events, context: context, present: false, reason: reason, stack: [])
}

extension Scenario {
    static let all: [Scenario] = rules + documents

    /// One or more cases per numbered rule of issue 3.
    static let rules: [Scenario] = [
        Scenario(name: "rule 1: a card sheet with cards on its screen and tab is eligible", steps: [
            shows(["offers"], after: [.count("offers", 3)], reason: .cardsAvailable),
        ]),
        Scenario(name: "rule 1: a card sheet is not presented on another tab, nor without a tab", steps: [
            showsNothing(.noCards, after: [.count("offers", 3)], in: Fixtures.context(tab: "cards")),
            showsNothing(.noCards, after: [], in: Fixtures.context(tab: nil)),
        ]),
        Scenario(name: "rule 1: nothing is presented on another screen", steps: [
            showsNothing(.noSheetForScreen, after: [.count("offers", 3)], in: Fixtures.context("settings", tab: nil)),
        ]),
        Scenario(name: "rule 1: a card sheet that names no tab presents on every tab of its screen", steps: [
            shows(["tip-cards"], after: [.count("tips", 2)], in: Fixtures.context(tab: "cards"), reason: .cardsAvailable),
        ]),
        Scenario(name: "rule 2: a count of 0 closes and releases the latch", steps: [
            showsNothing(.latched, after: [.count("offers", 3), .dismiss("offers")]),
            showsNothing(.noCards, after: [.count("offers", 0)]),
            shows(["offers"], after: [.count("offers", 3)], reason: .cardsAvailable),
        ]),
        Scenario(name: "rule 2: dismissing a card sheet that is not shown latches it all the same", steps: [
            showsNothing(.noCards, after: [.count("offers", 3), .dismiss("offers")], in: Fixtures.context(tab: "cards")),
            showsNothing(.latched, after: []),
        ]),
        Scenario(name: "rule 3: the highest priority presents, ties go to the smallest id, the others yield", steps: [
            shows(["offers"], after: [.count("promo", 1), .count("tips", 1), .count("offers", 1)],
                  reason: .cardsAvailable, yielded: ["promo", "tip-cards"]),
            shows(["tip-cards"], after: [.dismiss("offers")], reason: .cardsAvailable, yielded: ["promo"]),
        ]),
        Scenario(name: "rule 4: the stack wins over card sheets, which yield to it", steps: [
            shows(["about"], after: [.count("promo", 2), .push("about")], yielded: ["promo"],
                  top: TopExpectation(transition: .some(nil))),
        ]),
        Scenario(name: "rule 4: a stack is kept but not shown on another screen", steps: [
            showsNothing(.noSheetForScreen, after: [.push("transfer-amount")], in: Fixtures.context("settings", tab: nil)),
            showsNothing(.noCards, after: [], in: home),
            shows(["transfer-amount"], after: [], in: transfer),
        ]),
        Scenario(name: "rule 4: dismissing a lower sheet removes it and everything above it", steps: [
            shows(["account-actions", "offer-detail", "about"],
                  after: [.push("account-actions"), .push("offer-detail"), .push("about")]),
            shows(["account-actions"], after: [.dismiss("offer-detail")]),
            showsNothing(.noCards, after: [.dismiss("account-actions")]),
        ]),
        Scenario(name: "rule 4: opening with a parent in the stack cuts back to that parent first", steps: [
            shows(["account-actions", "offer-detail"],
                  after: [.push("account-actions"), .push("about"), .push("offer-detail", parent: "account-actions")],
                  top: TopExpectation(transition: Transition(from: "account-actions", mode: .push, waitForContentHeight: false))),
        ]),
        Scenario(name: "rule 4: opening with a parent not in the stack re-roots it on that parent", steps: [
            shows(["offers", "offer-detail"],
                  after: [.count("offers", 1), .push("about"), .push("offer-detail", parent: "offers")]),
        ]),
        Scenario(name: "rule 4: replace on an empty stack acts as push", steps: [
            shows(["transfer-amount"], after: [.replace("transfer-amount")], in: transfer,
                  top: TopExpectation(transition: .some(nil))),
        ]),
        Scenario(name: "rule 4: a stack rooted on a card sheet is cleared when its count drops to 0", steps: [
            shows(["offers", "offer-detail"], after: [.count("offers", 2), .push("offer-detail", parent: "offers")]),
            showsNothing(.noCards, after: [.count("offers", 0)]),
        ]),
        Scenario(name: "rule 4: a stack rooted on a card sheet is cleared when the card sheet is latched", steps: [
            shows(["offers", "offer-detail"], after: [.count("offers", 2), .push("offer-detail", parent: "offers")]),
            showsNothing(.latched, after: [.dismiss("offers")]),
        ]),
        Scenario(name: "rule 5: content size waits at medium until its height is known, then hugs it", steps: [
            shows(["about"], after: [.push("about")], top: TopExpectation(
                variant: .content, detents: [.medium], selected: .medium, awaiting: true, scrollable: false)),
            shows(["about"], after: [.height("about", 320, on: .android)], top: TopExpectation(
                detents: [.medium], awaiting: true)),
            shows(["about"], after: [.height("about", 412.5)], top: TopExpectation(
                variant: .content, detents: [.content], contentHeight: 412.5, selected: .content, awaiting: false,
                scrollable: false)),
        ]),
        Scenario(name: "rule 5: a content height reaching the viewport gives the large detent, scrollable", steps: [
            shows(["about"], after: [.push("about"), .height("about", 900)], in: Fixtures.context(viewport: 800),
                  top: TopExpectation(variant: .content, detents: [.large], selected: .large, scrollable: true)),
        ]),
        Scenario(name: "rule 5: large opens large only, the parent scales behind, scrollable", steps: [
            shows(["offer-detail"], after: [.push("offer-detail")], top: TopExpectation(
                variant: .large, detents: [.large], selected: .large, expands: false, parentScales: true,
                scrollable: true)),
        ]),
        Scenario(name: "rule 5: medium opens medium, grows to large, expands on scroll to the edge", steps: [
            shows(["account-actions"], after: [.push("account-actions")], top: TopExpectation(
                variant: .medium, detents: [.medium, .large], selected: .medium, expands: true, parentScales: false,
                scrollable: true)),
        ]),
        Scenario(name: "rule 5: an input sheet with several inputs defaults to large, with one to content", steps: [
            shows(["filters"], after: [.push("filters")], top: TopExpectation(variant: .large)),
            shows(["nickname"], after: [.dismiss("filters"), .push("nickname")], top: TopExpectation(variant: .content)),
        ]),
        Scenario(name: "rule 6: the keyboard selects large, and the variant's default returns when it hides", steps: [
            shows(["nickname"], after: [.push("nickname"), .height("nickname", 240)],
                  in: Fixtures.context(keyboard: true),
                  top: TopExpectation(detents: [.content, .large], contentHeight: 240, selected: .large)),
            shows(["nickname"], after: [], top: TopExpectation(detents: [.content], selected: .content)),
            shows(["account-actions"], after: [.dismiss("nickname"), .push("account-actions")],
                  in: Fixtures.context(keyboard: true), top: TopExpectation(detents: [.medium, .large], selected: .large)),
        ]),
        Scenario(name: "rule 7: on iOS the grabber shows only on the medium variant", steps: [
            shows(["account-actions"], after: [.push("account-actions")], top: TopExpectation(grabber: true)),
            shows(["offer-detail"], after: [.dismiss("account-actions"), .push("offer-detail")],
                  top: TopExpectation(grabber: false)),
            shows(["about"], after: [.dismiss("offer-detail"), .push("about")], top: TopExpectation(grabber: false)),
        ]),
        Scenario(name: "rule 7: on Android the drag handle always shows; only medium keeps the partial state", steps: [
            shows(["about"], after: [.push("about")], in: Fixtures.context(platform: .android), top: TopExpectation(
                grabber: true, skipPartiallyExpanded: true, initialValue: .expanded)),
            shows(["account-actions"], after: [.dismiss("about"), .push("account-actions")],
                  in: Fixtures.context(platform: .android),
                  top: TopExpectation(grabber: true, skipPartiallyExpanded: false, initialValue: .partiallyExpanded)),
        ]),
        Scenario(name: "rule 8: the dismissal affordance follows the kind", steps: [
            shows(["about"], after: [.push("about")], top: TopExpectation(
                swipe: true, tapScrim: true, affordance: .closeIcon, scrimAccessible: true)),
            shows(["account-actions"], after: [.dismiss("about"), .push("account-actions")],
                  top: TopExpectation(affordance: DismissAffordance.none)),
            shows(["filters"], after: [.dismiss("account-actions"), .push("filters")],
                  top: TopExpectation(affordance: .cancelButton)),
            shows(["offers"], after: [.dismiss("filters"), .count("offers", 1)], reason: .cardsAvailable,
                  top: TopExpectation(affordance: DismissAffordance.none)),
        ]),
        Scenario(name: "rule 8: a sheet that cannot be swiped away is modal in presentation", steps: [
            shows(["locked"], after: [.push("locked")], in: Fixtures.context("vault", tab: nil), top: TopExpectation(
                swipe: false, tapScrim: false, scrimAccessible: false, modalInPresentation: true)),
            shows(["locked"], after: [], in: Fixtures.context("vault", tab: nil, platform: .android),
                  top: TopExpectation(gestures: false, backPress: false, confirmDialog: false)),
        ]),
        Scenario(name: "rule 9: the scrim dims every detent unless nonModalUpTo names one", steps: [
            shows(["account-actions"], after: [.push("account-actions")], top: TopExpectation(undimmed: .medium)),
            shows(["about"], after: [.dismiss("account-actions"), .push("about")], top: TopExpectation(undimmed: .some(nil))),
        ]),
        Scenario(name: "rule 10: iPad presents a popover with the same detents", steps: [
            shows(["account-actions"], after: [.push("account-actions")], in: Fixtures.context(idiom: .pad),
                  top: TopExpectation(detents: [.medium, .large], style: .popover, edgeAttached: false)),
        ]),
        Scenario(name: "rule 10: iPhone landscape presents an edge-attached sheet", steps: [
            shows(["about"], after: [.push("about")], in: Fixtures.context(orientation: .landscape),
                  top: TopExpectation(style: .edgeAttached, edgeAttached: true)),
            shows(["about"], after: [], top: TopExpectation(style: .sheet, edgeAttached: true)),
        ]),
        Scenario(name: "rule 10: Android is always a bottom sheet", steps: [
            shows(["about"], after: [.push("about")],
                  in: Fixtures.context(platform: .android, idiom: .pad, orientation: .landscape),
                  top: TopExpectation(style: .sheet)),
        ]),
        Scenario(name: "rule 11: a nested sheet pushes on its parent", steps: [
            shows(["account-actions", "offer-detail"], after: [.push("account-actions"), .push("offer-detail")],
                  top: TopExpectation(transition: Transition(from: "account-actions", mode: .push, waitForContentHeight: false))),
            shows(["account-actions", "offer-detail", "about"], after: [.push("about")],
                  top: TopExpectation(transition: Transition(from: "offer-detail", mode: .push, waitForContentHeight: true))),
        ]),
        Scenario(name: "rule 12: strict sheets have the sticky header and a medium button, flexible ones a small one", steps: [
            shows(["filters"], after: [.push("filters")], top: TopExpectation(header: "Filter Transactions", button: .medium)),
            shows(["about"], after: [.dismiss("filters"), .push("about")], top: TopExpectation(
                header: .some(nil), button: .small)),
            shows(["offer-detail"], after: [.dismiss("about"), .push("offer-detail")], top: TopExpectation(
                header: .some(nil), button: .some(nil), cornerRadius: 24)),
            shows(["account-actions"], after: [.dismiss("offer-detail"), .push("account-actions")],
                  top: TopExpectation(cornerRadius: .some(nil))),
        ]),
    ]

    /// The scenarios the design documents describe.
    static let documents: [Scenario] = [
        Scenario(name: "card-count lifecycle: arrive, present, dismiss, same count stays closed, change, 0 closes", steps: [
            showsNothing(.noCards, after: []),
            shows(["offers"], after: [.count("offers", 3)], reason: .cardsAvailable,
                  top: TopExpectation(variant: .content, awaiting: true, transition: .some(nil))),
            shows(["offers"], after: [.height("offers", 280)], reason: .cardsAvailable,
                  top: TopExpectation(detents: [.content], contentHeight: 280)),
            showsNothing(.latched, after: [.dismiss("offers")]),
            showsNothing(.latched, after: [.count("offers", 3)]),
            shows(["offers"], after: [.count("offers", 4)], reason: .cardsAvailable),
            showsNothing(.latched, after: [.dismiss("offers", .scrim)]),
            shows(["offers"], after: [.count("offers", 3)], reason: .cardsAvailable),
            showsNothing(.noCards, after: [.count("offers", 0)]),
        ]),
        Scenario(name: "filtered container: only counts under the sheet's own filter count", steps: [
            shows(["vip-offers"], after: [.count("offers", 2, filter: "vip")], reason: .cardsAvailable),
            shows(["vip-offers"], after: [.count("offers", 4)], reason: .cardsAvailable, yielded: ["offers"]),
            shows(["offers"], after: [.dismiss("vip-offers")], reason: .cardsAvailable),
            shows(["offers"], after: [.count("offers", 5)], reason: .cardsAvailable),
            shows(["vip-offers"], after: [.count("offers", 3, filter: "vip")], reason: .cardsAvailable,
                  yielded: ["offers"]),
        ]),
        Scenario(name: "priority: a lower card sheet yields, then presents once the winner is dismissed", steps: [
            shows(["offers"], after: [.count("offers", 1), .count("promo", 7)], reason: .cardsAvailable,
                  yielded: ["promo"]),
            shows(["promo"], after: [.dismiss("offers")], reason: .cardsAvailable),
        ]),
        Scenario(name: "nested push and pop over a card sheet returns to the card sheet", steps: [
            shows(["offers"], after: [.count("offers", 2)], reason: .cardsAvailable),
            shows(["offers", "offer-detail"], after: [.push("offer-detail", parent: "offers")],
                  top: TopExpectation(transition: Transition(from: "offers", mode: .push, waitForContentHeight: false))),
            shows(["offers"], after: [.dismiss("offer-detail")], reason: .cardsAvailable,
                  top: TopExpectation(transition: .some(nil))),
            showsNothing(.latched, after: [.dismiss("offers")]),
        ]),
        Scenario(name: "a flow of large steps keeps the sheet and transitions the content", steps: [
            shows(["transfer-amount"], after: [.push("transfer-amount")], in: transfer,
                  top: TopExpectation(transition: .some(nil))),
            shows(["transfer-payee"], after: [.replace("transfer-payee")], in: transfer, top: TopExpectation(
                transition: Transition(from: "transfer-amount", mode: .replaceContent, waitForContentHeight: false))),
        ]),
        Scenario(name: "a flow into a content-sized step resizes only once its height is known", steps: [
            shows(["transfer-done"], after: [.push("transfer-amount"), .replace("transfer-done")], in: transfer,
                  top: TopExpectation(detents: [.medium], awaiting: true,
                      transition: Transition(from: "transfer-amount", mode: .resize, waitForContentHeight: true))),
            shows(["transfer-done"], after: [.height("transfer-done", 360)], in: transfer,
                  top: TopExpectation(detents: [.content], contentHeight: 360, awaiting: false,
                      transition: Transition(from: "transfer-amount", mode: .resize, waitForContentHeight: false))),
        ]),
        Scenario(name: "keyboard up and down on a medium sheet", steps: [
            shows(["account-actions"], after: [.push("account-actions")], in: Fixtures.context(keyboard: true),
                  top: TopExpectation(detents: [.medium, .large], selected: .large)),
            shows(["account-actions"], after: [], top: TopExpectation(detents: [.medium, .large], selected: .medium)),
        ]),
        Scenario(name: "iPad: a card sheet as a popover", steps: [
            shows(["offers"], after: [.count("offers", 1), .height("offers", 300)], in: Fixtures.context(idiom: .pad),
                  reason: .cardsAvailable, top: TopExpectation(detents: [.content], style: .popover, edgeAttached: false)),
        ]),
        Scenario(name: "iPhone landscape: a large sheet edge-attached", steps: [
            shows(["filters"], after: [.push("filters")], in: Fixtures.context(orientation: .landscape),
                  top: TopExpectation(detents: [.large], style: .edgeAttached, edgeAttached: true)),
        ]),
        Scenario(name: "Android: a content card sheet measured on Android only", steps: [
            shows(["offers"], after: [.count("offers", 1), .height("offers", 500), .height("offers", 300, on: .android)],
                  in: Fixtures.context(platform: .android), reason: .cardsAvailable,
                  top: TopExpectation(detents: [.content], contentHeight: 300, grabber: true, style: .sheet,
                      skipPartiallyExpanded: true, initialValue: .expanded, gestures: true, backPress: true)),
        ]),
        Scenario(name: "a dirty form confirms dismissal first, on both platforms", steps: [
            shows(["filters"], after: [.push("filters")], in: Fixtures.context(dirty: true),
                  top: TopExpectation(confirm: true, modalInPresentation: true)),
            shows(["filters"], after: [], in: Fixtures.context(platform: .android, dirty: true),
                  top: TopExpectation(confirm: true, confirmDialog: true)),
            shows(["filters"], after: [], top: TopExpectation(confirm: false, modalInPresentation: false)),
            shows(["filters", "about"], after: [.push("about")], in: Fixtures.context(dirty: true),
                  top: TopExpectation(confirm: false)),
        ]),
    ]
}

struct ScenarioTests {
    /// Each scenario's decisions match, step by step, as events are folded in.
    @Test(arguments: Scenario.all)
    func decidesEachStepAsExpected(_ scenario: Scenario) throws {
        var state = UserState()
        for (index, step) in scenario.steps.enumerated() {
            state = fold(step.events, into: state)
            let decision = SheetPolicy.decide(catalog: Fixtures.catalog, state: state, context: step.context)
            let where_ = "step \(index + 1)"
            #expect(decision.present == step.present, "\(where_)")
            #expect(decision.reason == step.reason, "\(where_)")
            #expect(decision.stack.map(\.id) == step.stack, "\(where_)")
            #expect(decision.yielded == step.yielded, "\(where_)")
            #expect(decision.sheet?.id == step.stack.last, "\(where_)")
            #expect(!decision.trace.isEmpty, "\(where_)")
            if let expected = step.top {
                let top = try #require(decision.sheet, "\(where_)")
                check(top, against: expected, step: where_)
            }
        }
    }

    private func check(_ top: Presentation, against e: TopExpectation, step: String) {
        func expect<T: Equatable>(_ actual: T, _ expected: T?, _ name: String) {
            if let expected { #expect(actual == expected, "\(step): \(name)") }
        }
        expect(top.variant, e.variant, "variant")
        expect(top.detents.map(\.id), e.detents, "detents")
        expect(top.detents.first(where: { $0.id == .content })?.height, e.contentHeight.map { .some($0) }, "content height")
        expect(top.selectedDetent, e.selected, "selectedDetent")
        expect(top.grabberVisible, e.grabber, "grabberVisible")
        expect(top.swipeToDismiss, e.swipe, "swipeToDismiss")
        expect(top.tapScrimToDismiss, e.tapScrim, "tapScrimToDismiss")
        expect(top.largestUndimmedDetent, e.undimmed, "largestUndimmedDetent")
        expect(top.dismissAffordance, e.affordance, "dismissAffordance")
        expect(top.confirmBeforeDismiss, e.confirm, "confirmBeforeDismiss")
        expect(top.expandsOnScrollToEdge, e.expands, "expandsOnScrollToEdge")
        expect(top.parentScalesBehind, e.parentScales, "parentScalesBehind")
        expect(top.awaitingContentHeight, e.awaiting, "awaitingContentHeight")
        expect(top.scrollable, e.scrollable, "scrollable")
        expect(top.scrimAccessibleAsClose, e.scrimAccessible, "scrimAccessibleAsClose")
        expect(top.header?.title, e.header, "header")
        expect(top.primaryButton?.size, e.button, "primaryButton")
        expect(top.presentationStyle, e.style, "presentationStyle")
        expect(top.transition, e.transition, "transition")
        if let ios = top.iosConfiguration {
            expect(ios.isModalInPresentation, e.modalInPresentation, "isModalInPresentation")
            expect(ios.prefersEdgeAttachedInCompactHeight, e.edgeAttached, "prefersEdgeAttachedInCompactHeight")
            expect(ios.preferredCornerRadius, e.cornerRadius, "preferredCornerRadius")
            expect(ios.detents, e.detents, "ios detents")
            expect(ios.selectedDetentIdentifier, e.selected, "selectedDetentIdentifier")
            expect(ios.prefersGrabberVisible, e.grabber, "prefersGrabberVisible")
            #expect(e.skipPartiallyExpanded == nil && e.initialValue == nil && e.confirmDialog == nil, "\(step): expected Android")
        }
        if let android = top.androidConfiguration {
            expect(android.skipPartiallyExpanded, e.skipPartiallyExpanded, "skipPartiallyExpanded")
            expect(android.initialValue, e.initialValue, "initialValue")
            expect(android.sheetGesturesEnabled, e.gestures, "sheetGesturesEnabled")
            expect(android.shouldDismissOnBackPress, e.backPress, "shouldDismissOnBackPress")
            expect(android.confirmValueChangeRequiresDialog, e.confirmDialog, "confirmValueChangeRequiresDialog")
            expect(android.dragHandle, e.grabber, "dragHandle")
            #expect(e.modalInPresentation == nil && e.edgeAttached == nil, "\(step): expected iOS")
        }
    }
}

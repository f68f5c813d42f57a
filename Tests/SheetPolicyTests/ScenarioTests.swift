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
    var keyboard: KeyboardAdjustment? = nil
    var cancelInHeader: Bool? = nil
    // iOS block.
    var modalInPresentation: Bool? = nil
    var edgeAttached: Bool? = nil
    var cornerRadius: Double?? = nil
    var modalStyle: ModalPresentationStyle? = nil
    var iosDismissal: IOSDismissal? = nil
    var swiftuiDetents: [SwiftUIDetent]? = nil
    var swiftuiSelection: SwiftUIDetent? = nil
    var dragIndicator: SwiftUISheetConfiguration.Visibility? = nil
    var backgroundInteraction: SwiftUIBackgroundInteraction? = nil
    var contentInteraction: SwiftUISheetConfiguration.ContentInteraction? = nil
    var dismissDisabled: Bool? = nil
    // Android block.
    var skipPartiallyExpanded: Bool? = nil
    var initialValue: AndroidSheetValue? = nil
    var gestures: Bool? = nil
    var backPress: Bool? = nil
    var confirmDialog: Bool? = nil
    var hidden: HiddenChange? = nil
    var clickOutside: Bool? = nil
    var dimmedAt: [AndroidSheetValue]? = nil
    var shape: Double?? = nil
    var imePadding: Bool? = nil
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
    static let all: [Scenario] = rules + documents + fidelity

    /// One or more cases per numbered rule of issue 3.
    static let rules: [Scenario] = [
        Scenario(
            name: "rule 1: a card sheet with cards on its screen and tab is eligible",
            steps: [
                shows(["offers"], after: [.count("offers", 3)], reason: .cardsAvailable)
            ]),
        Scenario(
            name: "rule 1: a card sheet is not presented on another tab, nor without a tab",
            steps: [
                showsNothing(.noCards, after: [.count("offers", 3)], in: Fixtures.context(tab: "cards")),
                showsNothing(.noCards, after: [], in: Fixtures.context(tab: nil)),
            ]),
        Scenario(
            name: "rule 1: nothing is presented on another screen",
            steps: [
                showsNothing(.noSheetForScreen, after: [.count("offers", 3)], in: Fixtures.context("settings", tab: nil))
            ]),
        Scenario(
            name: "rule 1: a card sheet that names no tab presents on every tab of its screen",
            steps: [
                shows(["tip-cards"], after: [.count("tips", 2)], in: Fixtures.context(tab: "cards"), reason: .cardsAvailable)
            ]),
        Scenario(
            name: "rule 2: a count of 0 closes and releases the latch",
            steps: [
                showsNothing(.latched, after: [.count("offers", 3), .dismiss("offers")]),
                showsNothing(.noCards, after: [.count("offers", 0)]),
                shows(["offers"], after: [.count("offers", 3)], reason: .cardsAvailable),
            ]),
        Scenario(
            name: "rule 2: dismissing a card sheet that is not shown latches it all the same",
            steps: [
                showsNothing(.noCards, after: [.count("offers", 3), .dismiss("offers")], in: Fixtures.context(tab: "cards")),
                showsNothing(.latched, after: []),
            ]),
        Scenario(
            name: "rule 3: the highest priority presents, ties go to the smallest id, the others yield",
            steps: [
                shows(
                    ["offers"], after: [.count("promo", 1), .count("tips", 1), .count("offers", 1)],
                    reason: .cardsAvailable, yielded: ["promo", "tip-cards"]),
                shows(["tip-cards"], after: [.dismiss("offers")], reason: .cardsAvailable, yielded: ["promo"]),
            ]),
        Scenario(
            name: "rule 4: the stack wins over card sheets, which yield to it",
            steps: [
                shows(
                    ["about"], after: [.count("promo", 2), .push("about")], yielded: ["promo"],
                    top: TopExpectation(transition: .some(nil)))
            ]),
        Scenario(
            name: "rule 4: a stack is kept but not shown on another screen",
            steps: [
                showsNothing(.noSheetForScreen, after: [.push("transfer-amount")], in: Fixtures.context("settings", tab: nil)),
                showsNothing(.noCards, after: [], in: home),
                shows(["transfer-amount"], after: [], in: transfer),
            ]),
        Scenario(
            name:
                "rule 4: \"A user has one stack; it belongs to its root sheet's screen (and tab)\": a nested sheet of another screen presents over its root",
            steps: [
                shows(
                    ["filters", "transfer-done"], after: [.push("filters"), .push("transfer-done")],
                    top: TopExpectation(transition: Transition(from: "filters", mode: .push, waitForContentHeight: true))),
                showsNothing(.noSheetForScreen, after: [], in: transfer),
                showsNothing(.noCards, after: [], in: Fixtures.context(tab: "cards")),
                shows(["filters", "transfer-done"], after: [], in: Fixtures.context(platform: .android)),
            ]),
        Scenario(
            name: "rule 4: a stack rooted on a card sheet presents nested sheets of other screens on the card's tab",
            steps: [
                shows(["offers", "statement"], after: [.count("offers", 2), .push("statement", parent: "offers")]),
                showsNothing(.noSheetForScreen, after: [], in: Fixtures.context("more", tab: nil)),
            ]),
        Scenario(
            name: "rule 4: dismissing a lower sheet removes it and everything above it",
            steps: [
                shows(
                    ["account-actions", "offer-detail", "about"],
                    after: [.push("account-actions"), .push("offer-detail"), .push("about")]),
                shows(["account-actions"], after: [.dismiss("offer-detail")]),
                showsNothing(.noCards, after: [.dismiss("account-actions")]),
            ]),
        Scenario(
            name: "rule 4: opening with a parent in the stack cuts back to that parent first",
            steps: [
                shows(
                    ["account-actions", "offer-detail"],
                    after: [.push("account-actions"), .push("about"), .push("offer-detail", parent: "account-actions")],
                    top: TopExpectation(transition: Transition(from: "account-actions", mode: .push, waitForContentHeight: false)))
            ]),
        Scenario(
            name: "rule 4: opening with a parent not in the stack re-roots it on that parent",
            steps: [
                shows(
                    ["offers", "offer-detail"],
                    after: [.count("offers", 1), .push("about"), .push("offer-detail", parent: "offers")])
            ]),
        Scenario(
            name: "rule 4: replace on an empty stack acts as push",
            steps: [
                shows(
                    ["transfer-amount"], after: [.replace("transfer-amount")], in: transfer,
                    top: TopExpectation(transition: .some(nil)))
            ]),
        Scenario(
            name: "rule 4: a stack rooted on a card sheet is cleared when its count drops to 0",
            steps: [
                shows(["offers", "offer-detail"], after: [.count("offers", 2), .push("offer-detail", parent: "offers")]),
                showsNothing(.noCards, after: [.count("offers", 0)]),
            ]),
        Scenario(
            name: "rule 4: a stack rooted on a card sheet is cleared when the card sheet is latched",
            steps: [
                shows(["offers", "offer-detail"], after: [.count("offers", 2), .push("offer-detail", parent: "offers")]),
                showsNothing(.latched, after: [.dismiss("offers")]),
            ]),
        Scenario(
            name: "rule 5: content size waits at medium until its height is known, then hugs it",
            steps: [
                shows(
                    ["about"], after: [.push("about")],
                    top: TopExpectation(
                        variant: .content, detents: [.medium], selected: .medium, awaiting: true, scrollable: true)),
                shows(
                    ["about"], after: [.height("about", 320, on: .android)],
                    top: TopExpectation(
                        detents: [.medium], awaiting: true)),
                shows(
                    ["about"], after: [.height("about", 412.5)], in: Fixtures.context(viewport: 800),
                    top: TopExpectation(
                        variant: .content, detents: [.content], contentHeight: 412.5, selected: .content, awaiting: false,
                        scrollable: false)),
            ]),
        Scenario(
            name: "rule 5: a content height reaching the viewport gives the large detent, scrollable",
            steps: [
                shows(
                    ["about"], after: [.push("about"), .height("about", 900)], in: Fixtures.context(viewport: 800),
                    top: TopExpectation(variant: .content, detents: [.large], selected: .large, scrollable: true))
            ]),
        Scenario(
            name: "rule 5: large opens large only, the parent scales behind, scrollable",
            steps: [
                shows(
                    ["offer-detail"], after: [.push("offer-detail")],
                    top: TopExpectation(
                        variant: .large, detents: [.large], selected: .large, expands: false, parentScales: true,
                        scrollable: true))
            ]),
        Scenario(
            name: "rule 5: medium opens medium, grows to large, expands on scroll to the edge",
            steps: [
                shows(
                    ["account-actions"], after: [.push("account-actions")],
                    top: TopExpectation(
                        variant: .medium, detents: [.medium, .large], selected: .medium, expands: true, parentScales: false,
                        scrollable: true))
            ]),
        Scenario(
            name: "rule 5: an input sheet with several inputs defaults to large, with one to content",
            steps: [
                shows(["filters"], after: [.push("filters")], top: TopExpectation(variant: .large)),
                shows(["nickname"], after: [.dismiss("filters"), .push("nickname")], top: TopExpectation(variant: .content)),
            ]),
        Scenario(
            name: "rule 6: 000 \"resize to accommodate keyboards\": a content sheet grows by the keyboard, a medium one moves to large",
            steps: [
                shows(
                    ["nickname"], after: [.push("nickname"), .height("nickname", 240)],
                    in: Fixtures.context(keyboard: true),
                    top: TopExpectation(
                        detents: [.content], contentHeight: 240, selected: .content, grabber: true,
                        keyboard: .growByKeyboard)),
                shows(
                    ["nickname"], after: [], in: Fixtures.context(platform: .android, keyboard: true),
                    top: TopExpectation(detents: [.medium], selected: .medium, keyboard: .growByKeyboard, imePadding: true)),
                shows(["nickname"], after: [], top: TopExpectation(detents: [.content], selected: .content, keyboard: KeyboardAdjustment.none)),
                shows(
                    ["account-actions"], after: [.dismiss("nickname"), .push("account-actions")],
                    in: Fixtures.context(keyboard: true),
                    top: TopExpectation(detents: [.medium, .large], selected: .large, keyboard: .largeDetent)),
            ]),
        Scenario(
            name:
                "rule 7: 000 `contentSizeSheet(prefersGrabberVisible: Bool = true)`: on iOS the grabber shows unless the sheet can neither resize nor be swiped",
            steps: [
                shows(
                    ["account-actions"], after: [.push("account-actions")],
                    top: TopExpectation(grabber: true, dragIndicator: .visible)),
                shows(
                    ["offer-detail"], after: [.dismiss("account-actions"), .push("offer-detail")],
                    top: TopExpectation(grabber: true)),
                shows(["about"], after: [.dismiss("offer-detail"), .push("about")], top: TopExpectation(grabber: true)),
                shows(
                    ["locked"], after: [.dismiss("about"), .push("locked")], in: Fixtures.context("vault", tab: nil),
                    top: TopExpectation(grabber: false, dragIndicator: .hidden)),
            ]),
        Scenario(
            name: "rule 7: on Android the drag handle always shows; only medium keeps the partial state",
            steps: [
                shows(
                    ["about"], after: [.push("about")], in: Fixtures.context(platform: .android),
                    top: TopExpectation(
                        grabber: true, skipPartiallyExpanded: true, initialValue: .expanded)),
                shows(
                    ["account-actions"], after: [.dismiss("about"), .push("account-actions")],
                    in: Fixtures.context(platform: .android),
                    top: TopExpectation(grabber: true, skipPartiallyExpanded: false, initialValue: .partiallyExpanded)),
            ]),
        Scenario(
            name: "rule 8: the dismissal affordance follows the kind",
            steps: [
                shows(
                    ["about"], after: [.push("about")],
                    top: TopExpectation(
                        swipe: true, tapScrim: true, affordance: .closeIcon, scrimAccessible: true)),
                shows(
                    ["account-actions"], after: [.dismiss("about"), .push("account-actions")],
                    top: TopExpectation(affordance: DismissAffordance.none)),
                shows(
                    ["filters"], after: [.dismiss("account-actions"), .push("filters")],
                    top: TopExpectation(affordance: .cancelButton)),
                shows(
                    ["offers"], after: [.dismiss("filters"), .count("offers", 1)], reason: .cardsAvailable,
                    top: TopExpectation(affordance: DismissAffordance.none)),
            ]),
        Scenario(
            name: "rule 8: a sheet that can be neither swiped nor tapped away is modal; Back on Android still offers a way out through the dialog",
            steps: [
                shows(
                    ["locked"], after: [.push("locked")], in: Fixtures.context("vault", tab: nil),
                    top: TopExpectation(
                        swipe: false, tapScrim: false, scrimAccessible: false, modalInPresentation: true,
                        iosDismissal: IOSDismissal(swipe: false, tapScrim: false, requiresDelegate: false), dismissDisabled: true)),
                shows(
                    ["locked"], after: [], in: Fixtures.context("vault", tab: nil, platform: .android),
                    top: TopExpectation(
                        gestures: true, backPress: true, confirmDialog: true, hidden: .confirm,
                        clickOutside: false)),
            ]),
        Scenario(
            name: "rule 9: the scrim dims every detent unless nonModalUpTo names one",
            steps: [
                shows(["account-actions"], after: [.push("account-actions")], top: TopExpectation(undimmed: .medium)),
                shows(["about"], after: [.dismiss("account-actions"), .push("about")], top: TopExpectation(undimmed: .some(nil))),
            ]),
        Scenario(
            name: "rule 10: iPad presents a popover with the same detents",
            steps: [
                shows(
                    ["account-actions"], after: [.push("account-actions")], in: Fixtures.context(idiom: .pad),
                    top: TopExpectation(detents: [.medium, .large], style: .popover, edgeAttached: false))
            ]),
        Scenario(
            name: "rule 10: iPhone landscape presents an edge-attached sheet",
            steps: [
                shows(
                    ["about"], after: [.push("about")], in: Fixtures.context(orientation: .landscape),
                    top: TopExpectation(style: .edgeAttached, edgeAttached: true)),
                shows(["about"], after: [], top: TopExpectation(style: .sheet, edgeAttached: true)),
            ]),
        Scenario(
            name: "rule 10: Android is always a bottom sheet",
            steps: [
                shows(
                    ["about"], after: [.push("about")],
                    in: Fixtures.context(platform: .android, idiom: .pad, orientation: .landscape),
                    top: TopExpectation(style: .sheet))
            ]),
        Scenario(
            name: "rule 11: a nested sheet pushes on its parent",
            steps: [
                shows(
                    ["account-actions", "offer-detail"], after: [.push("account-actions"), .push("offer-detail")],
                    top: TopExpectation(transition: Transition(from: "account-actions", mode: .push, waitForContentHeight: false))),
                shows(
                    ["account-actions", "offer-detail", "about"], after: [.push("about")],
                    top: TopExpectation(transition: Transition(from: "offer-detail", mode: .push, waitForContentHeight: true))),
            ]),
        Scenario(
            name: "rule 12: strict sheets have the sticky header and a medium button, flexible ones a small one",
            steps: [
                shows(["filters"], after: [.push("filters")], top: TopExpectation(header: "Filter Transactions", button: .medium)),
                shows(
                    ["about"], after: [.dismiss("filters"), .push("about")],
                    top: TopExpectation(
                        header: .some(nil), button: .small)),
                shows(
                    ["offer-detail"], after: [.dismiss("about"), .push("offer-detail")],
                    top: TopExpectation(
                        header: .some(nil), button: .some(nil), cornerRadius: 24)),
                shows(
                    ["account-actions"], after: [.dismiss("offer-detail"), .push("account-actions")],
                    top: TopExpectation(cornerRadius: .some(nil))),
            ]),
    ]

    /// The scenarios the design documents describe.
    static let documents: [Scenario] = [
        Scenario(
            name: "card-count lifecycle: arrive, present, dismiss, same count stays closed, change, 0 closes",
            steps: [
                showsNothing(.noCards, after: []),
                shows(
                    ["offers"], after: [.count("offers", 3)], reason: .cardsAvailable,
                    top: TopExpectation(variant: .content, awaiting: true, transition: .some(nil))),
                shows(
                    ["offers"], after: [.height("offers", 280)], reason: .cardsAvailable,
                    top: TopExpectation(detents: [.content], contentHeight: 280)),
                showsNothing(.latched, after: [.dismiss("offers")]),
                showsNothing(.latched, after: [.count("offers", 3)]),
                shows(["offers"], after: [.count("offers", 4)], reason: .cardsAvailable),
                showsNothing(.latched, after: [.dismiss("offers", .scrim)]),
                shows(["offers"], after: [.count("offers", 3)], reason: .cardsAvailable),
                showsNothing(.noCards, after: [.count("offers", 0)]),
            ]),
        Scenario(
            name: "filtered container: only counts under the sheet's own filter count",
            steps: [
                shows(["vip-offers"], after: [.count("offers", 2, filter: "vip")], reason: .cardsAvailable),
                shows(["vip-offers"], after: [.count("offers", 4)], reason: .cardsAvailable, yielded: ["offers"]),
                shows(["offers"], after: [.dismiss("vip-offers")], reason: .cardsAvailable),
                shows(["offers"], after: [.count("offers", 5)], reason: .cardsAvailable),
                shows(
                    ["vip-offers"], after: [.count("offers", 3, filter: "vip")], reason: .cardsAvailable,
                    yielded: ["offers"]),
            ]),
        Scenario(
            name: "priority: a lower card sheet yields, then presents once the winner is dismissed",
            steps: [
                shows(
                    ["offers"], after: [.count("offers", 1), .count("promo", 7)], reason: .cardsAvailable,
                    yielded: ["promo"]),
                shows(["promo"], after: [.dismiss("offers")], reason: .cardsAvailable),
            ]),
        Scenario(
            name: "nested push and pop over a card sheet returns to the card sheet",
            steps: [
                shows(["offers"], after: [.count("offers", 2)], reason: .cardsAvailable),
                shows(
                    ["offers", "offer-detail"], after: [.push("offer-detail", parent: "offers")],
                    top: TopExpectation(transition: Transition(from: "offers", mode: .push, waitForContentHeight: false))),
                shows(
                    ["offers"], after: [.dismiss("offer-detail")], reason: .cardsAvailable,
                    top: TopExpectation(transition: .some(nil))),
                showsNothing(.latched, after: [.dismiss("offers")]),
            ]),
        Scenario(
            name: "a flow of large steps keeps the sheet and transitions the content",
            steps: [
                shows(
                    ["transfer-amount"], after: [.push("transfer-amount")], in: transfer,
                    top: TopExpectation(transition: .some(nil))),
                shows(
                    ["transfer-payee"], after: [.replace("transfer-payee")], in: transfer,
                    top: TopExpectation(
                        transition: Transition(from: "transfer-amount", mode: .replaceContent, waitForContentHeight: false))),
            ]),
        Scenario(
            name:
                "000 \"Do not resize the sheet until the size of the content is known\": a flow step into an unmeasured content sheet keeps the previous step's detents",
            steps: [
                shows(
                    ["transfer-done"], after: [.push("transfer-amount"), .replace("transfer-done")], in: transfer,
                    top: TopExpectation(
                        detents: [.large], selected: .large, awaiting: true,
                        transition: Transition(from: "transfer-amount", mode: .resize, waitForContentHeight: true))),
                shows(
                    ["transfer-done"], after: [], in: Fixtures.context("transfer", tab: nil, platform: .android),
                    top: TopExpectation(detents: [.large], awaiting: true, skipPartiallyExpanded: true, initialValue: .expanded)),
                shows(
                    ["transfer-done"], after: [.height("transfer-done", 360)], in: transfer,
                    top: TopExpectation(
                        detents: [.content], contentHeight: 360, awaiting: false,
                        transition: Transition(from: "transfer-amount", mode: .resize, waitForContentHeight: false))),
            ]),
        Scenario(
            name: "keyboard up and down on a medium sheet",
            steps: [
                shows(
                    ["account-actions"], after: [.push("account-actions")], in: Fixtures.context(keyboard: true),
                    top: TopExpectation(detents: [.medium, .large], selected: .large)),
                shows(["account-actions"], after: [], top: TopExpectation(detents: [.medium, .large], selected: .medium)),
            ]),
        Scenario(
            name: "iPad: a card sheet has nothing to anchor a popover to, so UIKit presents it as a form sheet",
            steps: [
                shows(
                    ["offers"], after: [.count("offers", 1), .height("offers", 300)], in: Fixtures.context(idiom: .pad),
                    reason: .cardsAvailable,
                    top: TopExpectation(
                        detents: [.content], style: .popover, edgeAttached: false,
                        modalStyle: .formSheet)),
                shows(
                    ["offers", "offer-detail"], after: [.push("offer-detail", parent: "offers")], in: Fixtures.context(idiom: .pad),
                    top: TopExpectation(style: .popover, modalStyle: .popover)),
            ]),
        Scenario(
            name: "iPhone landscape: a large sheet edge-attached",
            steps: [
                shows(
                    ["filters"], after: [.push("filters")], in: Fixtures.context(orientation: .landscape),
                    top: TopExpectation(detents: [.large], style: .edgeAttached, edgeAttached: true))
            ]),
        Scenario(
            name: "Android: a content card sheet measured on Android only",
            steps: [
                shows(
                    ["offers"], after: [.count("offers", 1), .height("offers", 500), .height("offers", 300, on: .android)],
                    in: Fixtures.context(platform: .android), reason: .cardsAvailable,
                    top: TopExpectation(
                        detents: [.content], contentHeight: 300, grabber: true, style: .sheet,
                        skipPartiallyExpanded: true, initialValue: .expanded, gestures: true, backPress: true))
            ]),
        Scenario(
            name: "a dirty form confirms dismissal first, on both platforms",
            steps: [
                shows(
                    ["filters"], after: [.push("filters")], in: Fixtures.context(dirty: true),
                    top: TopExpectation(confirm: true, modalInPresentation: true)),
                shows(
                    ["filters"], after: [], in: Fixtures.context(platform: .android, dirty: true),
                    top: TopExpectation(confirm: true, confirmDialog: true)),
                shows(["filters"], after: [], top: TopExpectation(confirm: false, modalInPresentation: false)),
                shows(
                    ["filters", "about"], after: [.push("about")], in: Fixtures.context(dirty: true),
                    top: TopExpectation(confirm: false)),
            ]),
    ]
}

extension Scenario {
    private static let more = Fixtures.context("more", tab: nil)
    private static let moreAndroid = Fixtures.context("more", tab: nil, platform: .android)

    /// Issue 18: each block applies 1:1 to UIKit, SwiftUI and Material 3, and follows the design documents.
    static let fidelity: [Scenario] = [
        Scenario(
            name: "000 \"Allow for scrolling if sheet content exceeds the viewport\": scrollable unless the viewport is known to hold the content",
            steps: [
                shows(["about"], after: [.push("about"), .height("about", 300)], top: TopExpectation(scrollable: true)),
                shows(["about"], after: [], in: Fixtures.context(viewport: 700), top: TopExpectation(scrollable: false)),
                shows(
                    ["about"], after: [.height("about", 700)], in: Fixtures.context(viewport: 700),
                    top: TopExpectation(detents: [.large], scrollable: true)),
            ]),
        Scenario(
            name: "000 \"a 'Cancel' text button placed in the header\": a Cancel button always comes with a header, in flexible sheets too",
            steps: [
                shows(
                    ["otp"], after: [.push("otp")], in: more,
                    top: TopExpectation(
                        affordance: .cancelButton, header: "", cancelInHeader: true)),
                shows(
                    ["filters"], after: [.dismiss("otp"), .push("filters")],
                    top: TopExpectation(
                        affordance: .cancelButton, header: "Filter Transactions", cancelInHeader: true)),
            ]),
        Scenario(
            name: "003 strict: \"Dismissal is via drag / scrim — no top-right close button\"",
            steps: [
                shows(
                    ["statement"], after: [.push("statement")], in: more,
                    top: TopExpectation(
                        affordance: DismissAffordance.none, header: "Statement", cancelInHeader: false)),
                shows(
                    ["legacy-strict"], after: [.dismiss("statement"), .push("legacy-strict")], in: more,
                    top: TopExpectation(affordance: .cancelButton, header: "Legacy", cancelInHeader: true)),
                shows(
                    ["about"], after: [.dismiss("legacy-strict"), .push("about")],
                    top: TopExpectation(affordance: .closeIcon, header: .some(nil))),
            ]),
        Scenario(
            name: "000 \"On Android, all sheets are resizable\": a sheet that must not be swiped keeps gestures and vetoes Hidden",
            steps: [
                shows(
                    ["no-swipe"], after: [.push("no-swipe")], in: moreAndroid,
                    top: TopExpectation(
                        swipe: false, gestures: true, backPress: true, confirmDialog: false, hidden: .veto, clickOutside: true,
                        dimmedAt: [])),
                shows(
                    ["no-swipe"], after: [], in: more,
                    top: TopExpectation(
                        swipe: false, tapScrim: true, modalInPresentation: false,
                        iosDismissal: IOSDismissal(swipe: false, tapScrim: true, requiresDelegate: true), dismissDisabled: true)),
            ]),
        Scenario(
            name: "UIKit cannot refuse a scrim tap while allowing a swipe: the delegate is required",
            steps: [
                shows(
                    ["no-scrim-tap"], after: [.push("no-scrim-tap")], in: more,
                    top: TopExpectation(
                        swipe: true, tapScrim: false, modalInPresentation: false,
                        iosDismissal: IOSDismissal(swipe: true, tapScrim: false, requiresDelegate: true), dismissDisabled: false)),
                shows(
                    ["no-scrim-tap"], after: [], in: moreAndroid,
                    top: TopExpectation(
                        hidden: .allow, clickOutside: false)),
            ]),
        Scenario(
            name: "a dirty form: isModalInPresentation and a confirm on Hidden; the delegate is not needed",
            steps: [
                shows(
                    ["filters"], after: [.push("filters")], in: Fixtures.context(dirty: true),
                    top: TopExpectation(
                        modalInPresentation: true, iosDismissal: IOSDismissal(swipe: false, tapScrim: false, requiresDelegate: false),
                        dismissDisabled: true)),
                shows(
                    ["filters"], after: [], in: Fixtures.context(platform: .android, dirty: true),
                    top: TopExpectation(hidden: .confirm, clickOutside: true)),
            ]),
        Scenario(
            name: "SwiftUI: detents, selection, background interaction and content interaction mirror the UIKit block",
            steps: [
                shows(
                    ["account-actions"], after: [.push("account-actions")],
                    top: TopExpectation(
                        modalStyle: .pageSheet, swiftuiDetents: [SwiftUIDetent(kind: .medium), SwiftUIDetent(kind: .large)],
                        swiftuiSelection: SwiftUIDetent(kind: .medium),
                        backgroundInteraction: SwiftUIBackgroundInteraction(kind: .enabled, upThrough: SwiftUIDetent(kind: .medium)),
                        contentInteraction: .resizes, dismissDisabled: false)),
                shows(
                    ["about"], after: [.dismiss("account-actions"), .push("about"), .height("about", 312)],
                    top: TopExpectation(
                        swiftuiDetents: [SwiftUIDetent(kind: .height, height: 312)], swiftuiSelection: SwiftUIDetent(kind: .height, height: 312),
                        backgroundInteraction: SwiftUIBackgroundInteraction(kind: .disabled), contentInteraction: .scrolls)),
                shows(["about"], after: [], in: Fixtures.context(idiom: .pad), top: TopExpectation(modalStyle: .popover)),
            ]),
        Scenario(
            name: "Android: the scrim follows nonModalUpTo in SheetValue names, the corner radius is the shape",
            steps: [
                shows(
                    ["account-actions"], after: [.push("account-actions")], in: Fixtures.context(platform: .android),
                    top: TopExpectation(dimmedAt: [.expanded], shape: .some(nil))),
                shows(
                    ["offer-detail"], after: [.dismiss("account-actions"), .push("offer-detail")],
                    in: Fixtures.context(platform: .android), top: TopExpectation(dimmedAt: [.expanded], shape: 24)),
                shows(
                    ["about"], after: [.dismiss("offer-detail"), .push("about")],
                    in: Fixtures.context(platform: .android), top: TopExpectation(dimmedAt: [.expanded])),
            ]),
        Scenario(
            name: "004 \"When the customer dismisses the sheet, keep it closed\": a programmatic dismissal does not latch",
            steps: [
                shows(["offers"], after: [.count("offers", 3), .dismiss("offers", .programmatic)], reason: .cardsAvailable),
                showsNothing(.latched, after: [.dismiss("offers", .action)]),
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
            let decision = SheetPolicy.decide(catalog: Fixtures.catalog, state: state, context: step.context, now: Fixtures.now)
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

    /// Issue 12: Android measures in dp, so its trace lines say dp; iOS lines say pt.
    @Test func traceLinesUseThePlatformsUnit() {
        let state = fold([.push("filters"), .push("about"), .height("about", 300, on: .android), .height("about", 300)])
        let android = SheetPolicy.decide(catalog: Fixtures.catalog, state: state, context: Fixtures.context(platform: .android), now: Fixtures.now)
        #expect(android.trace.contains("variant: content, 300 dp measured on android, scrollable in case it exceeds the unknown viewport"))
        #expect(!android.trace.contains { $0.contains(" pt") })
        let tall = SheetPolicy.decide(
            catalog: Fixtures.catalog, state: state, context: Fixtures.context(platform: .android, viewport: 280), now: Fixtures.now)
        #expect(tall.trace.contains("variant: content, measured 300 dp reaches the 280 dp viewport: large detent, scrollable"))
        let ios = SheetPolicy.decide(
            catalog: Fixtures.catalog, state: fold([.push("filters")]), context: Fixtures.context(), now: Fixtures.now)
        #expect(ios.trace.contains { $0.hasPrefix("anatomy: strict, 56 pt sticky header") })
        #expect(!ios.trace.contains { $0.contains(" dp") })
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
        expect(top.keyboardAdjustment, e.keyboard, "keyboardAdjustment")
        expect(top.header?.cancelButton, e.cancelInHeader.map { .some($0) }, "header.cancelButton")
        if let ios = top.iosConfiguration {
            expect(ios.isModalInPresentation, e.modalInPresentation, "isModalInPresentation")
            expect(ios.prefersEdgeAttachedInCompactHeight, e.edgeAttached, "prefersEdgeAttachedInCompactHeight")
            expect(ios.preferredCornerRadius, e.cornerRadius, "preferredCornerRadius")
            expect(ios.detents, e.detents, "ios detents")
            expect(ios.selectedDetentIdentifier, e.selected, "selectedDetentIdentifier")
            expect(ios.prefersGrabberVisible, e.grabber, "prefersGrabberVisible")
            expect(ios.modalPresentationStyle, e.modalStyle, "modalPresentationStyle")
            expect(ios.dismissal, e.iosDismissal, "dismissal")
            expect(ios.swiftui.presentationDetents, e.swiftuiDetents, "presentationDetents")
            expect(ios.swiftui.selection, e.swiftuiSelection, "selection")
            expect(ios.swiftui.presentationDragIndicator, e.dragIndicator, "presentationDragIndicator")
            expect(ios.swiftui.presentationBackgroundInteraction, e.backgroundInteraction, "presentationBackgroundInteraction")
            expect(ios.swiftui.presentationContentInteraction, e.contentInteraction, "presentationContentInteraction")
            expect(ios.swiftui.interactiveDismissDisabled, e.dismissDisabled, "interactiveDismissDisabled")
            expect(ios.swiftui.presentationCornerRadius, ios.preferredCornerRadius, "presentationCornerRadius")
            // SwiftUI and UIKit agree on the detents and the grabber.
            #expect(ios.swiftui.presentationDetents.count == ios.detents.count, "\(step)")
            #expect((ios.swiftui.presentationDragIndicator == .visible) == ios.prefersGrabberVisible, "\(step)")
            #expect(
                e.skipPartiallyExpanded == nil && e.initialValue == nil && e.confirmDialog == nil && e.hidden == nil
                    && e.dimmedAt == nil && e.imePadding == nil, "\(step): expected Android")
        }
        if let android = top.androidConfiguration {
            expect(android.skipPartiallyExpanded, e.skipPartiallyExpanded, "skipPartiallyExpanded")
            expect(android.initialValue, e.initialValue, "initialValue")
            expect(android.sheetGesturesEnabled, e.gestures, "sheetGesturesEnabled")
            expect(android.shouldDismissOnBackPress, e.backPress, "shouldDismissOnBackPress")
            expect(android.confirmValueChangeRequiresDialog, e.confirmDialog, "confirmValueChangeRequiresDialog")
            expect(android.dragHandle, e.grabber, "dragHandle")
            expect(android.confirmValueChange.hidden, e.hidden, "confirmValueChange.hidden")
            expect(android.shouldDismissOnClickOutside, e.clickOutside, "shouldDismissOnClickOutside")
            expect(android.scrim.dimmedAt, e.dimmedAt, "scrim.dimmedAt")
            expect(android.shape.topCornerRadius, e.shape, "shape")
            expect(android.imePadding, e.imePadding, "imePadding")
            // The grouped properties repeat the flat members; a veto never turns gestures off.
            #expect(android.properties.shouldDismissOnBackPress == android.shouldDismissOnBackPress, "\(step)")
            #expect(android.properties.shouldDismissOnClickOutside == android.shouldDismissOnClickOutside, "\(step)")
            #expect(android.confirmValueChangeRequiresDialog == (android.confirmValueChange.hidden == .confirm), "\(step)")
            #expect(
                e.modalInPresentation == nil && e.edgeAttached == nil && e.iosDismissal == nil && e.swiftuiDetents == nil
                    && e.modalStyle == nil && e.dismissDisabled == nil, "\(step): expected iOS")
        }
    }
}

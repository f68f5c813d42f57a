import Foundation
import SheetdClient
import SheetdClientTesting
import Testing

/// The adapters' decisions as plain types: dismissal methods, impression timing, no re-presentation
/// after a swipe, the starting detent and the content height to report.
@Suite struct PresentationLogicTests {
    static let offers = SheetPresentation.sample(id: "offers")

    /// A control the app closed with wins; a gesture is a swipe while dragging and a scrim tap
    /// otherwise; no gesture and no control is the app closing it in code.
    @Test func theDismissalMethodIsClassified() {
        func method(_ steps: (inout SheetLifecycle) -> Void, interactive: Bool, plan: SheetPresentationPlan? = nil) -> DismissalMethod? {
            var lifecycle = SheetLifecycle(sheet: Self.offers)
            steps(&lifecycle)
            return lifecycle.dismissed(interactive: interactive, plan: plan)
        }
        #expect(method({ $0.interactiveDismissalBegan(dragging: true) }, interactive: true) == .swipe)
        #expect(method({ $0.interactiveDismissalBegan(dragging: false) }, interactive: true) == .scrim)
        #expect(method({ $0.willClose(with: .closeButton) }, interactive: false) == .closeButton)
        #expect(method({ $0.willClose(with: .cancelButton) }, interactive: true) == .cancelButton)
        #expect(method({ _ in }, interactive: false) == .programmatic)
        // A swipe pulled back up, then a scrim tap: the tap counts.
        #expect(
            method(
                {
                    $0.interactiveDismissalBegan(dragging: true)
                    $0.interactiveDismissalCancelled()
                }, interactive: true, plan: SheetPresentationPlan(SheetPresentation.sample(id: "s", swipeToDismiss: false))) == .scrim)
        // SwiftUI observes no gesture: what the plan allows decides, swipe when both may.
        let swipeOnly = SheetPresentationPlan(SheetPresentation.sample(id: "s", tapScrimToDismiss: false))
        #expect(method({ _ in }, interactive: true, plan: swipeOnly) == .swipe)
        #expect(method({ _ in }, interactive: true, plan: SheetPresentationPlan(Self.offers)) == .swipe)

        var once = SheetLifecycle(sheet: Self.offers)
        let end = once.dismissed(interactive: true)
        let second = once.dismissed(interactive: false)
        #expect(end == .swipe)
        #expect(second == nil, "a presentation ends once")
        #expect(once.endedWith == .swipe)
    }

    /// The impression is due the first time the sheet is on screen, once per presentation (not when
    /// revealed again or after it ended); a new presentation is a new impression with a new event id.
    @Test func theImpressionIsDueOncePerPresentation() {
        var lifecycle = SheetLifecycle(sheet: Self.offers)
        #expect(!lifecycle.impressionDue)
        let first = lifecycle.appeared()
        let revealed = lifecycle.appeared()  // revealed again under a closed nested sheet
        #expect(first && !revealed)
        _ = lifecycle.dismissed(interactive: true)
        let afterEnd = lifecycle.appeared()
        #expect(!afterEnd)
        var next = SheetLifecycle(sheet: Self.offers)
        let again = next.appeared()
        #expect(again, "a new presentation is a new impression")
        #expect(next.impressionEventId != lifecycle.impressionEventId)
        var neverShown = SheetLifecycle(sheet: Self.offers)
        _ = neverShown.dismissed(interactive: false)
        let late = neverShown.appeared()
        #expect(!late, "dismissed before it appeared: no impression")
    }

    /// A sheet the user swiped away is not presented again under the decision that presented it, nor
    /// before its dismissal was reported; a later decision presenting it again is honoured, and a
    /// decision without it lets the hold go.
    @Test func aSwipedSheetIsNotPresentedAgain() {
        let decision = Decision.presenting(Self.offers)
        var gate = SheetPresentationGate()
        #expect(gate.sheet(for: decision)?.id == "offers")
        gate.dismissed("offers", under: decision)
        #expect(gate.sheet(for: decision) == nil)
        var changed = decision
        changed.trace = ["a new count released the latch"]
        #expect(gate.sheet(for: changed) == nil, "not before the dismissal was reported")
        gate.dismissalReported("offers")
        #expect(gate.sheet(for: decision) == nil, "the same decision still holds it")
        #expect(gate.sheet(for: changed)?.id == "offers")
        #expect(gate.sheet(for: .presenting(.sample(id: "other")))?.id == "other", "other sheets are not held")
        gate.observe(.noSheet)
        #expect(!gate.isHolding("offers"))
        #expect(gate.sheet(for: decision)?.id == "offers")
        #expect(gate.sheet(for: .noSheet) == nil)
    }

    /// The selection starts at the plan's (no default to jump from), keeps the user's detent while the
    /// plan has it (a content detent following its new height), and falls back when it is gone.
    @Test func theSelectionStartsInsideTheDetents() throws {
        let plan = try #require(SheetPresentationPlan(SheetPresentation.sample(id: "s", contentHeight: 300))).swiftUI
        #expect(plan.resolvedSelection(nil) == .custom(identifier: "content", height: 300))
        #expect(plan.detents.contains(plan.resolvedSelection(nil)))
        #expect(plan.resolvedSelection(.large) == .large)
        #expect(plan.resolvedSelection(.custom(identifier: "content", height: 250)) == .custom(identifier: "content", height: 300))
        #expect(plan.resolvedSelection(.medium) == .custom(identifier: "content", height: 300), "medium is not a detent of this plan")
    }

    /// A height is reported when the sheet waits for it or it changed by a point or more, rounded up,
    /// capped, and not twice; a sheet not sized by its content reports nothing.
    @Test func theContentHeightIsReportedWhenDue() {
        var reporter = ContentHeightReporter()
        let awaiting = SheetPresentation.sample(id: "a", awaitingContentHeight: true)
        let measured = SheetPresentation.sample(id: "m", contentHeight: 312)
        let reports = [
            reporter.heightToReport(measured: 311.2, for: awaiting),  // rounded up
            reporter.heightToReport(measured: 311.6, for: awaiting),  // reported already
            reporter.heightToReport(measured: 311.5, for: measured),  // the decision knows it
            reporter.heightToReport(measured: 340, for: measured),  // Dynamic Type grew it
            reporter.heightToReport(measured: 20_000, for: SheetPresentation.sample(id: "t", awaitingContentHeight: true)),  // capped
            reporter.heightToReport(measured: 0, for: awaiting),
            reporter.heightToReport(measured: .nan, for: awaiting),
            reporter.heightToReport(measured: 300, for: Self.offers),  // a medium/large sheet
        ]
        #expect(reports == [312, nil, nil, 340, 10_000, nil, nil, nil])
    }

    /// The session reports through the client: one impression per presentation, the dismissal with
    /// its method once, the height when due; a failed report goes to onError.
    @Test func theSessionReportsWhatHappened() async throws {
        let fake = FakeSheetdClient(decision: .presenting(Self.offers))
        let session = SheetdSheetSession(sheet: .sample(id: "offers", awaitingContentHeight: true), client: fake)
        await session.appeared()?.value
        #expect(session.appeared() == nil)
        await session.measured(height: 280)?.value
        session.interactiveDismissalBegan(dragging: true)
        await session.dismissed(interactive: true)?.value
        #expect(session.dismissed(interactive: false) == nil)
        #expect(
            fake.events == [
                .impression(sheetId: "offers"), .contentHeight(sheetId: "offers", height: 280, platform: .ios),
                .dismissal(sheetId: "offers", method: .swipe),
            ])

        let errors = ErrorLog()
        fake.failNext(SheetdError(kind: .transport, message: "offline", urlError: URLError(.notConnectedToInternet)))
        let failing = SheetdSheetSession(sheet: Self.offers, client: fake, onError: { errors.append($0) })
        await failing.appeared()?.value
        #expect((errors.all.first as? SheetdError)?.urlError?.code == .notConnectedToInternet)
    }
}

/// Errors collected from a Sendable callback.
final class ErrorLog: @unchecked Sendable {
    // @unchecked Sendable: `items` is only touched under `lock`.
    private let lock = NSLock()
    private var items: [any Error] = []
    func append(_ error: any Error) { lock.withLock { items.append(error) } }
    var all: [any Error] { lock.withLock { items } }
}

// What the UIKit and SwiftUI adapters decide, as plain types compiled and tested on Linux: when an
// impression is reported, which dismissal method, what not to present again, where a sheet starts and
// which content height to report. The adapters only feed them the system's callbacks.

/// One presentation of one sheet, from on screen to gone: when to report its impression and which
/// dismissal method its end was.
///
/// - The impression is reported the first time the sheet is on screen, once per presentation: a
///   sheet revealed again (a nested sheet over it closed) or re-laid out is not a new impression. Its
///   `eventId` is fixed per presentation, so a retried report counts once.
/// - The dismissal method: a control the app closed it with (``willClose(with:)``) wins; else an
///   interactive dismissal (UIKit's `presentationControllerDidDismiss`, SwiftUI setting the binding)
///   is `swipe` while the sheet was dragged and `scrim` otherwise; else the app closed it in code:
///   `programmatic` (which does not latch). It is reported once.
public struct SheetLifecycle: Sendable, Equatable {
    /// The sheet presented.
    public let sheet: SheetPresentation
    /// The impression's event id, fixed for this presentation.
    public let impressionEventId: String
    /// The dismissal's event id, fixed for this presentation.
    public let dismissalEventId: String
    /// Whether the impression was due already (``appeared()`` returned true once).
    public private(set) var impressionDue = false
    /// The method the dismissal was reported with, once it ended.
    public private(set) var endedWith: DismissalMethod?
    private var control: DismissalMethod?
    private var dragging: Bool?

    /// A presentation of `sheet` about to start.
    public init(sheet: SheetPresentation) {
        self.sheet = sheet
        impressionEventId = SheetdUserClient.makeEventId()
        dismissalEventId = SheetdUserClient.makeEventId()
    }

    /// The sheet is on screen (`viewDidAppear`, the presentation's completion, `onAppear`): true the
    /// first time, when the impression is to be reported.
    public mutating func appeared() -> Bool {
        guard !impressionDue, endedWith == nil else { return false }
        impressionDue = true
        return true
    }

    /// The app is closing the sheet through a control (`closeButton`, `cancelButton`, `action`) or
    /// in code (`programmatic`): the dismissal that follows is reported with `method`.
    public mutating func willClose(with method: DismissalMethod) { control = method }

    /// An interactive dismissal started (UIKit's `presentationControllerWillDismiss`): `dragging` is
    /// whether the sheet's pan was under way (a swipe) or not (a scrim tap).
    public mutating func interactiveDismissalBegan(dragging: Bool) { self.dragging = dragging }

    /// The user let go and the sheet stayed (a swipe pulled back up): forget the gesture.
    public mutating func interactiveDismissalCancelled() { dragging = nil }

    /// The sheet is gone. `interactive` is whether the system dismissed it on a gesture; `plan`
    /// settles swipe against scrim tap when no gesture was observed (SwiftUI does not say): when only
    /// one of them may dismiss it was that one; with both possible it is reported as `swipe`, the
    /// usual gesture. Returns the method to report, or nil when this presentation's end was reported already.
    public mutating func dismissed(interactive: Bool, plan: SheetPresentationPlan? = nil) -> DismissalMethod? {
        guard endedWith == nil else { return nil }
        let method: DismissalMethod
        if let control {
            method = control
        } else if !interactive {
            method = .programmatic
        } else if let dragging {
            method = dragging ? .swipe : .scrim
        } else {
            method = plan.map { $0.dismissal.swipe || !$0.dismissal.tapScrim } == false ? .scrim : .swipe
        }
        endedWith = method
        return method
    }
}

/// What a decision-driven sheet (SwiftUI's modifier) presents: the decision's sheet, except one the
/// user just dismissed. Without it the sheet comes straight back: the decision that presented it
/// stays in effect until the server has the dismissal and answers anew.
///
/// A dismissed sheet is held back while the decision is the one it was dismissed under, and until its
/// dismissal report finished; a later decision that presents it again (a new count released the
/// latch) is honoured, and a decision without it forgets the hold.
public struct SheetPresentationGate: Sendable, Equatable {
    private var held: [String: Hold] = [:]

    private struct Hold: Sendable, Equatable {
        var decision: Decision?
        var reported: Bool
    }

    /// An empty gate.
    public init() {}

    /// The sheet to present for `decision`, nil when none (or a held one).
    public func sheet(for decision: Decision?) -> SheetPresentation? {
        guard let decision, decision.present, let sheet = decision.sheet else { return nil }
        return isHolding(sheet.id, under: decision) ? nil : sheet
    }

    /// The sheet `sheetId` was dismissed (by the user or a control) while `decision` was in effect.
    public mutating func dismissed(_ sheetId: String, under decision: Decision?) {
        held[sheetId] = Hold(decision: decision, reported: false)
    }

    /// The dismissal report of `sheetId` finished (either way): a new decision presenting it counts.
    public mutating func dismissalReported(_ sheetId: String) { held[sheetId]?.reported = true }

    /// A new decision arrived: holds of sheets it does not present (anywhere in its stack) are let go.
    public mutating func observe(_ decision: Decision?) {
        guard let decision, decision.present else { return held.removeAll() }
        let presented = Set(decision.stack.map(\.id) + [decision.sheet?.id].compactMap { $0 })
        held = held.filter { presented.contains($0.key) }
    }

    /// Whether `sheetId` is held back.
    public func isHolding(_ sheetId: String) -> Bool { held[sheetId] != nil }

    /// Whether `sheetId` is held back from `decision` (as ``sheet(for:)`` decides for the top sheet).
    public func isHolding(_ sheetId: String, under decision: Decision?) -> Bool {
        guard let hold = held[sheetId] else { return false }
        return !(hold.reported && hold.decision != decision)
    }
}

extension SheetPresentationPlan.SwiftUI {
    /// The selection to bind: `current` while the detents still have one of its identifier (the
    /// user's drag is kept; a `content` detent follows its new height), else the plan's selection.
    /// Binding this from the start (not a default the sheet then moves from) means no visible jump.
    public func resolvedSelection(_ current: SheetPresentationPlan.Detent?) -> SheetPresentationPlan.Detent {
        guard let current, let same = detents.first(where: { $0.identifier == current.identifier }) else { return selection }
        return same
    }
}

/// Which measured content height to report (`PUT .../content-height`), and when.
///
/// Reported when the sheet sizes to its content (a `content` detent, or `awaitingContentHeight`), the
/// measured height is new (it differs by at least ``minimumChange`` from what the decision knows and
/// from the last report) and positive. Rounded up to whole points and capped at 10 000, the API's range.
/// Measure the content's ideal height (not the sheet's), so the report cannot feed back on itself.
public struct ContentHeightReporter: Sendable, Equatable {
    /// The smallest change worth a report, in points.
    public var minimumChange: Double
    private var lastReported: [String: Double] = [:]

    /// A reporter ignoring changes under `minimumChange` points.
    public init(minimumChange: Double = 1) { self.minimumChange = minimumChange }

    /// The height to report for `sheet` now that its content measures `measured` points, or nil.
    public mutating func heightToReport(measured: Double, for sheet: SheetPresentation) -> Double? {
        guard measured.isFinite, measured > 0 else { return nil }
        let known = sheet.detents.first { $0.id == .content }?.height ?? sheet.ios?.customDetentHeights["content"]
        guard sheet.awaitingContentHeight || known != nil || sheet.variant == .content else { return nil }
        let height = min(measured.rounded(.up), 10_000)
        if !sheet.awaitingContentHeight, let known, abs(known - height) < minimumChange { return nil }
        if let last = lastReported[sheet.id], abs(last - height) < minimumChange { return nil }
        lastReported[sheet.id] = height
        return height
    }
}

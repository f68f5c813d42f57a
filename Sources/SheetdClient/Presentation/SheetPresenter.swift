// Every decision the UIKit and SwiftUI adapters make, as one plain state machine compiled and tested on
// Linux: decision updates and the system's callbacks go in, commands for the UI and reports for the
// server come out. The adapters only translate both ways.

/// The presentation logic of a decision-driven sheet stack: when to present, replace, update, close
/// and confirm, and what to report (impressions, dismissals with their method, presentations, content
/// heights).
///
/// Feed it with ``handle(_:)`` and carry out each ``Effect`` it returns, in order:
///
/// - **Presentations.** A decision's `stack` is shown bottom to top, one level presented over the other.
///   One transition runs at a time: a level is presented once the one below it is on screen, and
///   nothing new is presented while a level is still on its way out.
/// - **Impressions.** Exactly one per presentation, the first time it is on screen (``Event/appeared(_:)``).
/// - **Dismissals.** Exactly one per presentation that was on screen and ended, with its method: the
///   control the content closed it with; `swipe` or `scrim` for a gesture (a gesture the platform
///   does not name is settled by which of the two the plan allows, `swipe` when both may: the server's
///   rules treat both alike); `programmatic` when the app or a new decision closed it (a sheet the
///   decision withdrew or replaced, or a nested sheet whose parent closed). A presentation that never
///   reached the screen reports neither.
/// - **No re-presentation.** A sheet the user (or the app) closed is not presented again while the
///   decision is the one it was closed under, nor before its dismissal was reported
///   (``Event/dismissalReported(sheetId:)``): see ``SheetPresentationGate``.
/// - **Updates.** A sheet still on screen whose presentation changed (new detents, a content height)
///   gets ``Effect/update(_:)``: re-apply the plan in place (UIKit: inside `animateChanges`), keeping
///   the user's detent while the new plan still has it.
/// - **Flows.** A new top sheet whose `transition` starts from the sheet on screen (`replaceContent`
///   or `resize`) replaces that sheet's content in place (``Effect/replace(_:with:)``).
/// - **Keyboard.** While the keyboard is up, a sheet with a large detent rests at large (the server's
///   `largeDetent`); one without keeps its detent and the system moves it up (`growByKeyboard`). The
///   detent comes back when the keyboard goes, unless the user moved it.
public struct SheetPresenter: Sendable {
    /// A gesture that is dismissing a sheet interactively.
    public enum Gesture: Sendable, Equatable {
        /// A swipe down (the sheet's pan).
        case swipe
        /// A tap on the scrim.
        case scrim
        /// A gesture the platform does not name (SwiftUI).
        case unknown
    }

    /// One presentation of one sheet, from the command that presents it until it is gone.
    public struct Shown: Sendable, Equatable, Identifiable {
        /// Unique per presentation (a new presentation of the same sheet has a new one).
        public let id: String
        /// The sheet, as the latest decision presents it.
        public fileprivate(set) var sheet: SheetPresentation
        /// How to present it on iOS (nil: the decision has no `ios` block; present it with the system's defaults).
        public fileprivate(set) var plan: SheetPresentationPlan?
        /// The detent the sheet should rest at now (the plan's, the user's, or the keyboard's).
        public fileprivate(set) var selection: SheetPresentationPlan.Detent?
    }

    /// What the UI must do, or what must be reported.
    public enum Effect: Sendable, Equatable {
        /// Present `shown` over the presentation `over` (nil: over the app's own screen).
        case present(Shown, over: String?)
        /// Show `shown` in place of the presentation with id `old`, in the same sheet (a flow's next step).
        case replace(String, with: Shown)
        /// Re-apply `shown`'s plan to the sheet on screen (UIKit: detents and selection inside `animateChanges`).
        case update(Shown)
        /// Close the presentation with this id (and every one above it).
        case dismiss(String)
        /// Ask the user to confirm closing the presentation with this id (unsaved input); answer with
        /// ``Event/confirmed(_:)`` or ``Event/confirmationCancelled(_:)``.
        case confirm(String)
        /// Send this report to the server.
        case report(Report)
    }

    /// A report for the server, its `eventId` fixed when it is made.
    public enum Report: Sendable, Equatable {
        /// `POST .../impressions`.
        case impression(sheetId: String, eventId: String)
        /// `POST .../dismissals`.
        case dismissal(sheetId: String, method: DismissalMethod, eventId: String)
        /// `POST .../presentations`.
        case presentation(sheetId: String, mode: OpenMode, parentSheetId: String?, eventId: String)
        /// `PUT .../sheets/{sheetId}/content-height`.
        case contentHeight(sheetId: String, height: Double, eventId: String)
    }

    /// What happened.
    public enum Event: Sendable, Equatable {
        /// A new decision (nil: none yet, or the screen has no decision).
        case decision(Decision?)
        /// The presentation is on screen (UIKit: the presentation's completion; SwiftUI: the content's task).
        case appeared(String)
        /// A gesture began dismissing the presentation.
        case interactiveDismissalBegan(String, Gesture)
        /// The gesture was given up (the sheet snapped back).
        case interactiveDismissalCancelled(String)
        /// A gesture tried to dismiss a sheet that refused it (UIKit's `presentationControllerDidAttemptToDismiss`).
        case dismissalAttempted(String, Gesture)
        /// The content asks to close the presentation with this control (`closeButton`, `cancelButton`,
        /// `action`) or in code (`programmatic`).
        case close(String, DismissalMethod)
        /// The user confirmed closing after ``Effect/confirm(_:)``.
        case confirmed(String)
        /// The user kept the sheet after ``Effect/confirm(_:)``.
        case confirmationCancelled(String)
        /// The presentation is off screen, however it went.
        case gone(String)
        /// The user dragged the sheet to another detent (sheetd's identifier: `medium`, `large`, `content`).
        case detentChanged(String, identifier: String)
        /// The presentation's content measures this many points.
        case contentMeasured(String, height: Double)
        /// The app opens `sheetId` from the presentation `from` (nil: the top one): reported, then shown
        /// when the server's decision stacks it.
        case open(sheetId: String, mode: OpenMode, from: String?)
        /// The software keyboard showed or hid.
        case keyboard(visible: Bool)
        /// The dismissal report of `sheetId` finished (delivered, or given up).
        case dismissalReported(sheetId: String)
    }

    private enum Phase: Sendable, Equatable {
        case presenting, onScreen, ending
    }

    private struct Level: Sendable {
        var shown: Shown
        var phase: Phase
        var impressed = false
        var gesture: Gesture?
        var control: DismissalMethod?
        /// The gesture or control waiting for the user's confirmation.
        var confirming: DismissalMethod?
        /// The selection before the keyboard moved the sheet to large.
        var beforeKeyboard: SheetPresentationPlan.Detent?
    }

    private var levels: [Level] = []
    private var gate = SheetPresentationGate()
    private var heights = ContentHeightReporter()
    private var keyboardVisible = false
    private let makeId: @Sendable () -> String
    /// The decision in effect.
    public private(set) var decision: Decision?

    /// An empty presenter. `makeId` makes presentation and event ids (tests pass a counter).
    public init(makeId: @escaping @Sendable () -> String = SheetdUserClient.makeEventId) { self.makeId = makeId }

    /// The presentations, bottom to top, that are on screen or on their way (not those leaving).
    public var presented: [Shown] { levels.filter { $0.phase != .ending }.map(\.shown) }

    /// The presentation at stack level `index` (0: the root) unless it is leaving: what a SwiftUI
    /// `sheet(item:)` at that level binds.
    public func presentation(atLevel index: Int) -> Shown? {
        index < levels.count && levels[index].phase != .ending ? levels[index].shown : nil
    }

    /// Folds `event` in; returns what to do, in order.
    public mutating func handle(_ event: Event) -> [Effect] {
        var effects: [Effect] = []
        switch event {
        case .decision(let decision):
            self.decision = decision
            gate.observe(decision)
        case .appeared(let id):
            guard let i = index(id), levels[i].phase == .presenting else { break }
            levels[i].phase = .onScreen
            if !levels[i].impressed {
                levels[i].impressed = true
                effects.append(.report(.impression(sheetId: levels[i].shown.sheet.id, eventId: makeId())))
            }
        case .interactiveDismissalBegan(let id, let gesture):
            if let i = index(id), levels[i].phase != .ending { levels[i].gesture = gesture }
        case .interactiveDismissalCancelled(let id):
            if let i = index(id) { levels[i].gesture = nil }
        case .dismissalAttempted(let id, let gesture):
            guard let i = index(id), levels[i].phase == .onScreen, levels[i].confirming == nil else { break }
            guard levels[i].shown.sheet.confirmBeforeDismiss else { break }
            levels[i].confirming = method(of: gesture, plan: levels[i].shown.plan)
            effects.append(.confirm(id))
        case .close(let id, let method):
            guard let i = index(id), levels[i].phase != .ending, levels[i].confirming == nil else { break }
            if levels[i].phase == .onScreen, levels[i].shown.sheet.confirmBeforeDismiss, method == .closeButton || method == .cancelButton {
                levels[i].confirming = method
                effects.append(.confirm(id))
            } else {
                effects += close(i, with: method)
            }
        case .confirmed(let id):
            guard let i = index(id), levels[i].phase != .ending, let method = levels[i].confirming else { break }
            levels[i].confirming = nil
            effects += close(i, with: method)
        case .confirmationCancelled(let id):
            if let i = index(id) { levels[i].confirming = nil }
        case .gone(let id):
            guard let i = index(id) else { break }
            effects += end(from: i)
        case .detentChanged(let id, let identifier):
            guard let i = index(id), let detent = levels[i].shown.plan?.detents.first(where: { $0.identifier == identifier }) else { break }
            levels[i].shown.selection = detent
            levels[i].beforeKeyboard = nil  // the user chose: the keyboard's going does not move it back
        case .contentMeasured(let id, let height):
            guard let i = index(id), levels[i].phase != .ending,
                let points = heights.heightToReport(measured: height, for: levels[i].shown.sheet)
            else { break }
            effects.append(.report(.contentHeight(sheetId: levels[i].shown.sheet.id, height: points, eventId: makeId())))
        case .open(let sheetId, let mode, let from):
            let parent = from.flatMap(index).map { levels[$0] } ?? levels.last { $0.phase != .ending }
            effects.append(.report(.presentation(sheetId: sheetId, mode: mode, parentSheetId: parent?.shown.sheet.id, eventId: makeId())))
        case .keyboard(let visible):
            keyboardVisible = visible
            if let i = levels.lastIndex(where: { $0.phase == .onScreen }) { effects += applyKeyboard(i) }
        case .dismissalReported(let sheetId):
            gate.dismissalReported(sheetId)
        }
        return effects + reconcile()
    }

    // MARK: - Closing and ending

    /// The method a gesture dismisses with: a named one as it is; an unnamed one is the one the plan
    /// allows, `swipe` when both are (the server's rules treat swipe and scrim alike).
    func method(of gesture: Gesture, plan: SheetPresentationPlan?) -> DismissalMethod {
        switch gesture {
        case .swipe: return .swipe
        case .scrim: return .scrim
        case .unknown:
            guard let dismissal = plan?.dismissal else { return .swipe }
            return !dismissal.swipe && dismissal.tapScrim ? .scrim : .swipe
        }
    }

    /// The content or a confirmed gesture closes level `i`: hold the sheet back, then close it.
    private mutating func close(_ i: Int, with method: DismissalMethod) -> [Effect] {
        levels[i].control = method
        levels[i].phase = .ending
        gate.dismissed(levels[i].shown.sheet.id, under: decision)
        return [.dismiss(levels[i].shown.id)]
    }

    /// Level `i` is gone, and every level above it with it: their dismissals, top first.
    private mutating func end(from i: Int) -> [Effect] {
        var effects: [Effect] = []
        for j in stride(from: levels.count - 1, through: i, by: -1) {
            let level = levels[j]
            let method: DismissalMethod
            if j > i {
                method = .programmatic  // its parent closed under it
            } else if let control = level.control {
                method = control
            } else if let gesture = level.gesture {
                method = self.method(of: gesture, plan: level.shown.plan)
                gate.dismissed(level.shown.sheet.id, under: decision)  // the user closed it: keep it closed
            } else {
                method = .programmatic
                if level.phase != .ending { gate.dismissed(level.shown.sheet.id, under: decision) }  // closed by the app, not by us
            }
            if level.impressed {
                effects.append(.report(.dismissal(sheetId: level.shown.sheet.id, method: method, eventId: makeId())))
            } else {
                gate.dismissalReported(level.shown.sheet.id)  // nothing to report: do not wait for a report
            }
        }
        levels.removeSubrange(i...)
        return effects
    }

    // MARK: - Following the decision

    /// The stack to show: the decision's, cut below the first sheet held back.
    private var target: [SheetPresentation] {
        guard let decision, decision.present else { return [] }
        let stack = decision.stack.isEmpty ? decision.sheet.map { [$0] } ?? [] : decision.stack
        let held = stack.firstIndex { gate.isHolding($0.id, under: decision) } ?? stack.count
        return Array(stack[..<held])
    }

    /// Brings the levels toward the target, one transition at a time.
    private mutating func reconcile() -> [Effect] {
        let target = self.target
        var effects: [Effect] = []
        let live = levels.prefix { $0.phase != .ending }.count
        var common = 0
        while common < min(live, target.count), levels[common].shown.sheet.id == target[common].id { common += 1 }
        for i in 0..<common where levels[i].shown.sheet != target[i] { effects += update(i, to: target[i]) }
        // A transition under way finishes first (UIKit cannot present or dismiss during one).
        guard !levels.contains(where: { $0.phase != .onScreen }) else { return effects }
        if common < live {
            let top = levels[live - 1]
            if common == live - 1, target.count == live, let transition = target[common].transition, transition.from == top.shown.sheet.id,
                transition.mode == .replaceContent || transition.mode == .resize
            {
                // A flow's next step: the same sheet shows the new content.
                levels[live - 1].phase = .ending
                var ended = end(from: live - 1)
                let shown = makeShown(target[common])
                levels.append(Level(shown: shown, phase: .presenting))
                ended.append(.replace(top.shown.id, with: shown))
                return effects + ended
            }
            for j in common..<levels.count {
                levels[j].phase = .ending  // the decision closes them: programmatic, whatever the user had begun
                levels[j].gesture = nil
                levels[j].confirming = nil
            }
            return effects + [.dismiss(levels[common].shown.id)]
        }
        if live < target.count {
            let shown = makeShown(target[live])
            let parent = live > 0 ? levels[live - 1].shown.id : nil
            levels.append(Level(shown: shown, phase: .presenting))
            if keyboardVisible { _ = applyKeyboard(levels.count - 1) }
            effects.append(.present(levels[levels.count - 1].shown, over: parent))
        }
        return effects
    }

    private func makeShown(_ sheet: SheetPresentation) -> Shown {
        let plan = SheetPresentationPlan(sheet)
        return Shown(id: makeId(), sheet: sheet, plan: plan, selection: plan?.selectedDetent)
    }

    /// Level `i` shows the same sheet with a new presentation: keep the user's detent while the new
    /// plan has one of its identifier (a `content` detent follows its new height).
    private mutating func update(_ i: Int, to sheet: SheetPresentation) -> [Effect] {
        let plan = SheetPresentationPlan(sheet)
        let current = levels[i].shown.selection
        levels[i].shown.sheet = sheet
        levels[i].shown.plan = plan
        levels[i].shown.selection = plan.map { plan in
            current.flatMap { c in plan.detents.first { $0.identifier == c.identifier } } ?? plan.selectedDetent
        }
        levels[i].beforeKeyboard = levels[i].beforeKeyboard.flatMap { b in plan?.detents.first { $0.identifier == b.identifier } }
        if keyboardVisible { _ = applyKeyboard(i) }
        return levels[i].phase == .onScreen ? [.update(levels[i].shown)] : []
    }

    /// The keyboard rule for level `i`: large while the keyboard is up (when the sheet has a large
    /// detent), back to the detent before it when it goes.
    private mutating func applyKeyboard(_ i: Int) -> [Effect] {
        guard let plan = levels[i].shown.plan else { return [] }
        let before = levels[i].shown.selection
        if keyboardVisible {
            guard plan.detents.contains(.large), levels[i].shown.selection != .large else { return [] }
            levels[i].beforeKeyboard = levels[i].shown.selection
            levels[i].shown.selection = .large
        } else {
            guard let restored = levels[i].beforeKeyboard else { return [] }
            levels[i].beforeKeyboard = nil
            levels[i].shown.selection = restored
        }
        return levels[i].phase == .onScreen && before != levels[i].shown.selection ? [.update(levels[i].shown)] : []
    }

    private func index(_ id: String) -> Int? { levels.firstIndex { $0.shown.id == id } }
}

import Foundation
import SheetdClient
import SheetdClientTesting
import Testing

/// The one presentation logic the UIKit and SwiftUI adapters translate: unit cases for each rule, and a
/// randomized run of its invariants against a simulated UI.
@Suite struct SheetPresenterTests {
    typealias Effect = SheetPresenter.Effect

    /// Ids `p1`, `p2`, ... so effects can be compared whole.
    final class Counter: @unchecked Sendable {
        // @unchecked Sendable: `value` is only touched under `lock`.
        private let lock = NSLock()
        private var value = 0
        func next() -> String {
            lock.withLock {
                value += 1; return "p\(value)"
            }
        }
    }

    static func presenter() -> SheetPresenter {
        let counter = Counter()
        return SheetPresenter(makeId: { counter.next() })
    }

    static func decision(_ stack: [SheetPresentation], _ note: String = "") -> Decision {
        Decision(
            present: !stack.isEmpty, reason: stack.isEmpty ? .noSheetForScreen : .stack, sheet: stack.last, stack: stack, yielded: [],
            trace: ["test \(stack.map(\.id)) \(note)"])
    }

    static func sheet(_ id: String, confirm: Bool = false, from: String? = nil, swipe: Bool = true, scrim: Bool = true) -> SheetPresentation {
        var sheet = SheetPresentation.sample(id: id, swipeToDismiss: swipe, tapScrimToDismiss: scrim)
        sheet.confirmBeforeDismiss = confirm
        if let from { sheet.transition = SheetTransition(from: from, mode: .replaceContent, waitForContentHeight: false) }
        return sheet
    }

    /// The presentations a list of effects presents (present or replace).
    static func presented(_ effects: [Effect]) -> [SheetPresenter.Shown] {
        effects.compactMap {
            switch $0 {
            case .present(let shown, _), .replace(_, let shown): shown
            default: nil
            }
        }
    }

    static func reports(_ effects: [Effect]) -> [SheetPresenter.Report] {
        effects.compactMap { if case .report(let r) = $0 { r } else { nil } }
    }

    static func dismissals(_ effects: [Effect]) -> [String] {
        reports(effects).compactMap { if case .dismissal(let id, let method, _) = $0 { "\(id):\(method.rawValue)" } else { nil } }
    }

    static func impressions(_ effects: [Effect]) -> [String] {
        reports(effects).compactMap { if case .impression(let id, _) = $0 { id } else { nil } }
    }

    /// A decision presents its sheet; the impression is reported when it is on screen, once.
    @Test func aSheetIsPresentedAndItsImpressionReportedOnce() throws {
        var presenter = Self.presenter()
        let effects = presenter.handle(.decision(Self.decision([Self.sheet("a")])))
        let shown = try #require(Self.presented(effects).first)
        #expect(effects == [.present(shown, over: nil)])
        #expect(shown.selection == .medium)
        #expect(presenter.handle(.decision(Self.decision([Self.sheet("a")]))).isEmpty, "the same decision again changes nothing")
        #expect(Self.impressions(presenter.handle(.appeared(shown.id))) == ["a"])
        #expect(presenter.handle(.appeared(shown.id)).isEmpty, "revealed again: no second impression")
        #expect(presenter.presentation(atLevel: 0) == shown)
    }

    /// A swipe is reported as such and the sheet stays away under the decision it was swiped under,
    /// and until its report finished; a changed decision after that presents it again.
    @Test func aSwipedSheetStaysAwayUntilTheDecisionChanges() throws {
        var presenter = Self.presenter()
        let decision = Self.decision([Self.sheet("a")])
        let shown = try #require(Self.presented(presenter.handle(.decision(decision))).first)
        _ = presenter.handle(.appeared(shown.id))
        _ = presenter.handle(.interactiveDismissalBegan(shown.id, .swipe))
        let gone = presenter.handle(.gone(shown.id))
        #expect(Self.dismissals(gone) == ["a:swipe"])
        #expect(Self.presented(gone).isEmpty)
        #expect(Self.presented(presenter.handle(.decision(decision))).isEmpty)
        let changed = Self.decision([Self.sheet("a")], "count 3")
        #expect(Self.presented(presenter.handle(.decision(changed))).isEmpty, "not before the dismissal was reported")
        #expect(Self.presented(presenter.handle(.dismissalReported(sheetId: "a"))).map(\.sheet.id) == ["a"], "the changed decision is honoured")
    }

    /// A gesture given up is forgotten: the scrim tap after it counts; an unnamed gesture (SwiftUI)
    /// is the one the plan allows, swipe when both may.
    @Test func gesturesAreToldApart() throws {
        func end(_ sheet: SheetPresentation, _ steps: (String) -> [SheetPresenter.Event]) throws -> [String] {
            var presenter = Self.presenter()
            let shown = try #require(Self.presented(presenter.handle(.decision(Self.decision([sheet])))).first)
            _ = presenter.handle(.appeared(shown.id))
            var effects: [Effect] = []
            for event in steps(shown.id) + [.gone(shown.id)] { effects += presenter.handle(event) }
            return Self.dismissals(effects)
        }
        #expect(
            try end(Self.sheet("a")) {
                [.interactiveDismissalBegan($0, .swipe), .interactiveDismissalCancelled($0), .interactiveDismissalBegan($0, .scrim)]
            } == ["a:scrim"])
        #expect(try end(Self.sheet("a")) { [.interactiveDismissalBegan($0, .unknown)] } == ["a:swipe"])
        #expect(try end(Self.sheet("a", swipe: false)) { [.interactiveDismissalBegan($0, .unknown)] } == ["a:scrim"])
        #expect(try end(Self.sheet("a", scrim: false)) { [.interactiveDismissalBegan($0, .unknown)] } == ["a:swipe"])
        #expect(try end(Self.sheet("a")) { _ in [] } == ["a:programmatic"], "a plain dismiss by the app is still reported")
        #expect(try end(Self.sheet("a")) { [.close($0, .action)] } == ["a:action"])
    }

    /// A new top sheet replaces the one on screen: the old one's dismissal (programmatic: it does not
    /// latch), then the new one is presented and gets its impression.
    @Test func aReplacedSheetGetsItsDismissalAndTheNewOneItsImpression() throws {
        var presenter = Self.presenter()
        let a = try #require(Self.presented(presenter.handle(.decision(Self.decision([Self.sheet("a")])))).first)
        _ = presenter.handle(.appeared(a.id))
        let replaced = presenter.handle(.decision(Self.decision([Self.sheet("b")])))
        #expect(replaced == [.dismiss(a.id)])
        #expect(presenter.handle(.decision(Self.decision([Self.sheet("b")], "again"))).isEmpty, "one transition at a time")
        let gone = presenter.handle(.gone(a.id))
        #expect(Self.dismissals(gone) == ["a:programmatic"])
        let b = try #require(Self.presented(gone).first)
        #expect(b.sheet.id == "b" && b.id != a.id)
        #expect(Self.impressions(presenter.handle(.appeared(b.id))) == ["b"])
        // A flow's next step (a transition from the sheet on screen) swaps the content in place.
        let step = presenter.handle(.decision(Self.decision([Self.sheet("c", from: "b")])))
        let c = try #require(Self.presented(step).first)
        #expect(Self.dismissals(step) == ["b:programmatic"])
        #expect(step.last == .replace(b.id, with: c))
        #expect(Self.impressions(presenter.handle(.appeared(c.id))) == ["c"])
    }

    /// Stacks: an opened sheet is reported (push, from the sheet on screen) and presented over its
    /// parent when the decision stacks it; closing the root ends both, the nested one first.
    @Test func stacksAreOpenedAndClosedTogether() throws {
        var presenter = Self.presenter()
        let a = try #require(Self.presented(presenter.handle(.decision(Self.decision([Self.sheet("a")])))).first)
        _ = presenter.handle(.appeared(a.id))
        let open = Self.reports(presenter.handle(.open(sheetId: "detail", mode: .push, from: nil)))
        guard case .presentation("detail", .push, "a", _)? = open.first else { Issue.record("\(open)"); return }
        let nested = presenter.handle(.decision(Self.decision([Self.sheet("a"), Self.sheet("detail")])))
        let detail = try #require(Self.presented(nested).first)
        #expect(nested == [.present(detail, over: a.id)])
        _ = presenter.handle(.appeared(detail.id))
        #expect(presenter.presented.map(\.sheet.id) == ["a", "detail"])
        _ = presenter.handle(.interactiveDismissalBegan(a.id, .swipe))
        #expect(Self.dismissals(presenter.handle(.gone(a.id))) == ["detail:programmatic", "a:swipe"])
        #expect(presenter.presented.isEmpty)
    }

    /// The same sheet with a new presentation is updated in place, keeping the user's detent; the
    /// keyboard raises a sheet with a large detent to it and puts it back when it hides.
    @Test func updatesKeepTheUsersDetentAndTheKeyboardRuleApplies() throws {
        var presenter = Self.presenter()
        let a = try #require(Self.presented(presenter.handle(.decision(Self.decision([Self.sheet("a")])))).first)
        _ = presenter.handle(.appeared(a.id))
        guard case .update(let raised)? = presenter.handle(.keyboard(visible: true)).first else { Issue.record("no update"); return }
        #expect(raised.selection == .large && raised.id == a.id)
        guard case .update(let lowered)? = presenter.handle(.keyboard(visible: false)).first else { Issue.record("no update"); return }
        #expect(lowered.selection == .medium)
        _ = presenter.handle(.detentChanged(a.id, identifier: "large"))
        let measured = SheetPresentation.sample(id: "a", contentHeight: 320)
        let updated = presenter.handle(.decision(Self.decision([measured])))
        guard case .update(let shown)? = updated.first else { Issue.record("\(updated)"); return }
        #expect(updated.count == 1)
        #expect(shown.id == a.id && shown.sheet == measured)
        #expect(shown.selection == .large, "the user's detent is kept while the plan has it")
    }

    /// Closing a sheet with unsaved input asks first, from a control or a refused gesture; the answer
    /// decides, and the dismissal carries the method that asked.
    @Test func aDismissalIsConfirmedWhenTheSheetSaysSo() throws {
        var presenter = Self.presenter()
        let f = try #require(Self.presented(presenter.handle(.decision(Self.decision([Self.sheet("f", confirm: true)])))).first)
        _ = presenter.handle(.appeared(f.id))
        #expect(presenter.handle(.close(f.id, .cancelButton)) == [.confirm(f.id)])
        #expect(presenter.handle(.confirmationCancelled(f.id)).isEmpty)
        #expect(presenter.handle(.dismissalAttempted(f.id, .scrim)) == [.confirm(f.id)])
        #expect(presenter.handle(.confirmed(f.id)) == [.dismiss(f.id)])
        #expect(Self.dismissals(presenter.handle(.gone(f.id))) == ["f:scrim"])
        #expect(presenter.handle(.close(f.id, .action)).isEmpty, "gone: nothing to close")
    }

    /// A sheet withdrawn while it is still being presented is closed once it is on screen (its
    /// impression counts, and so does its dismissal); the content height is reported when due.
    @Test func aSheetWithdrawnDuringItsPresentationIsClosedAfterIt() throws {
        var presenter = Self.presenter()
        let awaiting = SheetPresentation.sample(id: "a", awaitingContentHeight: true)
        let a = try #require(Self.presented(presenter.handle(.decision(Self.decision([awaiting])))).first)
        #expect(presenter.handle(.decision(Self.decision([]))).isEmpty)
        let appeared = presenter.handle(.appeared(a.id))
        #expect(Self.impressions(appeared) == ["a"])
        #expect(appeared.last == .dismiss(a.id))
        #expect(Self.reports(presenter.handle(.contentMeasured(a.id, height: 200))).isEmpty, "leaving: no height")
        #expect(Self.dismissals(presenter.handle(.gone(a.id))) == ["a:programmatic"])

        var second = Self.presenter()
        let b = try #require(Self.presented(second.handle(.decision(Self.decision([awaiting])))).first)
        _ = second.handle(.appeared(b.id))
        guard case .contentHeight("a", 201, _)? = Self.reports(second.handle(.contentMeasured(b.id, height: 200.5))).first else {
            Issue.record("no height")
            return
        }
    }

    // MARK: - Randomized invariants

    /// A simulated UI carrying out the presenter's commands, driven by random decisions and user
    /// actions. Invariants, checked on every step and at the end:
    /// exactly one impression per presentation that reached the screen (none otherwise); exactly one
    /// dismissal per presentation that was on screen and ended, none twice, reported in the step that
    /// ended it; a replaced sheet gets its dismissal and the new one its impression; a sheet the user
    /// closed is not presented again under the decision it was closed under or before its report
    /// finished; commands name presentations on screen; and, once everything settled, the screen shows
    /// the decision's stack.
    @Test(arguments: 0..<40) func randomRunsKeepTheInvariants(seed: Int) throws {
        var random = SeededRandom(seed: UInt64(seed) &+ 0x5EED)
        var presenter = Self.presenter()
        let pool: [Decision] = [
            Self.decision([]),
            Self.decision([Self.sheet("a")]),
            Self.decision([Self.sheet("a")], "count changed"),
            Self.decision([SheetPresentation.sample(id: "a", contentHeight: 300)]),
            Self.decision([Self.sheet("b", confirm: true)]),
            Self.decision([Self.sheet("a"), Self.sheet("detail")]),
            Self.decision([Self.sheet("b", confirm: true), Self.sheet("c", from: "b")]),
            Self.decision([Self.sheet("c", from: "b")]),
            Self.decision([Self.sheet("d", swipe: false)]),
        ]
        var ui = SimulatedUI()
        for _ in 0..<150 {
            let event = ui.randomEvent(&random, decisions: pool)
            try ui.apply(presenter.handle(event), after: event)
        }
        // Settle: finish every transition, answer every confirmation, report every dismissal.
        for _ in 0..<50 {
            guard let event = ui.settlingEvent() else { break }
            try ui.apply(presenter.handle(event), after: event)
        }
        #expect(ui.settlingEvent() == nil, "the run settles")
        #expect(ui.screen.map(\.id) == presenter.presented.map(\.id))
        let decision = presenter.decision
        var expected = decision?.present == true ? decision!.stack.map(\.id) : []
        if let held = expected.firstIndex(where: { ui.isHeld($0, under: decision) }) { expected.removeSubrange(held...) }
        #expect(ui.screen.map(\.sheet.id) == expected, "seed \(seed): the screen shows the decision")
        for (id, count) in ui.impressionCount { #expect(count == 1 && ui.appeared.contains(id), "seed \(seed): impressions of \(id)") }
        for id in ui.appeared { #expect(ui.impressionCount[id] == 1, "seed \(seed): \(id) appeared without its impression") }
        for id in ui.ended where ui.appeared.contains(id) { #expect(ui.dismissalCount[id] == 1, "seed \(seed): \(id) ended") }
        for (id, count) in ui.dismissalCount { #expect(count == 1 && ui.ended.contains(id), "seed \(seed): dismissals of \(id)") }
        #expect(ui.violations.isEmpty, "seed \(seed): \(ui.violations)")
    }
}

/// SplitMix64: reproducible runs from a seed.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The screen as UIKit or SwiftUI would hold it, and the bookkeeping of the invariants.
struct SimulatedUI {
    typealias Effect = SheetPresenter.Effect
    /// Presentations on screen (or on their way), bottom to top.
    var screen: [SheetPresenter.Shown] = []
    var pendingAppear: [String] = []
    var pendingGone: String?
    var confirming: Set<String> = []
    var unreportedDismissals: [String] = []
    var appeared: Set<String> = []
    var ended: Set<String> = []
    var impressionCount: [String: Int] = [:]
    var dismissalCount: [String: Int] = [:]
    var violations: [String] = []
    var decision: Decision?
    /// Sheets the user or the app closed: the decision they were closed under, and whether the report finished.
    var holds: [String: (decision: Decision?, reported: Bool)] = [:]

    func isHeld(_ sheetId: String, under decision: Decision?) -> Bool {
        guard let hold = holds[sheetId] else { return false }
        return !(hold.reported && hold.decision != decision)
    }

    /// An event that finishes what is under way, or nil when all is settled.
    func settlingEvent() -> SheetPresenter.Event? {
        if let id = pendingAppear.first { return .appeared(id) }
        if let id = pendingGone { return .gone(id) }
        if let id = confirming.first { return .confirmationCancelled(id) }
        if let sheetId = unreportedDismissals.first { return .dismissalReported(sheetId: sheetId) }
        return nil
    }

    mutating func randomEvent(_ random: inout SeededRandom, decisions: [Decision]) -> SheetPresenter.Event {
        // The user acts on the top sheet once it is on screen, not during a transition.
        let top = pendingGone == nil && pendingAppear.isEmpty ? screen.last : nil
        switch Int.random(in: 0..<14, using: &random) {
        case 0, 1: return .decision(decisions.randomElement(using: &random))
        case 2, 3: if let id = pendingAppear.first { return .appeared(id) }
        case 4: if let id = pendingGone { return .gone(id) }
        case 5: if let top { return .interactiveDismissalBegan(top.id, [.swipe, .scrim, .unknown].randomElement(using: &random)!) }
        case 6: if let top { return .interactiveDismissalCancelled(top.id) }
        case 7: if let top, pendingGone == nil, top.sheet.swipeToDismiss { return .gone(top.id) }  // the gesture (or a plain dismiss) ends it
        case 8: if let top { return .close(top.id, [.closeButton, .cancelButton, .action, .programmatic].randomElement(using: &random)!) }
        case 9: if let id = confirming.first { return Bool.random(using: &random) ? .confirmed(id) : .confirmationCancelled(id) }
        case 10: if let sheetId = unreportedDismissals.first { return .dismissalReported(sheetId: sheetId) }
        case 11: return .keyboard(visible: Bool.random(using: &random))
        case 12: if let top { return .contentMeasured(top.id, height: Double.random(in: 100...500, using: &random)) }
        case 13: if let top { return .open(sheetId: "detail", mode: .push, from: top.id) }
        default: break
        }
        return .keyboard(visible: false)
    }

    mutating func apply(_ effects: [Effect], after event: SheetPresenter.Event) throws {
        var endedNow: [SheetPresenter.Shown] = []
        switch event {
        case .decision(let d):
            decision = d
            let kept = Set(d?.present == true ? d!.stack.map(\.id) : [])
            holds = holds.filter { kept.contains($0.key) }
        case .appeared(let id):
            pendingAppear.removeAll { $0 == id }
            if screen.contains(where: { $0.id == id }) { appeared.insert(id) }
        case .gone(let id):
            let commanded = pendingGone == id
            if commanded { pendingGone = nil }
            if let i = screen.firstIndex(where: { $0.id == id }) {
                endedNow = Array(screen[i...])
                screen.removeSubrange(i...)
                pendingAppear.removeAll { p in endedNow.contains { $0.id == p } }
                // The user or the app closed it, not a command: held until the decision changes.
                if !commanded { holds[endedNow[0].sheet.id] = (decision, false) }
            }
        case .dismissalReported(let sheetId):
            unreportedDismissals.removeAll { $0 == sheetId }
            if holds[sheetId] != nil { holds[sheetId]!.reported = true }
        case .confirmationCancelled(let id), .confirmed(let id):
            confirming.remove(id)
        default: break
        }
        var dismissedNow: [String] = []
        for effect in effects {
            switch effect {
            case .present(let shown, let over):
                if over != screen.last?.id { violations.append("\(shown.sheet.id) presented over \(String(describing: over))") }
                if isHeld(shown.sheet.id, under: decision) { violations.append("\(shown.sheet.id) presented again while held") }
                if pendingGone != nil || !pendingAppear.isEmpty { violations.append("present during a transition") }
                screen.append(shown)
                pendingAppear.append(shown.id)
            case .replace(let old, let shown):
                guard screen.last?.id == old else {
                    violations.append("replace of \(old), not the top")
                    continue
                }
                endedNow.append(screen.removeLast())
                screen.append(shown)
                pendingAppear.append(shown.id)
            case .update(let shown):
                guard let i = screen.firstIndex(where: { $0.id == shown.id }) else {
                    violations.append("update of \(shown.id), not on screen")
                    continue
                }
                screen[i] = shown
            case .dismiss(let id):
                if !screen.contains(where: { $0.id == id }) { violations.append("dismiss of \(id), not on screen") }
                if pendingGone != nil { violations.append("dismiss during a dismissal") }
                pendingGone = id
                // A close from the content (or a confirmed one) holds the sheet; the decision's own does not.
                if event.isClose || event.isConfirmed, let sheetId = screen.first(where: { $0.id == id })?.sheet.id {
                    holds[sheetId] = (decision, false)
                }
            case .confirm(let id):
                confirming.insert(id)
            case .report(.impression(let sheetId, _)):
                guard case .appeared(let id) = event, screen.last(where: { $0.id == id })?.sheet.id == sheetId else {
                    violations.append("impression of \(sheetId) outside its appearance")
                    continue
                }
                impressionCount[id, default: 0] += 1
            case .report(.dismissal(let sheetId, _, _)):
                dismissedNow.append(sheetId)
                unreportedDismissals.append(sheetId)
            default: break
            }
        }
        // The dismissals of this step are exactly the presentations it ended that had reached the screen, top first.
        let expected = endedNow.reversed().filter { appeared.contains($0.id) }
        if dismissedNow != expected.map(\.sheet.id) {
            violations.append("after \(event): dismissals \(dismissedNow), ended \(endedNow.map(\.sheet.id))")
        }
        for shown in endedNow {
            ended.insert(shown.id)
            if appeared.contains(shown.id) { dismissalCount[shown.id, default: 0] += 1 }
        }
    }
}

extension SheetPresenter.Event {
    var isClose: Bool { if case .close = self { true } else { false } }
    var isConfirmed: Bool { if case .confirmed = self { true } else { false } }
}

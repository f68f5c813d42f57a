import Foundation
public import SheetdClient

/// An in-memory ``SheetdClientProtocol`` for an app's unit tests: scripted decisions, recorded events,
/// no server.
///
/// ```swift
/// let fake = FakeSheetdClient(decision: .presenting(.sample(id: "offers")))
/// let model = HomeModel(sheetd: fake)          // your code, written against SheetdClientProtocol
/// await model.userSwipedAwayTheSheet()
/// #expect(fake.events == [.impression(sheetId: "offers"), .dismissal(sheetId: "offers", method: .swipe)])
/// ```
///
/// - Decisions: ``setDecision(_:for:)`` answers ``decision(for:)`` and pushes to every live
///   ``decisions(for:)`` of that context (a decision for `nil` is every other context's).
/// - Events are recorded in ``events`` in order; an `eventId` seen before is answered as the server
///   answers a retry (`replayed`, not recorded twice). ``onEvent`` lets a test react like a server
///   (e.g. stop presenting a sheet once it is dismissed).
/// - ``failNext(_:times:)`` makes the next calls throw (a ``SheetdError``, e.g. offline).
/// - Outcomes are plausible, not the policy's: counts are stored, impressions counted per sheet,
///   presentations and dismissals push and pop a stack; nothing latches.
public final class FakeSheetdClient: SheetdClientProtocol, @unchecked Sendable {
    // @unchecked Sendable: every stored property is only touched under `lock`.

    /// One event the code under test reported.
    public enum Event: Sendable, Hashable {
        /// ``reportCount(_:container:seq:filter:eventId:)``.
        case count(container: String, count: Int, seq: Int?, filter: String?)
        /// ``dismiss(_:method:eventId:)``.
        case dismissal(sheetId: String, method: DismissalMethod)
        /// ``present(_:mode:parentSheetId:eventId:)``.
        case presentation(sheetId: String, mode: OpenMode, parentSheetId: String?)
        /// ``reportContentHeight(_:sheetId:platform:eventId:)``.
        case contentHeight(sheetId: String, height: Double, platform: Platform)
        /// ``reportImpression(_:eventId:)``.
        case impression(sheetId: String)
        /// ``reportConversion(_:goal:eventId:)``.
        case conversion(sheetId: String, goal: String?)
        /// ``erase()``.
        case erase
    }

    /// Called after each newly recorded event (outside the fake's lock: it may call the fake).
    public var onEvent: (@Sendable (Event) -> Void)? {
        get { locked { eventHandler } }
        set { locked { eventHandler = newValue } }
    }

    private let lock = NSLock()
    private let userId: String
    private var defaultDecision: Decision
    private var decisionsByContext: [SheetContext: Decision] = [:]
    private var recorded: [Event] = []
    private var eventIds: Set<String> = []
    private var contexts: [SheetContext] = []
    private var failures: [(error: SheetdError, remaining: Int)] = []
    private var followers: [UUID: (context: SheetContext, continuation: AsyncThrowingStream<SheetDecision, any Error>.Continuation)] = [:]
    private var counts: [String: Int] = [:]
    private var impressions: [String: Int] = [:]
    private var stack: [String] = []
    private var heights: [String: Double] = [:]
    private var eventHandler: (@Sendable (Event) -> Void)?

    /// A fake for `userId` answering `decision` for every context until told otherwise.
    public init(userId: String = "test-user", decision: Decision = .noSheet) {
        self.userId = userId
        self.defaultDecision = decision
    }

    // MARK: - Scripting and inspection

    /// Answers `decision` for `context` from now on (nil: every context without one of its own) and
    /// delivers it to the live sequences following an affected context.
    public func setDecision(_ decision: Decision, for context: SheetContext? = nil) {
        let targets: [AsyncThrowingStream<SheetDecision, any Error>.Continuation] = locked {
            if let context { decisionsByContext[context] = decision } else { defaultDecision = decision }
            let affected = followers.values.filter { context.map($0.context.equals) ?? (decisionsByContext[$0.context] == nil) }
            return affected.map(\.continuation)
        }
        for continuation in targets { continuation.yield(decision) }
    }

    /// Makes the next `times` calls (of any method but ``decisions(for:)``) throw `error`.
    public func failNext(_ error: SheetdError, times: Int = 1) { locked { failures.append((error, times)) } }

    /// Ends every live ``decisions(for:)`` sequence, with `error` when given.
    public func finishLiveDecisions(throwing error: SheetdError? = nil) {
        let continuations = locked {
            defer { followers.removeAll() }
            return followers.values.map(\.continuation)
        }
        for continuation in continuations { continuation.finish(throwing: error) }
    }

    /// The events reported so far, in order (replays of an `eventId` left out).
    public var events: [Event] { locked { recorded } }

    /// The contexts ``decision(for:)`` and ``decisions(for:)`` were asked for, in order.
    public var requestedContexts: [SheetContext] { locked { contexts } }

    /// How many live ``decisions(for:)`` sequences are being followed.
    public var liveFollowerCount: Int { locked { followers.count } }

    /// Forgets the recorded events and contexts (the scripted decisions stay).
    public func clearRecords() {
        locked {
            recorded.removeAll()
            contexts.removeAll()
        }
    }

    // MARK: - SheetdClientProtocol

    /// The scripted decision for `context`.
    public func decision(for context: SheetContext) async throws -> Decision {
        try locked {
            contexts.append(context)
            try throwIfScripted()
            return currentDecision(for: context)
        }
    }

    /// The scripted decision for `context` now, then each one ``setDecision(_:for:)`` scripts for it.
    public func decisions(for context: SheetContext) -> AsyncThrowingStream<SheetDecision, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: SheetDecision.self)
        let id = UUID()
        let current = locked {
            contexts.append(context)
            followers[id] = (context, continuation)
            return currentDecision(for: context)
        }
        continuation.onTermination = { [weak self] _ in self?.locked { _ = self?.followers.removeValue(forKey: id) } }
        continuation.yield(current)
        return stream
    }

    /// Records the count.
    public func reportCount(_ count: Int, container: String, seq: Int?, filter: String?, eventId: String?) async throws -> EventReceipt<CountOutcome>
    {
        try record(.count(container: container, count: count, seq: seq, filter: filter), eventId: eventId) {
            let key = container + "\u{0}" + (filter ?? "")
            let changed = counts[key] != count
            counts[key] = count
            return CountOutcome(containerId: container, filter: filter ?? "", count: count, changed: changed, applied: true)
        }
    }

    /// Records the dismissal; the sheet leaves the fake's stack.
    public func dismiss(_ sheetId: String, method: DismissalMethod, eventId: String?) async throws -> EventReceipt<DismissalOutcome> {
        try record(.dismissal(sheetId: sheetId, method: method), eventId: eventId) {
            if let index = stack.lastIndex(of: sheetId) { stack.removeSubrange(index...) }
            return DismissalOutcome(stack: stack, latched: false)
        }
    }

    /// Records the presentation; the sheet joins the fake's stack (`replace` swaps the top).
    public func present(_ sheetId: String, mode: OpenMode, parentSheetId: String?, eventId: String?) async throws -> EventReceipt<PresentationOutcome>
    {
        try record(.presentation(sheetId: sheetId, mode: mode, parentSheetId: parentSheetId), eventId: eventId) {
            if stack.isEmpty, let parentSheetId { stack.append(parentSheetId) }
            if mode == .replace, !stack.isEmpty { stack.removeLast() }
            stack.append(sheetId)
            return PresentationOutcome(stack: stack)
        }
    }

    /// Records the height.
    public func reportContentHeight(
        _ height: Double, sheetId: String, platform: Platform, eventId: String?
    ) async throws -> EventReceipt<ContentHeightOutcome> {
        try record(.contentHeight(sheetId: sheetId, height: height, platform: platform), eventId: eventId) {
            heights[sheetId] = height
            return ContentHeightOutcome(sheetId: sheetId, platform: platform, height: height)
        }
    }

    /// Records the conversion; the outcome names the arm of the sheet in the current default decision
    /// (counted when the sheet is presented there with an experiment, unattributed otherwise).
    public func reportConversion(_ sheetId: String, goal: String?, eventId: String?) async throws -> EventReceipt<ConversionOutcome> {
        try record(.conversion(sheetId: sheetId, goal: goal), eventId: eventId) {
            let experiment = defaultDecision.stack.first { $0.id == sheetId }?.experiment
            return ConversionOutcome(sheetId: sheetId, experimentId: experiment?.id, goal: goal, counted: experiment != nil, arm: experiment?.arm)
        }
    }

    /// Records the impression; the outcome counts this sheet's impressions.
    public func reportImpression(_ sheetId: String, eventId: String?) async throws -> EventReceipt<ImpressionOutcome> {
        try record(.impression(sheetId: sheetId), eventId: eventId) {
            impressions[sheetId, default: 0] += 1
            return ImpressionOutcome(sheetId: sheetId, impressions: impressions[sheetId]!)
        }
    }

    /// What the fake stores: counts, the stack, heights and impression totals.
    public func state() async throws -> UserState {
        try locked {
            try throwIfScripted()
            return UserState(
                userId: userId,
                containers: counts.sorted { $0.key < $1.key }.map { key, count in
                    let parts = key.split(separator: "\u{0}", omittingEmptySubsequences: false)
                    return UserState.Container(containerId: String(parts[0]), filter: String(parts[1]), count: count)
                },
                latches: [], stack: stack.map { UserState.StackEntry(sheetId: $0, mode: .push) },
                contentHeights: heights.sorted { $0.key < $1.key }.map { UserState.ContentHeight(sheetId: $0.key, platform: .ios, height: $0.value) },
                impressions: impressions.sorted { $0.key < $1.key }.map { UserState.Impressions(sheetId: $0.key, total: $0.value, recent: []) })
        }
    }

    /// No segments.
    public func segments() async throws -> [String] {
        try locked {
            try throwIfScripted()
            return []
        }
    }

    /// No global rules.
    public func settings() async throws -> GlobalSettings {
        try locked {
            try throwIfScripted()
            return GlobalSettings()
        }
    }

    /// Records the erasure and forgets the stored state.
    public func erase() async throws {
        _ = try record(.erase, eventId: nil) {
            counts.removeAll()
            impressions.removeAll()
            stack.removeAll()
            heights.removeAll()
            return true
        }
    }

    // MARK: - Internals

    private func locked<T>(_ body: () throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    private func currentDecision(for context: SheetContext) -> Decision { decisionsByContext[context] ?? defaultDecision }

    /// Throws the next scripted failure, if any (the lock held).
    private func throwIfScripted() throws {
        guard !failures.isEmpty else { return }
        let error = failures[0].error
        failures[0].remaining -= 1
        if failures[0].remaining <= 0 { failures.removeFirst() }
        throw error
    }

    /// Records `event` once per `eventId` and returns the receipt of `outcome` (the first outcome for a replay).
    private func record<Outcome: Sendable & Equatable>(
        _ event: Event, eventId: String?, outcome: () -> Outcome
    ) throws -> EventReceipt<Outcome> {
        let id = eventId ?? SheetdUserClient.makeEventId()
        let (receipt, handler): (EventReceipt<Outcome>, (@Sendable (Event) -> Void)?) = try locked {
            try throwIfScripted()
            if let first = replies[id] as? Outcome { return (EventReceipt(outcome: first, eventId: id, replayed: true, attempts: 1), nil) }
            let value = outcome()
            replies[id] = value
            recorded.append(event)
            return (EventReceipt(outcome: value, eventId: id, replayed: false, attempts: 1), eventHandler)
        }
        handler?(event)
        return receipt
    }

    private var replies: [String: any Sendable] = [:]
}

extension SheetContext {
    fileprivate func equals(_ other: SheetContext) -> Bool { self == other }
}

extension Decision {
    /// Nothing to present (`no-sheet-for-screen`).
    public static let noSheet = Decision(present: false, reason: .noSheetForScreen, stack: [], yielded: [], trace: ["fake: no sheet"])

    /// A decision presenting `sheet` (`cards-available` for a card sheet, `stack` otherwise).
    public static func presenting(_ sheet: SheetPresentation) -> Decision {
        Decision(
            present: true, reason: sheet.kind == .cards ? .cardsAvailable : .stack, sheet: sheet, stack: [sheet], yielded: [],
            trace: ["fake: presents \(sheet.id)"])
    }
}

extension SheetPresentation {
    /// A plausible iOS presentation for tests: a card sheet at the medium detent of medium and large,
    /// swipe and scrim tap dismiss, with the matching `ios` block (UIKit members and `swiftui`).
    /// `contentHeight` adds a `content` detent of that height (selected); `awaitingContentHeight`
    /// says the height is still to be reported.
    public static func sample(
        id: String, kind: SheetKind = .cards, contentHeight: Double? = nil, awaitingContentHeight: Bool = false, swipeToDismiss: Bool = true,
        tapScrimToDismiss: Bool = true, largestUndimmedDetent: DetentId? = nil
    ) -> SheetPresentation {
        let ids: [DetentId] = contentHeight == nil ? [.medium, .large] : [.content, .large]
        let selected: DetentId = contentHeight == nil ? .medium : .content
        let modal = !swipeToDismiss && !tapScrimToDismiss
        func swiftUIDetent(_ id: DetentId) -> SwiftUIDetent {
            switch id {
            case .content: SwiftUIDetent(kind: .height, height: contentHeight)
            case .medium: SwiftUIDetent(kind: .medium)
            default: SwiftUIDetent(kind: .large)
            }
        }
        let ios = IosSheet(
            detents: ids, customDetentHeights: contentHeight.map { ["content": $0] } ?? [:], selectedDetentIdentifier: selected,
            largestUndimmedDetentIdentifier: largestUndimmedDetent, prefersGrabberVisible: true, prefersScrollingExpandsWhenScrolledToEdge: true,
            prefersEdgeAttachedInCompactHeight: true, widthFollowsPreferredContentSizeWhenEdgeAttached: true, isModalInPresentation: modal,
            modalPresentationStyle: .pageSheet,
            dismissal: IosDismissal(swipe: swipeToDismiss, tapScrim: tapScrimToDismiss, requiresDelegate: swipeToDismiss != tapScrimToDismiss),
            swiftui: SwiftUISheet(
                presentationDetents: ids.map(swiftUIDetent), selection: swiftUIDetent(selected), presentationDragIndicator: .visible,
                presentationBackgroundInteraction: SwiftUIBackgroundInteraction(
                    kind: largestUndimmedDetent == nil ? .disabled : .enabled, upThrough: largestUndimmedDetent.map(swiftUIDetent)),
                presentationContentInteraction: .resizes, interactiveDismissDisabled: !swipeToDismiss))
        return SheetPresentation(
            id: id, kind: kind, variant: contentHeight == nil ? .medium : .content,
            detents: ids.map { Detent(id: $0, height: $0 == .content ? contentHeight : nil) }, selectedDetent: selected, grabberVisible: true,
            swipeToDismiss: swipeToDismiss, tapScrimToDismiss: tapScrimToDismiss, largestUndimmedDetent: largestUndimmedDetent,
            dismissAffordance: kind == .cards ? DismissAffordance.none : .closeIcon, confirmBeforeDismiss: false, expandsOnScrollToEdge: true,
            parentScalesBehind: false, awaitingContentHeight: awaitingContentHeight, scrollable: false, scrimAccessibleAsClose: tapScrimToDismiss,
            presentationStyle: .sheet, ios: ios)
    }
}

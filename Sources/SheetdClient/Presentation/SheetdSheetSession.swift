/// One presented sheet wired to a client: the adapters call it from the system's callbacks and it
/// reports the impression, the dismissal (with its method) and content heights as ``SheetLifecycle``
/// and ``ContentHeightReporter`` decide. Plain and `Sendable` (tested on Linux with the fake client);
/// each report runs in its own task, returned so tests (and callers who care) can await it. A failed
/// report (after the client's retries) goes to `onError`; it never reaches the UI.
public final class SheetdSheetSession: Sendable {
    /// The sheet.
    public var sheet: SheetPresentation { state.withLock { $0.lifecycle.sheet } }
    /// The presentation plan of the sheet (nil for a sheet without an `ios` block).
    public let plan: SheetPresentationPlan?
    private let client: any SheetdClientProtocol
    private let onError: @Sendable (any Error) -> Void
    private let state: LockedBox<(lifecycle: SheetLifecycle, heights: ContentHeightReporter)>

    /// A session for one presentation of `sheet`.
    public init(sheet: SheetPresentation, client: any SheetdClientProtocol, onError: @escaping @Sendable (any Error) -> Void = { _ in }) {
        self.client = client
        self.onError = onError
        self.plan = SheetPresentationPlan(sheet)
        state = LockedBox((SheetLifecycle(sheet: sheet), ContentHeightReporter()))
    }

    /// The sheet is on screen: reports the impression the first time.
    @discardableResult
    public func appeared() -> Task<Void, Never>? {
        let lifecycle = state.withLock { box -> SheetLifecycle? in box.lifecycle.appeared() ? box.lifecycle : nil }
        guard let lifecycle else { return nil }
        return report { [client] in _ = try await client.reportImpression(lifecycle.sheet.id, eventId: lifecycle.impressionEventId) }
    }

    /// The app closes the sheet through a control or in code: the dismissal is reported with `method`.
    public func willClose(with method: DismissalMethod) { state.withLock { $0.lifecycle.willClose(with: method) } }

    /// An interactive dismissal began; `dragging`: the sheet's pan was under way.
    public func interactiveDismissalBegan(dragging: Bool) { state.withLock { $0.lifecycle.interactiveDismissalBegan(dragging: dragging) } }

    /// The interactive dismissal was cancelled (the sheet stayed).
    public func interactiveDismissalCancelled() { state.withLock { $0.lifecycle.interactiveDismissalCancelled() } }

    /// The sheet is gone (`interactive`: on a gesture): reports the dismissal once. `completion` runs
    /// after the report, either way (the SwiftUI gate lets the sheet present again from then on).
    @discardableResult
    public func dismissed(interactive: Bool, completion: @escaping @Sendable () -> Void = {}) -> Task<Void, Never>? {
        let plan = self.plan
        let ended = state.withLock { box -> (SheetLifecycle, DismissalMethod)? in
            box.lifecycle.dismissed(interactive: interactive, plan: plan).map { (box.lifecycle, $0) }
        }
        guard let (lifecycle, method) = ended else { return nil }
        return report(completion: completion) { [client] in
            _ = try await client.dismiss(lifecycle.sheet.id, method: method, eventId: lifecycle.dismissalEventId)
        }
    }

    /// The content measures `height` points: reports it when the decision waits for it or it changed.
    @discardableResult
    public func measured(height: Double) -> Task<Void, Never>? {
        let due = state.withLock { box -> (String, Double)? in
            box.heights.heightToReport(measured: height, for: box.lifecycle.sheet).map { (box.lifecycle.sheet.id, $0) }
        }
        guard let (sheetId, points) = due else { return nil }
        return report { [client] in _ = try await client.reportContentHeight(points, sheetId: sheetId, platform: .ios, eventId: nil) }
    }

    private func report(completion: @escaping @Sendable () -> Void = {}, _ body: @escaping @Sendable () async throws -> Void) -> Task<Void, Never> {
        let onError = self.onError
        return Task {
            do { try await body() } catch { onError(error) }
            completion()
        }
    }
}

/// Runs a ``SheetPresenter`` for an adapter: hands the UI its commands (``perform``) and sends the
/// reports, in the order they were made, through a ``SheetdOutbox`` (kept across launches and
/// network loss) or, without one, straight through the client. A finished dismissal report is fed
/// back (``SheetPresenter/Event/dismissalReported(sheetId:)``). Main-actor bound, as UI callbacks are;
/// tested on Linux with the fake client.
@MainActor public final class SheetdSheetDriver {
    /// The state machine.
    public private(set) var presenter: SheetPresenter
    /// Carries out a UI command (every effect but reports). Set by the adapter.
    public var perform: (SheetPresenter.Effect) -> Void = { _ in }
    /// Called after every event (SwiftUI: re-render).
    public var onChange: () -> Void = {}
    private let client: any SheetdClientProtocol
    private let outbox: SheetdOutbox?
    private let onError: @Sendable (any Error) -> Void
    private var tail: Task<Void, Never>?

    /// A driver reporting through `outbox` when given, else through `client` (a failed report goes to `onError`).
    public init(
        client: any SheetdClientProtocol, outbox: SheetdOutbox? = nil, presenter: SheetPresenter = SheetPresenter(),
        onError: @escaping @Sendable (any Error) -> Void = { _ in }
    ) {
        self.client = client
        self.outbox = outbox
        self.presenter = presenter
        self.onError = onError
    }

    /// Feeds `event` to the presenter and carries out what it returns. An event that arrives while an
    /// effect is being carried out (a UI callback fired at once) waits for the effects before it.
    public func handle(_ event: SheetPresenter.Event) {
        queued.append(event)
        guard !handling else { return }
        handling = true
        defer { handling = false }
        while !queued.isEmpty {
            for effect in presenter.handle(queued.removeFirst()) {
                if case .report(let report) = effect { send(report) } else { perform(effect) }
            }
        }
        onChange()
    }

    private var queued: [SheetPresenter.Event] = []
    private var handling = false

    /// Resolves once every report made so far was handed over (kept in the outbox, or sent).
    public func reportsHandedOver() async { await tail?.value }

    private func send(_ report: SheetPresenter.Report) {
        let event = SheetdEvent(report)
        let previous = tail
        let (client, outbox, onError) = (client, outbox, onError)
        let handedOver = Task {
            await previous?.value
            do {
                if let outbox { try await outbox.enqueue(event) } else { _ = try await client.deliver(event) }
            } catch {
                onError(error)
            }
        }
        tail = handedOver
        guard case .dismissal(let sheetId, _, _) = report else { return }
        Task { [weak self] in
            await handedOver.value
            if let outbox { _ = await outbox.settlement(of: event.eventId) }
            self?.handle(.dismissalReported(sheetId: sheetId))
        }
    }
}

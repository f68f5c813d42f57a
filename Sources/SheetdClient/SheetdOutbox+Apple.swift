// When an outbox flushes on iOS: when the network returns (NWPathMonitor) and when the app comes to
// the foreground. Compiled only on iOS (and Mac Catalyst): by the macOS workflow, not on Linux.
#if os(iOS)
import Network
import UIKit

extension SheetdOutbox {
    /// Flushes this outbox whenever the network becomes usable and whenever the app enters the
    /// foreground, for as long as the returned observer is kept.
    @MainActor public func observeSystem() -> SheetdOutboxObserver { SheetdOutboxObserver(self) }
}

/// Flushes an outbox on network return and on foreground while it lives (``SheetdOutbox/observeSystem()``).
@MainActor public final class SheetdOutboxObserver {
    nonisolated(unsafe) private let monitor = NWPathMonitor()  // cancelled by deinit too
    nonisolated(unsafe) private var token: (any NSObjectProtocol)?  // read once more, by deinit

    init(_ outbox: SheetdOutbox) {
        monitor.pathUpdateHandler = { path in
            if path.status == .satisfied { Task { await outbox.flush() } }
        }
        monitor.start(queue: DispatchQueue(label: "sheetd.outbox.network"))
        token = NotificationCenter.default.addObserver(forName: UIApplication.willEnterForegroundNotification, object: nil, queue: .main) { _ in
            Task { await outbox.flush() }
        }
    }

    deinit {
        monitor.cancel()
        if let token { NotificationCenter.default.removeObserver(token) }
    }
}
#endif

import MicroHTTP
import SheetStore
import Synchronization

/// Proves a cached decision current on a shared database without reading it: waits until every
/// change another replica committed before the request arrived has reached this replica's listener
/// (`SharedSheetStore.syncChanges`: one round trip on the listening session, no per-user read), after
/// which the decision cache, kept exact by those notifications, can be trusted.
///
/// Group commit for barriers: a request queues; one round trip is in flight at a time, and serves
/// every request queued before it started; requests arriving meanwhile wait for the next one. The
/// answers of a round trip are settled together and their parked connections resumed in one burst.
final class ChangeBarrier: Sendable {
    /// `true`: every change committed before the request arrived was applied; `false`: not promised
    /// (no listener listening), check versions instead.
    typealias Completion = @Sendable (Bool) -> Void

    private struct Pending: Sendable {
        var waiting: [Completion] = []
        var inFlight = false
    }

    private let store: any SharedSheetStore
    private let pending = Mutex(Pending())

    init(store: any SharedSheetStore) {
        self.store = store
    }

    /// Queues a request; `completion` runs on the listener's thread (keep it short).
    func wait(_ completion: @escaping Completion) {
        let start = pending.withLock { p in
            p.waiting.append(completion)
            if p.inFlight { return false }
            p.inFlight = true
            return true
        }
        if start { launch() }
    }

    /// One round trip for everything queued now; when it is back, the next one for what queued meanwhile.
    private func launch() {
        let batch = pending.withLock { p in
            defer { p.waiting.removeAll() }
            return p.waiting
        }
        store.syncChanges { [self] heard in
            ResponsePromise.resumingTogether {
                for completion in batch { completion(heard) }
            }
            let more = pending.withLock { p in
                if p.waiting.isEmpty { p.inFlight = false }
                return !p.waiting.isEmpty
            }
            if more { launch() }
        }
    }
}

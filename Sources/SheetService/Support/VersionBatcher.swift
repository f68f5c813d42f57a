import Dispatch
import SheetStore
import Synchronization

/// Checks the store versions of cached decisions for many requests in one round trip (the decision
/// route on a shared database, when the answer is cached).
///
/// Group commit for reads, on the requests' own threads: a request queues its user; when no
/// statement is running it leads: it takes everything queued (itself included), reads all those
/// users' versions and the catalog's in one statement, hands each waiting request its versions, and
/// passes the lead to the first request that queued meanwhile. The others block on their own
/// semaphore until then. Blocking an HTTP worker costs less than parking its connection and resuming
/// it (a suspend, a wake-up of the worker, a resume), and no batcher thread is woken in between.
/// Each statement starts after every request it answers was queued, so the versions it reads are at
/// least as new as every write acknowledged before those requests were sent: the read-your-writes
/// argument of the one-request check, unchanged.
final class VersionBatcher: Sendable {
    /// What a waiting request is handed: its versions, or the lead of the next statement.
    private enum Outcome: Sendable {
        case done(Result<SharedVersions, StoreError>)
        case lead
    }

    private final class Waiter: Sendable {
        let userId: String
        let outcome = Mutex<Outcome?>(nil)
        let signal = DispatchSemaphore(value: 0)

        init(_ userId: String) { self.userId = userId }

        func hand(_ outcome: Outcome) {
            self.outcome.withLock { $0 = outcome }
            signal.signal()
        }

        func wait() -> Outcome {
            signal.wait()
            return outcome.withLock { $0! }
        }
    }

    private struct Pending: Sendable {
        var waiting: [Waiter] = []
        var running = false
    }

    /// At most this many users per statement.
    static let maxBatch = 512

    private let store: any SharedSheetStore
    private let pending = Mutex(Pending())
    /// Statements run and requests they answered (for tests and metrics).
    let statements = Atomic<Int>(0)
    let checked = Atomic<Int>(0)

    init(store: any SharedSheetStore) {
        self.store = store
    }

    /// `userId`'s version and the catalog's, read by a statement that started after this call; blocks
    /// the calling thread for about one round trip.
    func versions(of userId: String) -> Result<SharedVersions, StoreError> {
        let waiter = Waiter(userId)
        let leads = pending.withLock { p in
            p.waiting.append(waiter)
            if p.running { return false }
            p.running = true
            return true
        }
        if !leads, case .done(let result) = waiter.wait() { return result }
        // This request leads: everyone queued so far (itself first) shares one statement.
        let batch = pending.withLock { p in
            let batch = Array(p.waiting.prefix(Self.maxBatch))
            p.waiting.removeFirst(batch.count)
            return batch
        }
        statements.add(1, ordering: .relaxed)
        checked.add(batch.count, ordering: .relaxed)
        let results: [Result<SharedVersions, StoreError>]
        do {
            let (users, catalog) = try store.versions(userIds: batch.map(\.userId))
            results = users.map { .success(SharedVersions(user: $0, catalog: catalog)) }
        } catch {
            results = Array(repeating: .failure(error), count: batch.count)
        }
        var own: Result<SharedVersions, StoreError> = .failure(.failure("no version read"))
        for (request, result) in zip(batch, results) {
            if request === waiter { own = result } else { request.hand(.done(result)) }
        }
        // The lead passes to the oldest request still queued (it runs the next statement), or lapses.
        let next = pending.withLock { p -> Waiter? in
            if let first = p.waiting.first { return first }
            p.running = false
            return nil
        }
        next?.hand(.lead)
        return own
    }
}

import Concurrency
import SheetPolicy
import SheetStore
import Synchronization

/// Checks the store versions of cached decisions, and reads the states of uncached ones, for many
/// requests in one round trip (the decision route on a shared database).
///
/// Group commit for reads: a request queues its user; one thread takes everything queued, reads all
/// those users' versions and the catalog's in one statement, and completes each request; requests
/// arriving meanwhile wait for the next statement. Each statement starts after every request it
/// answers was queued, so the versions it reads are at least as new as every write acknowledged before
/// those requests were sent: the read-your-writes argument of the one-request check, unchanged. A
/// state is read in the same statement as its version (one snapshot): it is the state at that version.
final class VersionBatcher: Sendable {
    /// The versions, and the state when it was asked for.
    typealias Completion = @Sendable (Result<(versions: SharedVersions, state: UserState?), StoreError>) -> Void

    private struct Pending: Sendable {
        var requests: [(userId: String, loadingState: Bool, completion: Completion)] = []
        var running = false
    }

    /// At most this many users per statement.
    static let maxBatch = 512

    private let store: any SharedSheetStore
    private let pending = Mutex(Pending())
    private let thread = WorkerThreads(count: 1)
    /// Statements run and requests they answered (for tests and metrics).
    let statements = Atomic<Int>(0)
    let checked = Atomic<Int>(0)

    init(store: any SharedSheetStore) {
        self.store = store
    }

    /// Queues a check of `userId` (and a read of its state with `loadingState`); `completion` runs on
    /// the batcher's thread (keep it short).
    func check(_ userId: String, loadingState: Bool = false, _ completion: @escaping Completion) {
        let start = pending.withLock { p in
            p.requests.append((userId, loadingState, completion))
            if p.running { return false }
            p.running = true
            return true
        }
        if start { thread.run { [self] in drain() } }
    }

    private func drain() {
        while true {
            let batch = pending.withLock { p in
                let batch = Array(p.requests.prefix(Self.maxBatch))
                p.requests.removeFirst(batch.count)
                if batch.isEmpty { p.running = false }
                return batch
            }
            if batch.isEmpty { return }
            statements.add(1, ordering: .relaxed)
            checked.add(batch.count, ordering: .relaxed)
            do {
                let loading = batch.filter(\.loadingState).map(\.userId)
                let (users, catalog, states) = try store.versions(userIds: batch.map(\.userId), loading: loading)
                for (request, user) in zip(batch, users) {
                    let state = request.loadingState ? states[request.userId] : nil
                    request.completion(.success((SharedVersions(user: user, catalog: catalog), state)))
                }
            } catch {
                for request in batch { request.completion(.failure(error)) }
            }
        }
    }
}

import Concurrency
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// Reads the states of decisions that are not answered from the cache, with their store versions and
/// the catalog's, for many requests in one round trip (`ReplicatedDecisions`; a cached one is proven
/// current by the listener's barrier instead, `DecisionFreshness.confirm`).
///
/// Group commit for reads: a request queues its user; one thread takes everything queued, reads all
/// those users' states and versions and the catalog's version in one statement, and completes each
/// request; requests arriving meanwhile wait for the next statement. Each statement starts after
/// every request it answers was queued, so what it reads is at least as new as every write
/// acknowledged before those requests were sent (read-your-writes). A state is read in the same
/// statement as its version (one snapshot): it is the state at that version.
/// A batch's answers are settled first and their parked connections resumed together afterwards
/// (`ResponsePromise.resumingTogether`), so a worker wakes once for many of them.
final class VersionBatcher: Sendable {
    /// The versions, and the user's state at them.
    typealias Completion = @Sendable (Result<(versions: SharedVersions, state: UserState), StoreError>) -> Void

    private struct Request: Sendable {
        let userId: String
        let completion: Completion
    }

    private struct Pending: Sendable {
        var requests: [Request] = []
        var running = false
    }

    /// At most this many users per statement.
    static let maxBatch = 512

    private let coordination: any ReplicaCoordination
    private let pending = Mutex(Pending())
    private let thread = WorkerThreads(count: 1, name: "version-batch")
    /// Statements run and requests they answered (for tests and metrics).
    let statements = Atomic<Int>(0)
    let checked = Atomic<Int>(0)

    init(coordination: any ReplicaCoordination) {
        self.coordination = coordination
    }

    /// Queues a read of `userId`'s state and versions; `completion` runs on the batcher's thread (keep
    /// it short).
    func read(_ userId: String, _ completion: @escaping Completion) {
        let start = pending.withLock { p in
            p.requests.append(Request(userId: userId, completion: completion))
            if p.running { return false }
            p.running = true
            return true
        }
        if start { thread.run { [self] in drain() } }
    }

    private func drain() {
        // Two buffers swapped with the queue: in steady state no batch allocates its array.
        var batch: [Request] = []
        var userIds: [String] = []
        while true {
            pending.withLock { p in
                if p.requests.count <= Self.maxBatch {
                    swap(&batch, &p.requests)
                } else {
                    batch.append(contentsOf: p.requests[..<Self.maxBatch])
                    p.requests.removeFirst(Self.maxBatch)
                }
                if batch.isEmpty { p.running = false }
            }
            if batch.isEmpty { return }
            statements.add(1, ordering: .relaxed)
            checked.add(batch.count, ordering: .relaxed)
            for request in batch { userIds.append(request.userId) }
            let outcome = Result { () throws(StoreError) in try coordination.versions(userIds: userIds, loading: userIds) }
            // The answers first, then every connection they park resumed in one burst.
            ResponsePromise.resumingTogether {
                switch outcome {
                case .success(let (users, catalog, states)):
                    for (request, user) in zip(batch, users) {
                        // The store gives every user asked for a state (an empty one when none is stored).
                        let state = states[request.userId] ?? UserState()
                        request.completion(.success((SharedVersions(user: user, catalog: catalog), state)))
                    }
                case .failure(let error):
                    for request in batch { request.completion(.failure(error)) }
                }
            }
            batch.removeAll(keepingCapacity: true)
            userIds.removeAll(keepingCapacity: true)
        }
    }
}

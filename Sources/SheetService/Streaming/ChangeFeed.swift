import Concurrency
import Synchronization

/// Something that follows one user's decision: told (on the feed's threads) whenever that decision may
/// have changed, it recomputes and acts when it really did (a stream sends an event, a long-poll answers).
protocol DecisionWatcher: AnyObject, Sendable {
    var userId: String { get }
    /// Recompute and act. Runs on one of the feed's threads, possibly beside another `recheck` of the
    /// same watcher: implementations serialize themselves.
    func recheck()
}

/// The one component that turns "this user's state changed" and "the catalog changed" into wake-ups of
/// the watchers of the affected decisions (streams and long-polls). The decision cache is kept exact by
/// the write path itself (`UserStateWrites` bumps the user's epoch), before the feed is told.
///
/// Writes of this process reach it from the store's writer thread after their commit, catalog changes
/// from the admin routes. On a shared database (PostgreSQL) the writes and catalog changes of the other
/// replicas reach it from the store's listener (LISTEN/NOTIFY, see `SheetService+Replicas`). The work
/// itself runs on a small fixed pool of threads (`recheckThreads`), so the writer only enqueues, and a
/// burst of rechecks that block on the database neither grows the thread count nor opens a reader
/// connection per new thread. Rechecks of one watcher coalesce: a burst of writes of one user costs one
/// recomputation per watcher when the pool is busy.
final class ChangeFeed: Sendable {
    private final class Shard: Sendable {
        let watchers = Mutex<[String: [ObjectIdentifier: any DecisionWatcher]]>([:])
    }

    private static let shardCount = 16
    private let shards: [Shard] = (0..<ChangeFeed.shardCount).map { _ in Shard() }
    /// Threads running rechecks (each may read the store: one reader connection per thread at most).
    static let recheckThreads = 4
    private let pool = WorkerThreads(count: ChangeFeed.recheckThreads, name: "change-feed")
    /// Watchers with a recheck queued and not started yet (coalescing).
    private let queued = Mutex<Set<ObjectIdentifier>>([])

    private func shard(_ userId: String) -> Shard { shards[userId.hashValue & (Self.shardCount - 1)] }

    func add(_ watcher: any DecisionWatcher) {
        shard(watcher.userId).watchers.withLock { $0[watcher.userId, default: [:]][ObjectIdentifier(watcher)] = watcher }
    }

    func remove(_ watcher: any DecisionWatcher) {
        shard(watcher.userId).watchers.withLock { map in
            map[watcher.userId]?.removeValue(forKey: ObjectIdentifier(watcher))
            if map[watcher.userId]?.isEmpty == true { map.removeValue(forKey: watcher.userId) }
        }
    }

    /// Watchers registered, for metrics and tests.
    var count: Int { shards.reduce(0) { n, s in n + s.watchers.withLock { $0.values.reduce(0) { $0 + $1.count } } } }

    /// A write of `userId` committed (or the user was erased).
    func userChanged(_ userId: String) {
        let watchers = shard(userId).watchers.withLock { map in map[userId].map { Array($0.values) } ?? [] }
        for watcher in watchers { schedule(watcher) }
    }

    /// The catalog changed: every decision may have.
    func catalogChanged() {
        for shard in shards {
            let watchers = shard.watchers.withLock { map in map.values.flatMap { $0.values } }
            for watcher in watchers { schedule(watcher) }
        }
    }

    /// Queues one recheck of `watcher` unless one is queued and not started yet.
    func schedule(_ watcher: any DecisionWatcher) {
        let id = ObjectIdentifier(watcher)
        guard queued.withLock({ $0.insert(id).inserted }) else { return }
        pool.run { [self] in
            _ = queued.withLock { $0.remove(id) }
            watcher.recheck()
        }
    }
}

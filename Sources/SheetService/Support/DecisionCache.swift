import SheetPolicy
import Synchronization

/// A bounded cache of decision answers (body and ETag), kept exact by the write path.
///
/// A decision is a pure function of (catalog, user state, client context). An entry remembers the
/// catalog version and the context it was computed for, and the user's *epoch* read before the
/// user's state was read from the store. Every write of a user's state bumps that user's epoch
/// after its transaction committed and before its response is sent (`invalidate`); an entry is
/// used only while its epoch is still current. So a state read that may predate a commit can never
/// be served after that commit's response went out:
/// - the reader loads epoch e0, then reads the state (a store snapshot);
/// - if the snapshot missed a commit, the commit was not complete when e0 was loaded, so the bump
///   that follows it makes e0 stale, and the entry is never used after the bump.
/// Epochs live in a fixed table of atomics indexed by a hash of the user id: users sharing a slot
/// only invalidate each other more often than needed.
///
/// Bound: 64 shards (each behind its own lock, picked by the user id's hash) of two generations of
/// at most `generationCapacity` users (65 536 users in all by default, `SHEETD_DECISION_CACHE`), at most `contextsPerUser`
/// client contexts each. Identical bodies (users in the same state, the usual case: a decision does
/// not contain the user id) share one buffer.
final class DecisionCache: @unchecked Sendable {
    // `@unchecked Sendable` invariant: `epochs` is allocated and initialized once in init and only
    // accessed atomically; the shards' contents are only touched under their locks.
    struct Answer {
        let body: [UInt8]
        let etag: String
    }

    private struct Item {
        let catalogVersion: Int
        let context: ClientContext
        let answer: Answer
    }

    private struct UserEntry {
        let epoch: UInt64
        var items: [Item]
    }

    private struct Generations {
        var current: [String: UserEntry] = [:]
        var previous: [String: UserEntry] = [:]
        /// Interned bodies by ETag.
        var bodies: [String: [UInt8]] = [:]
    }

    private final class Shard: @unchecked Sendable {
        let generations = Mutex(Generations())
    }

    static let slotCount = 1 << 16
    static let shardCount = 64
    /// Users per generation of one shard.
    let generationCapacity: Int
    let contextsPerUser = 4
    private let epochs: UnsafeMutablePointer<Atomic<UInt64>>
    private let shards: [Shard]

    /// Whether answers are kept at all (`SHEETD_DECISION_CACHE=0` turns the cache off; epochs are
    /// still kept, they cost nothing).
    let enabled: Bool

    /// A cache for about `users` users in all (rounded to whole shards); 0 keeps nothing.
    convenience init(users: Int) {
        self.init(generationCapacity: max(1, users / (2 * Self.shardCount)), enabled: users > 0)
    }

    init(generationCapacity: Int = 512, enabled: Bool = true) {
        self.enabled = enabled
        self.generationCapacity = max(1, generationCapacity)
        shards = (0..<Self.shardCount).map { _ in Shard() }
        epochs = .allocate(capacity: Self.slotCount)
        for i in 0..<Self.slotCount { (epochs + i).initialize(to: Atomic(0)) }
    }

    deinit {
        epochs.deinitialize(count: Self.slotCount)
        epochs.deallocate()
    }

    @inline(__always) private func slot(_ userId: String) -> Int { userId.hashValue & (Self.slotCount - 1) }

    @inline(__always) private func shard(_ userId: String) -> Shard {
        shards[(userId.hashValue >> 16) & (Self.shardCount - 1)]
    }

    /// Users held (both generations of every shard), for tests.
    var count: Int { shards.reduce(0) { n, s in n + s.generations.withLock { $0.current.count + $0.previous.count } } }

    /// The user's epoch; read it *before* reading the user's state for `insert`.
    func epoch(of userId: String) -> UInt64 {
        epochs[slot(userId)].load(ordering: .acquiring)
    }

    /// Marks every cached answer of `userId` stale. Call after the write committed (or failed),
    /// before answering the write.
    func invalidate(_ userId: String) {
        epochs[slot(userId)].wrappingAdd(1, ordering: .acquiringAndReleasing)
    }

    func lookup(userId: String, context: ClientContext, catalogVersion: Int) -> Answer? {
        guard enabled else { return nil }
        let entry = shard(userId).generations.withLock { g in g.current[userId] ?? g.previous[userId] }
        guard let entry, entry.epoch == epoch(of: userId) else { return nil }
        for item in entry.items where item.catalogVersion == catalogVersion && item.context == context {
            return item.answer
        }
        return nil
    }

    /// Remembers `answer`, computed from a state read after `epoch` was loaded.
    func insert(userId: String, context: ClientContext, catalogVersion: Int, epoch: UInt64, answer: Answer) {
        guard enabled, epoch == self.epoch(of: userId) else { return }  // off, or already stale
        let capacity = generationCapacity, perUser = contextsPerUser
        shard(userId).generations.withLock { g in
            var body = answer.body
            if let shared = g.bodies[answer.etag], shared == body {
                body = shared
            } else {
                if g.bodies.count >= 64 { g.bodies.removeAll(keepingCapacity: true) }
                g.bodies[answer.etag] = body
            }
            let item = Item(catalogVersion: catalogVersion, context: context, answer: Answer(body: body, etag: answer.etag))
            var entry = g.current.removeValue(forKey: userId) ?? g.previous.removeValue(forKey: userId)
                ?? UserEntry(epoch: epoch, items: [])
            if entry.epoch != epoch { entry = UserEntry(epoch: epoch, items: []) }
            entry.items.removeAll { $0.context == context }
            if entry.items.count >= perUser { entry.items.removeFirst() }
            entry.items.append(item)
            if g.current.count >= capacity {
                g.previous = g.current
                g.current = [:]
                g.current.reserveCapacity(capacity)
            }
            g.current[userId] = entry
        }
    }
}

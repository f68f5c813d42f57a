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
/// client contexts each (the most recently computed first). Identical answers (users in the same
/// state, the usual case: a decision does not contain the user id) share one `Answer`.
final class DecisionCache: @unchecked Sendable {
    // `@unchecked Sendable` invariant: `epochs` is allocated and initialized once in init and only
    // accessed atomically; the shards' contents are only touched under their locks.
    /// One decision answer. A class so that every user whose decision has these exact bytes shares
    /// one instance (interned per shard): a lookup then touches memory that other requests keep warm.
    final class Answer: Sendable {
        let body: [UInt8]
        let etag: String

        init(body: [UInt8], etag: String) {
            self.body = body
            self.etag = etag
        }
    }

    private struct Item {
        let catalogVersion: Int
        let context: ClientContext
        let answer: Answer
    }

    /// A user's answers: the latest inline (the usual single context needs no array), older
    /// contexts after it, at most `contextsPerUser` in all.
    private struct UserEntry {
        let epoch: UInt64
        var latest: Item
        var older: [Item] = []
    }

    private struct Generations {
        var current: [String: UserEntry] = [:]
        var previous: [String: UserEntry] = [:]
        /// Interned answers by the hash of their body (bytes compared on every hit).
        var answers: [Int: Answer] = [:]
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
        return shard(userId).generations.withLock { g -> Answer? in
            guard let entry = g.current[userId] ?? g.previous[userId], entry.epoch == epoch(of: userId) else { return nil }
            if entry.latest.catalogVersion == catalogVersion && entry.latest.context == context { return entry.latest.answer }
            for item in entry.older where item.catalogVersion == catalogVersion && item.context == context {
                return item.answer
            }
            return nil
        }
    }

    /// The answer for a freshly rendered decision `body`: the interned one with these exact bytes in
    /// the user's shard when there is one (its ETag was computed from the same bytes, so `etag` is not
    /// called: users in the same state share one answer and one SHA-256), else a new one, interned.
    func answer(userId: String, body: [UInt8], etag: ([UInt8]) -> String) -> Answer {
        guard enabled else { return Answer(body: body, etag: etag(body)) }
        let key = body.hashValue
        let shard = shard(userId)
        if let interned = shard.generations.withLock({ $0.answers[key] }), interned.body == body { return interned }
        let made = Answer(body: body, etag: etag(body))  // outside the lock: SHA-256 of the body
        shard.generations.withLock { g in
            if g.answers.count >= 64 { g.answers.removeAll(keepingCapacity: true) }
            g.answers[key] = made
        }
        return made
    }

    /// Remembers `answer` (from `answer(userId:body:etag:)`), computed from a state read after
    /// `epoch` was loaded.
    func insert(userId: String, context: ClientContext, catalogVersion: Int, epoch: UInt64, answer: Answer) {
        guard enabled, epoch == self.epoch(of: userId) else { return }  // off, or already stale
        let capacity = generationCapacity, perUser = contextsPerUser
        shard(userId).generations.withLock { g in
            let item = Item(catalogVersion: catalogVersion, context: context, answer: answer)
            var entry: UserEntry
            if let old = g.current.removeValue(forKey: userId) ?? g.previous.removeValue(forKey: userId), old.epoch == epoch {
                entry = old
                var items = [entry.latest] + entry.older
                items.removeAll { $0.context == context }
                while items.count >= perUser { items.removeLast() }
                entry.latest = item
                entry.older = items
            } else {
                entry = UserEntry(epoch: epoch, latest: item)
            }
            if g.current.count >= capacity {
                g.previous = g.current
                g.current = [:]
                g.current.reserveCapacity(capacity)
            }
            g.current[userId] = entry
        }
    }
}

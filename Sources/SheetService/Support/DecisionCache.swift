import SheetPolicy
import Synchronization

/// A bounded per-thread cache of decision answers (body and ETag), kept exact by the write path.
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
/// only invalidate each other more often than needed. No lock is taken on the read path.
///
/// Bound: per worker thread, two generations of at most `generationCapacity` users, at most
/// `contextsPerUser` client contexts each. Identical bodies (users in the same state, the usual
/// case: a decision does not contain the user id) share one buffer.
final class DecisionCache: @unchecked Sendable {
    // `@unchecked Sendable` invariant: `epochs` is allocated and initialized once in init and only
    // accessed atomically; shards are thread-confined (ThreadLocal).
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

    private final class Shard {
        var current: [String: UserEntry] = [:]
        var previous: [String: UserEntry] = [:]
        /// Interned bodies by ETag.
        var bodies: [String: [UInt8]] = [:]
    }

    static let slotCount = 1 << 16
    let generationCapacity: Int
    let contextsPerUser = 4
    private let epochs: UnsafeMutablePointer<Atomic<UInt64>>
    private let shards = ThreadLocal { Shard() }

    init(generationCapacity: Int = 8192) {
        self.generationCapacity = max(1, generationCapacity)
        epochs = .allocate(capacity: Self.slotCount)
        for i in 0..<Self.slotCount { (epochs + i).initialize(to: Atomic(0)) }
    }

    deinit {
        epochs.deinitialize(count: Self.slotCount)
        epochs.deallocate()
    }

    @inline(__always) private func slot(_ userId: String) -> Int { userId.hashValue & (Self.slotCount - 1) }

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
        let shard = shards.value
        guard let entry = shard.current[userId] ?? shard.previous[userId] else { return nil }
        guard entry.epoch == epoch(of: userId) else { return nil }
        for item in entry.items where item.catalogVersion == catalogVersion && item.context == context {
            return item.answer
        }
        return nil
    }

    /// Remembers `answer`, computed from a state read after `epoch` was loaded.
    func insert(userId: String, context: ClientContext, catalogVersion: Int, epoch: UInt64, answer: Answer) {
        guard epoch == self.epoch(of: userId) else { return }  // already stale
        let shard = shards.value
        var body = answer.body
        if let shared = shard.bodies[answer.etag], shared == body {
            body = shared
        } else {
            if shard.bodies.count >= 1024 { shard.bodies.removeAll(keepingCapacity: true) }
            shard.bodies[answer.etag] = body
        }
        let item = Item(catalogVersion: catalogVersion, context: context, answer: Answer(body: body, etag: answer.etag))
        var entry = shard.current.removeValue(forKey: userId) ?? shard.previous.removeValue(forKey: userId)
            ?? UserEntry(epoch: epoch, items: [])
        if entry.epoch != epoch { entry = UserEntry(epoch: epoch, items: []) }
        entry.items.removeAll { $0.context == context }
        if entry.items.count >= contextsPerUser { entry.items.removeFirst() }
        entry.items.append(item)
        if shard.current.count >= generationCapacity {
            shard.previous = shard.current
            shard.current = [:]
            shard.current.reserveCapacity(generationCapacity)
        }
        shard.current[userId] = entry
    }
}

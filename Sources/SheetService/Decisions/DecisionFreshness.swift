import Concurrency
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// The one owner of the decision cache's exactness: when a cached decision may be served, and what
/// every write, catalog or settings change and listener event does to that. `DecisionCache` only
/// stores answers; every rule it applies on a lookup is a call to this type.
///
/// A decision is a pure function of (catalog, user state, client context, time). A cached answer
/// carries its *basis*: the user's **epoch** loaded before the user's state was read, the **catalog
/// version** of the snapshot it was decided with (`CatalogSnapshot.currentVersion`), and on a shared
/// database the user's **store version** read in the same snapshot as the state
/// (`SharedVersions.user`); plus its time boundary (`Decision.validUntil`).
///
/// ## Premise: the store's read-your-writes
/// A state read that starts after a write was acknowledged shows it (`UserStateStore`). The SQLite
/// store keeps read snapshots between reads and uses one only while its **write generation** has not
/// moved: the writer bumps it after each transaction, before anything is acknowledged
/// (`ReaderPool`). PostgreSQL reads one snapshot per statement.
///
/// ## Invariants
/// 1. **Epochs only grow.** A user's epoch is the counter of its slot (a fixed table of atomics
///    indexed by the user id's hash, 262 144 of them: users sharing a slot only invalidate each other more often) plus
///    the flush count in the high bits. Nothing ever lowers either, so an epoch, once stale, stays stale.
/// 2. **Every write bumps before it answers.** A write of a user's state through this process (an
///    event, an erase) bumps the user's epoch after its transaction ended, committed or not, and
///    before its response is sent (`userStateWritten`). A write by another replica bumps it when its
///    notification is handled (`heard(.users)`).
/// 3. **A basis is taken before the read.** The epoch is loaded before the state is read
///    (`epoch(of:)`), and an answer whose epoch is no longer current is neither stored nor served.
///    So if a read missed a commit, that commit's bump came after the epoch was loaded, and the
///    answer is stale from the bump on, which precedes the write's acknowledgement.
/// 4. **Catalog and settings.** They travel in one `CatalogSnapshot`, whose version moves under its
///    lock with every change made here (a write route, a restore, a reload): an answer of another
///    version is never served. On a shared database the *catalog mark* is the database's
///    `catalog_version` the snapshot is at least as new as (it is read before the catalog);
///    `needsCatalogReload(seen:)` compares it with a version read after the request arrived, and
///    any difference reloads. A catalog notification or a listener event sets the mark unknown
///    (`unknownCatalog`), which forces a reload and refuses barrier proofs until one succeeded.
/// 5. **Serving.** A cached answer for (user, context, catalog version) is served when its epoch is
///    current, its time boundary has not come, and, by the decision source:
///    - *local* (a store only this process writes): nothing more (1 to 3 suffice);
///    - *replicated, version-checked*: its store version equals the user's version read for this
///      request, in a statement started after the request arrived;
///    - *replicated, barrier-proven* (`confirm`): the candidate was taken when the request arrived,
///      the listener's barrier (a round trip on the listening session started after that) reported
///      that every change committed before it was handled, and after it the epoch is still the
///      candidate's, the catalog mark is known and the snapshot's version is still the candidate's.
///      A write another replica acknowledged before the request was sent committed before the
///      barrier started, so its notification bumped the epoch (2) before the barrier came back.
/// 6. **Listener loss and reconnect.** Either event (`heard(.listenerReset)`) adds one to the flush
///    count (every answer and every candidate taken before is stale, 1) and sets the catalog mark
///    unknown; while no listener listens the barrier reports `false` and requests are version-checked.
///    Notifications missed meanwhile cannot matter: every answer computed before the reconnect is
///    stale after it, and every later one read its state after the reconnect.
///
/// Hence **no answer older than an acknowledged write is served**: an answer served after a write's
/// acknowledgement either was computed from a state read after the write's bump (2, 3), or, on a
/// replica, was proven by a version read or a barrier that started after the acknowledgement (5, 6).
/// `Tests/ReplicaTests/DecisionFreshnessModelTests.swift` checks it against a reference model.
///
/// Cost: the local hot path is two atomic loads (`isCurrent`), no lock and no allocation.
final class DecisionFreshness: Sendable {
    static let slotCount = 1 << 18
    /// The catalog mark's value when unknown (reload before trusting the catalog).
    static let unknownCatalogMark: Int64 = -1

    private let epochs = AtomicCounters(count: DecisionFreshness.slotCount)
    /// Bumped by a listener reset: part of every epoch, so one add makes every answer stale.
    private let flushes = Atomic<Int>(0)
    /// The shared database's catalog version the catalog snapshot is at least as new as (4).
    private let catalogMark = Atomic<Int64>(DecisionFreshness.unknownCatalogMark)
    /// The catalog whose version a barrier-proven candidate must still be at.
    private let catalog: CatalogSnapshot
    /// On a shared database with a listener: the barrier of invariant 5.
    private let barrier: ListenerBarrier?

    /// Freshness for a store only this process writes (`coordination` nil) or a shared one.
    init(catalog: CatalogSnapshot, coordination: (any ReplicaCoordination)? = nil) {
        self.catalog = catalog
        self.barrier = coordination.map { ListenerBarrier(coordination: $0) }
    }

    /// Freshness over an empty catalog (tests of the cache alone).
    convenience init() { self.init(catalog: CatalogSnapshot(Catalog())) }

    // MARK: Epochs

    /// The user's epoch slot: the low bits of the hash (the cache's shard uses bits 16 and up).
    @inline(__always) private func slot(_ hash: Int) -> Int { hash & (Self.slotCount - 1) }

    /// The user's epoch; load it *before* reading the user's state (3).
    func epoch(of userId: String) -> Int { epoch(hash: userId.hashValue) }

    /// The slot's counter plus the flush count in the high bits: both only grow, so the sum moves
    /// whenever either does (1).
    @inline(__always) func epoch(hash: Int) -> Int {
        epochs.load(slot(hash), ordering: .synchronizing) &+ flushes.load(ordering: .sequentiallyConsistent) &<< 40
    }

    /// Whether an answer taken at `epoch` may still be served (and stored) for the user of `hash`.
    @inline(__always) func isCurrent(epoch: Int, hash: Int) -> Bool { epoch == self.epoch(hash: hash) }

    // MARK: What happened

    /// A write of the user's state through this process ended (committed or failed): call before
    /// answering it (2).
    func userStateWritten(_ userId: String) {
        epochs.add(1, at: slot(userId.hashValue), ordering: .synchronizing)
    }

    /// The listener reported `change` (on its thread): applied before anything recomputes a decision
    /// for it (streams, long-polls), and before a barrier waiting behind it comes back.
    func heard(_ change: SharedChange) {
        switch change {
        case .users(let userIds):
            for userId in userIds { userStateWritten(userId) }
        case .catalog:
            unknownCatalog()
        case .listenerReset:
            flushes.add(1, ordering: .sequentiallyConsistent)
            unknownCatalog()
        }
    }

    /// The catalog snapshot may be behind the database's (4).
    func unknownCatalog() { catalogMark.store(Self.unknownCatalogMark, ordering: .releasing) }

    /// The catalog snapshot was (re)loaded from the database after `storeVersion` was read (4).
    func catalogLoaded(atStoreVersion storeVersion: Int64) { catalogMark.store(storeVersion, ordering: .releasing) }

    /// Whether the snapshot must be reloaded, the database's catalog version being `seen` now (4).
    /// Not only when newer: a database restored from a backup may go back.
    func needsCatalogReload(seen: Int64) -> Bool { catalogMark.load(ordering: .acquiring) != seen }

    // MARK: Barrier proofs (5)

    /// Calls `completion(true)` when `candidate` is proven exact (invariant 5, barrier-proven), else
    /// `completion(false)`: then read the state. Runs `completion` on the listener's thread.
    func confirm(_ candidate: DecisionCache.Candidate, now: @escaping @Sendable () -> Timestamp, _ completion: @escaping @Sendable (Bool) -> Void) {
        guard let barrier else { return completion(false) }
        barrier.wait { [self] heard in
            completion(heard && isStillExact(candidate, now: now))
        }
    }

    /// After a barrier that heard everything: the candidate's epoch, catalog and time still hold.
    private func isStillExact(_ candidate: DecisionCache.Candidate, now: () -> Timestamp) -> Bool {
        guard catalogMark.load(ordering: .acquiring) != Self.unknownCatalogMark,
            catalog.currentVersion == candidate.catalogVersion,
            isCurrent(epoch: candidate.epoch, hash: candidate.hash)
        else { return false }
        if let until = candidate.fresh.validUntil, now() >= until { return false }
        return true
    }

    /// Round trips on the listening session so far (for /metrics).
    var barrierRoundTrips: Int { barrier?.roundTrips ?? 0 }
}

/// Group commit for barriers: a request queues; one round trip (`ReplicaCoordination.syncChanges`:
/// one round trip on the listening session, no per-user read) is in flight at a time, and serves
/// every request queued before it started; requests arriving meanwhile wait for the next one. The
/// answers of a round trip are settled together and their parked connections resumed in one burst.
private final class ListenerBarrier: Sendable {
    /// `true`: every change committed before the request arrived was handled; `false`: not promised.
    typealias Completion = @Sendable (Bool) -> Void

    private struct Pending: Sendable {
        var waiting: [Completion] = []
        var inFlight = false
    }

    private let coordination: any ReplicaCoordination
    private let pending = Mutex(Pending())

    init(coordination: any ReplicaCoordination) {
        self.coordination = coordination
    }

    var roundTrips: Int { coordination.changeSyncRoundTrips }

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
        coordination.syncChanges { [self] heard in
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

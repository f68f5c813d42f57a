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
///    before its response is sent (`UserStateWrites`, the only caller of the bump). A write by another
///    replica bumps it when its notification is handled (`heard(.users)`).
/// 3. **A basis is taken before the read.** The epoch is loaded before the state is read
///    (`beginRead`, whose `ReadBasis` the cache's insert requires), and an answer whose epoch is no
///    longer current is neither stored nor served.
///    So if a read missed a commit, that commit's bump came after the epoch was loaded, and the
///    answer is stale from the bump on, which precedes the write's acknowledgement.
/// 4. **Catalog and settings.** They travel in one `CatalogSnapshot`, whose version moves under its
///    lock with every change made here (a write route, a restore, a reload): an answer of another
///    version is never served. On a shared database the *catalog mark* is the database's
///    `catalog_version` the snapshot is at least as new as (it is read before the catalog);
///    `needsCatalogReload(seen:)` compares it with a version read after the request arrived, and
///    any difference reloads. A catalog notification or a listener event sets the mark unknown
///    (`unknownCatalog`), which forces a reload and refuses barrier proofs until one succeeded.
/// 5. **Serving** (`isServable`). A cached answer for (user, context, catalog version) is served when
///    its epoch is current, its time boundary has not come, and, by the decision source:
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
/// Serving rules live here only: the cache, the decision sources and the write routes call these methods.
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

    /// The slot's counter plus the flush count in the high bits: both only grow, so the sum moves
    /// whenever either does (1).
    @inline(__always) private func epoch(hash: Int) -> Int {
        epochs.load(slot(hash), ordering: .synchronizing) &+ flushes.load(ordering: .sequentiallyConsistent) &<< 40
    }

    /// The basis of an answer about to be computed: call *before* reading the user's state (3). The
    /// only way to make a `ReadBasis`, which is all `DecisionCache.insert` takes.
    func beginRead(_ userId: String) -> ReadBasis {
        let hash = userId.hashValue
        return ReadBasis(hash: hash, epoch: epoch(hash: hash))
    }

    /// Whether no write of the user ended since `basis` was taken: an answer on it may still be
    /// stored, and served (1 to 3).
    @inline(__always) func isCurrent(_ basis: ReadBasis) -> Bool { basis.epoch == epoch(hash: basis.hash) }

    // MARK: Serving (5)

    /// Whether a cached answer may be served: `basis` is the one it was computed on, `catalogVersion`
    /// and `validUntil` the catalog version it was decided with and its time boundary; `request` is
    /// what the request serves (its catalog version) and how its source proves the store version.
    /// `now` is read only for an answer with a time boundary. The one serving check: the cache's
    /// lookups and the barrier's proof both ask it.
    @inline(__always)
    func isServable(
        _ basis: ReadBasis, catalogVersion: Int, validUntil: Timestamp?, to request: ServingRequest, now: () -> Timestamp
    ) -> Bool {
        guard isCurrent(basis), catalogVersion == request.catalogVersion else { return false }
        switch request.proof {
        case .local: guard basis.storeVersion == nil else { return false }
        case .versionRead(let version): guard basis.storeVersion == version else { return false }
        case .barrier: guard basis.storeVersion != nil else { return false }
        }
        if let until = validUntil, now() >= until { return false }
        return true
    }

    // MARK: What happened

    /// A write of the user's state through this process ended (committed or failed), before its
    /// answer (2). Only `UserStateWrites` calls it (hence `fileprivate`): no route bumps by hand.
    fileprivate func userStateWritten(_ userId: String) {
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

    /// After a barrier that heard everything: the catalog mark is known and the candidate is still
    /// servable at the snapshot's version now (its epoch, catalog version and time boundary).
    private func isStillExact(_ candidate: DecisionCache.Candidate, now: () -> Timestamp) -> Bool {
        guard catalogMark.load(ordering: .acquiring) != Self.unknownCatalogMark else { return false }
        return isServable(
            candidate.basis, catalogVersion: candidate.catalogVersion, validUntil: candidate.fresh.validUntil,
            to: ServingRequest(catalogVersion: catalog.currentVersion, proof: .barrier), now: now)
    }

    /// Round trips on the listening session so far (for /metrics).
    var barrierRoundTrips: Int { barrier?.roundTrips ?? 0 }
}

/// What a decision answer is computed from, taken by `DecisionFreshness.beginRead` before the user's
/// state is read: the user (by its id's hash), its epoch then (3) and, once read on a shared
/// database, the store version of the state (`read(atStoreVersion:)`). Only `beginRead` makes one (its initializer is private to
/// this file), and `DecisionCache.insert` takes nothing else: an answer cannot be cached on an epoch
/// loaded after the read, and one whose epoch moved meanwhile is refused.
struct ReadBasis: Sendable {
    /// The user id's `hashValue`: the epoch slot (and the cache's shard). No copy of the id: the cache
    /// keeps a basis in every entry, and its hot path reads it without a retain.
    let hash: Int
    let epoch: Int
    /// The shared database's version of the state read (nil: a store only this process writes).
    private(set) var storeVersion: Int64?

    fileprivate init(hash: Int, epoch: Int) {
        self.hash = hash
        self.epoch = epoch
    }

    /// This basis, the state having been read at `version` of a shared database (in the same snapshot).
    func read(atStoreVersion version: Int64) -> ReadBasis {
        var read = self
        read.storeVersion = version
        return read
    }
}

/// What a request checks a cached answer against (`DecisionFreshness.isServable`): the catalog
/// version it serves, and how its decision source proves the store version (invariant 5).
struct ServingRequest: Sendable {
    enum Proof: Sendable {
        /// A store only this process writes: epochs suffice (the answer has no store version).
        case local
        /// Replicated, version-checked: the answer's store version is this one, read for this request
        /// in a statement started after it arrived.
        case versionRead(Int64)
        /// Replicated, barrier-proven: an answer with a store version, served only once the
        /// listener's barrier proved it (`DecisionFreshness.confirm`).
        case barrier
    }

    let catalogVersion: Int
    let proof: Proof
}

/// Every write of a user's state through this process: the one place that bumps the user's epoch
/// (`DecisionFreshness` invariant 2, after the write ended, committed or not, and before its answer)
/// and wakes the user's streams and long-polls. Here, beside `DecisionFreshness`, because the bump is
/// private to this file.
final class UserStateWrites: Sendable {
    private let store: any UserStateStore
    private let freshness: DecisionFreshness
    private let feed: ChangeFeed

    init(store: any UserStateStore, freshness: DecisionFreshness, feed: ChangeFeed) {
        self.store = store
        self.freshness = freshness
        self.feed = feed
    }

    /// One event's transaction (`UserStateStore.submit`). `completion` runs after the user's epoch was
    /// bumped and, for an event committed now (not a replay), the feed told.
    func submit(
        userId: String, eventId: String?, _ body: @escaping @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8],
        completion: @escaping @Sendable (Result<EventResult, any Error>) -> Void
    ) {
        store.submit(userId: userId, eventId: eventId, body) { [freshness, feed] result in
            // After the commit (or the failure), before the answer: cached decisions of this user are stale.
            freshness.userStateWritten(userId)
            if case .success(let event) = result, !event.replayed { feed.userChanged(userId) }
            completion(result)
        }
    }

    /// Erases the user's state (`UserStateStore.deleteUser`); the epoch is bumped and the feed told
    /// whether it succeeded or not (an erase may have removed part of the state).
    func erase(userId: String) throws(StoreError) {
        defer {
            freshness.userStateWritten(userId)
            feed.userChanged(userId)
        }
        try store.deleteUser(userId: userId)
    }

    /// A write no decision reads (experiment exposures: `SheetPolicy.decide` assigns arms by hash,
    /// never from the stored exposure): no epoch bump, no wake-up, so a decision that exposes a user
    /// does not invalidate its own answer.
    func submitUnreadByDecisions(
        userId: String, _ body: @escaping @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8],
        completion: @escaping @Sendable (Result<EventResult, any Error>) -> Void
    ) {
        store.submit(userId: userId, eventId: nil, body, completion: completion)
    }
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

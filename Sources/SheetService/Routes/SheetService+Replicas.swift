import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// Replicas on a shared database (PostgreSQL): exact caches and cross-replica wake-ups.
///
/// Guarantees, and how they are kept:
/// - Read-your-writes on any replica: a cached decision of the HTTP route is answered after a barrier
///   on the listener's session (`ChangeBarrier`: one round trip started after the request arrived,
///   which comes back behind the notification of every write committed before, so the cache has
///   dropped what those writes made stale); without a usable cached answer, or without a listener,
///   the request waits for a batched read (`VersionBatcher`: the versions and the state, one
///   statement for every request waiting). Streams, long-polls and changed cached answers use
///   `sharedAnswer` (`SharedSheetStore.userState(userId:unlessUserVersion:)`: the two versions, and
///   the state with its version only when the cached answer's is not current). A notification alone
///   could not promise it: it may still be on its way to this replica when a request sent after the
///   write's acknowledgement arrives.
/// - The catalog: every catalog read compares the database's catalog version (the decision's round
///   trip carries it; other routes read it with `catalog`), and reloads on a change. A decision proven
///   by a barrier relies on the listener instead: a catalog notification reloads the catalog before
///   the barrier comes back (a failed reload leaves `sharedVersion` at -1, and the barrier is not used).
/// - Pushes: the listener's notifications (LISTEN/NOTIFY) wake this replica's streams and long-polls
///   for writes committed on other replicas, and drop cached answers early.
/// - A lost listener: every cached answer is dropped, the catalog marked for reload, and every stream
///   and long-poll rechecked, when the loss is noticed and again once the listener listens again.
extension SheetService {
    /// `currentAnswer` on a shared database: one round trip, state only on a cache miss.
    func sharedAnswer(_ shared: any SharedSheetStore, userId: String, context: ClientContext) throws(Problem) -> DecisionCache.Fresh {
        var known = decisions.storeVersion(userId: userId, context: context, catalogVersion: catalogSnapshot.currentVersion)
        while true {
            let epoch = decisions.epoch(of: userId)  // before the state is read
            let (versions, state) = try storage { () throws(StoreError) in try shared.userState(userId: userId, unlessUserVersion: known) }
            try refreshCatalog(seen: versions.catalog)
            let (catalog, catalogVersion) = catalogSnapshot.currentWithVersion
            if let cached = decisions.lookup(
                userId: userId, context: context, catalogVersion: catalogVersion, storeVersion: versions.user, now: clock)
            {
                return cached
            }
            // The entry named by `known` went meanwhile (or the catalog was reloaded): read the state.
            guard let state else {
                known = nil
                continue
            }
            return remember(
                userId: userId, context: context, catalogVersion: catalogVersion, epoch: epoch, storeVersion: versions.user,
                decision: decide(userId: userId, catalog: catalog, state: state, context: context))
        }
    }

    /// Reloads the catalog when the database's version `seen` is not the snapshot's. (Not only when
    /// newer: a database restored from a backup may go back. Two requests that read versions on
    /// either side of a change may reload twice; the later version always wins in the end.)
    func refreshCatalog(seen: Int64) throws(Problem) {
        guard catalogSnapshot.sharedVersion != seen else { return }
        try catalogWrites.withLock { _ throws(Problem) in
            guard catalogSnapshot.sharedVersion != seen else { return }  // another thread reloaded it
            // Read after `seen` was: at least as new as that version.
            let catalog = try storage { () throws(StoreError) in try storedCatalogForReload() }
            catalogSnapshot.withLock { $0 = catalog }
            catalogSnapshot.sharedVersion = seen
            replicaCounters.catalogReloads.add(1, ordering: .relaxed)
        }
    }

    /// Reads the catalog version, then reloads if it moved (the routes that read only the catalog).
    func refreshCatalogIfChanged() throws(Problem) {
        guard let shared else { return }
        let seen = try storage { () throws(StoreError) in try shared.catalogVersion() }
        try refreshCatalog(seen: seen)
    }

    private func storedCatalogForReload() throws(StoreError) -> Catalog {
        do {
            return try Self.storedCatalog(store)
        } catch let error as StoreError {
            throw error
        } catch {
            throw .failure("the stored catalog does not load: \(error)")
        }
    }

    /// What the store's listener reports (on its thread, one at a time).
    func apply(_ change: SharedChange) {
        switch change {
        case .users(let userIds):
            replicaCounters.notifications.add(1, ordering: .relaxed)
            for userId in userIds {
                decisions.invalidate(userId)
                feed.userChanged(userId)
            }
        case .catalog:
            replicaCounters.notifications.add(1, ordering: .relaxed)
            catalogSnapshot.sharedVersion = -1
            try? refreshCatalogIfChanged()
            feed.catalogChanged()
        case .listenerReset(let connected):
            replicaCounters.listenerConnected.store(connected, ordering: .relaxed)
            if !connected { replicaCounters.listenerLosses.add(1, ordering: .relaxed) }
            // Notifications may have been missed: nothing cached is trusted, everyone looks again.
            decisions.flushAll()
            catalogSnapshot.sharedVersion = -1
            if connected { try? refreshCatalogIfChanged() }
            feed.catalogChanged()
            Log.write(connected ? .info : .warn, connected ? "listening for other replicas' changes" : "lost the listener connection; caches flushed")
        }
    }
}

/// Counters of the replica machinery, for /metrics and tests.
final class ReplicaCounters: Sendable {
    let notifications = Atomic<Int>(0)
    let listenerLosses = Atomic<Int>(0)
    let listenerConnected = Atomic<Bool>(false)
    let catalogReloads = Atomic<Int>(0)
    /// Cached decisions answered after a listener round trip alone (`ChangeBarrier`).
    let barrierHits = Atomic<Int>(0)
}

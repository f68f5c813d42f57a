import MicroHTTP
import Observability
import SheetPolicy
import SheetStore
import Synchronization

/// Replicas on a shared database (PostgreSQL): the catalog kept current, and what the listener hears.
///
/// Which cached decision may be served, and why no answer older than an acknowledged write is, is
/// `DecisionFreshness`'s (its invariants); how the route proves it is `ReplicatedDecisions`'s. Here:
/// - The catalog: every catalog read compares the database's catalog version (the decision's round
///   trip carries it, `CatalogKeeper.refresh(seen:)`; other routes call `CatalogKeeper.refresh()`
///   first), and reloads on a change.
/// - Pushes: the listener's notifications (LISTEN/NOTIFY) wake this replica's streams and long-polls
///   for writes committed on other replicas, after `DecisionFreshness.heard` dropped what they made stale.
/// - A lost listener: every cached answer is dropped, the catalog marked for reload, and every stream
///   and long-poll rechecked, when the loss is noticed and again once the listener listens again.
extension SheetService {
    /// What the store's listener reports (on its thread, one at a time): exactness first
    /// (`DecisionFreshness.heard`), then reloads and wake-ups, which recompute with it applied.
    func apply(_ change: SharedChange) {
        engine.decisions.freshness.heard(change)
        switch change {
        case .users(let userIds):
            replicaCounters.notifications.add(1, ordering: .relaxed)
            for userId in userIds { feed.userChanged(userId) }
        case .catalog:
            replicaCounters.notifications.add(1, ordering: .relaxed)
            catalogKeeper.refresh()
            feed.catalogChanged()
        case .listenerReset(let connected):
            replicaCounters.listenerConnected.store(connected, ordering: .relaxed)
            if !connected { replicaCounters.listenerLosses.add(1, ordering: .relaxed) }
            // Notifications may have been missed: nothing cached is trusted, everyone looks again.
            if connected { catalogKeeper.refresh() }
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
    /// Cached decisions answered after a listener round trip alone (`DecisionFreshness.confirm`).
    let barrierHits = Atomic<Int>(0)
}

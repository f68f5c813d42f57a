public import SheetPolicy

/// The versions a shared database keeps so that each replica can tell, with one cheap read, whether
/// what it holds in memory is current.
public struct SharedVersions: Sendable, Equatable {
    /// The user's version: a new value from one sequence with every committed event and erase of the
    /// user (never reused); 0 while nothing is stored for the user.
    public var user: Int64
    /// The catalog's version: bumped by every committed catalog (or settings) write.
    public var catalog: Int64

    public init(user: Int64, catalog: Int64) {
        self.user = user
        self.catalog = catalog
    }
}

/// A change committed by another process on the shared database, as its listener reports it.
public enum SharedChange: Sendable, Equatable {
    /// These users' states changed (events, erases).
    case users([String])
    /// The catalog (or the settings stored with it) changed.
    case catalog
    /// The listener connection was lost or made again: notifications may have been missed meanwhile.
    case listenerReset(connected: Bool)
}

/// Replica coordination: what several processes (replicas) sharing one database need so that every
/// read or write of one process is seen by the others. It tells them what changed (a listener, for
/// pushing) and lets them check versions (for exact caches: a notification may still be in flight
/// when a request arrives).
public protocol ReplicaCoordination: AnyObject, Sendable {
    /// The user's and the catalog's versions now, and the user's state unless the user's version equals
    /// `unlessUserVersion` (then `state` is nil): one round trip, one snapshot.
    func userState(userId: String, unlessUserVersion: Int64?) throws(StoreError) -> (versions: SharedVersions, state: UserState?)
    /// The catalog's version now (one round trip).
    func catalogVersion() throws(StoreError) -> Int64
    /// The versions of many users (in the order given) and the catalog's, with the states of the users
    /// in `loading` (keyed by user id; a user without stored state has an empty one), all in one
    /// statement: one snapshot, so each state is the state at its user's version; one round trip for
    /// every request waiting on a state.
    func versions(userIds: [String], loading: [String]) throws(StoreError) -> (users: [Int64], catalog: Int64, states: [String: UserState])
    /// Starts the store's one listener; `handler` runs on the listener's thread, one call at a time.
    /// Changes committed by this store (this process) are not reported. Stopped by `close()`.
    func listen(_ handler: @escaping @Sendable (SharedChange) -> Void)
    /// Calls `completion(true)` once every change that another process committed before this call has
    /// been reported to the `listen` handler (and the handler returned): after it, what the handler
    /// keeps exact (caches) is exact without a read. `completion(false)` when that cannot be promised
    /// (no listener listening, or it was lost meanwhile): check versions instead. One round trip
    /// serves many calls; `completion` runs on the listener's thread (keep it short).
    func syncChanges(_ completion: @escaping @Sendable (Bool) -> Void)
    /// Round trips made by `syncChanges` so far.
    var changeSyncRoundTrips: Int { get }
    /// Has the writers read the catalog version in every batch's transaction (after the batch's
    /// updates were submitted) and call `check` with it before any of their bodies runs. A service
    /// that reloads its catalog there when the version moved can let its bodies take the catalog
    /// as it is when they run, instead of reading the version per request.
    func checkCatalogVersionPerBatch(_ check: @escaping @Sendable (Int64) -> Void)
}

/// A store that several processes (replicas) share: the whole store, plus replica coordination.
public protocol SharedSheetStore: SheetStore, ReplicaCoordination {}

extension SharedSheetStore {
    /// A shared store coordinates through itself.
    public var replicaCoordination: (any ReplicaCoordination)? { self }
}

import Concurrency
import MicroHTTP
import Observability
import SheetPolicy
import SheetStore
import SheetWire
import Synchronization

/// The catalog every route reads and the one owner of changing it: every catalog and settings write
/// (the routes, a restore, the `--catalog` file at start) is one `change(ifMatch:author:_:)`, which
/// takes the write lock, checks `If-Match`, the limits and the experiment rules, writes the store with
/// the change's revision (`CatalogWriteRecord`), puts the change into the snapshot and wakes the
/// streams and long-polls. Nothing else touches the lock, the store's catalog or the snapshot.
///
/// Replicas on a shared database (PostgreSQL): a route that reads the catalog calls `refresh()` first
/// (it compares the database's catalog version and reloads on a change); the decision's round trip
/// carries the version and calls `refresh(seen:)`. Reading (`current`) never does I/O. Which cached
/// decision may be served is `DecisionFreshness`'s.
final class CatalogKeeper: Sendable {
    private let store: any CatalogStore
    /// The store's replica coordination when several replicas share it (PostgreSQL); nil otherwise.
    private let replication: (any ReplicaCoordination)?
    /// The catalog as last written; every request reads a consistent snapshot of it.
    private let snapshot: CatalogSnapshot
    /// Serializes catalog writes (and reloads) so the store and the snapshot change in the same order.
    private let writes = Mutex(())
    /// Catalog write routes run here (`deferredWrite`): a write to a large catalog (its transaction,
    /// the new snapshot and tag) then never holds up the other connections of the HTTP worker it came on.
    private let writeThread = WorkerThreads(count: 1, name: "catalog-writes")
    /// The catalog's entity tag, for `ETag` and `If-Match` (computed once per catalog version).
    private let tags = CatalogTag()
    /// Which database catalog version the snapshot reflects (`DecisionFreshness`'s catalog mark).
    private let freshness: DecisionFreshness
    /// Told after every change (streams and long-polls recompute).
    private let feed: ChangeFeed
    /// How large the catalog may grow; changes beyond are refused with 409.
    private let limits: CatalogLimits
    private let replicaCounters: ReplicaCounters
    private let databaseErrors: DatabaseErrors
    /// Catalog revisions kept (`SHEETD_CATALOG_REVISIONS`).
    private let revisionsKept: Int
    /// Bytes of sheet definitions the catalog history keeps (`SHEETD_CATALOG_HISTORY_BYTES`).
    private let historyBytes: Int64

    init(
        store: any CatalogStore, replication: (any ReplicaCoordination)?, snapshot: CatalogSnapshot, freshness: DecisionFreshness,
        feed: ChangeFeed, limits: CatalogLimits, replicaCounters: ReplicaCounters, databaseErrors: DatabaseErrors, revisionsKept: Int,
        historyBytes: Int64 = CatalogRevision.defaultHistoryBytes
    ) {
        self.store = store
        self.replication = replication
        self.snapshot = snapshot
        self.freshness = freshness
        self.feed = feed
        self.limits = limits
        self.replicaCounters = replicaCounters
        self.databaseErrors = databaseErrors
        self.revisionsKept = revisionsKept
        self.historyBytes = historyBytes
    }

    /// The catalog as stored (what start-up and a replica's reload read).
    static func storedCatalog(_ store: any CatalogStore) throws -> Catalog {
        var catalog = Catalog()
        for stored in try store.catalog() {
            catalog.upsert(try SheetDefinition.stored(stored.json, id: stored.id))
        }
        // The campaign settings travel with the catalog snapshot (a change bumps its version).
        catalog.settings = try store.settings()
        return catalog
    }

    // MARK: - Reading

    /// The catalog this process serves now (no I/O; on a shared database call `refresh()` first to
    /// see another replica's changes).
    var current: Catalog { snapshot.current }

    /// The current catalog with its tag (`ETag` of the catalog and settings reads).
    var currentWithTag: (catalog: Catalog, tag: String) {
        let (catalog, version) = snapshot.currentWithVersion
        return (catalog, tags.tag(of: catalog, version: version))
    }

    /// The snapshot's version (moves with every change and reload).
    var currentVersion: Int { snapshot.currentVersion }

    /// Whether replicas share the store (PostgreSQL).
    var isReplicated: Bool { replication != nil }

    /// The catalog an event's body decides with. On PostgreSQL the writer reads the catalog version in
    /// the batch's transaction (after the request arrived) and reloads the snapshot when it moved,
    /// before any body of the batch runs: the body takes the snapshot as it is then, and the request
    /// makes no read of its own. Elsewhere the catalog as the request sees it now (`current`).
    func eventCatalog() -> EventCatalog {
        EventCatalog(taken: replication != nil ? nil : current, snapshot: snapshot)
    }

    // MARK: - Replicas

    /// On a shared database: reads the database's catalog version and reloads the catalog when another
    /// replica changed it, so that a route serves a change made on any replica from the next request
    /// after its acknowledgement. While the database does not answer, the catalog stays as last read
    /// (the failure is counted). Nothing to do on a store only this process writes.
    func refresh() {
        guard let replication else { return }
        guard let seen = try? databaseErrors.guarding({ () throws(StoreError) in try replication.catalogVersion() }) else { return }
        try? refresh(seen: seen)
    }

    /// Reloads the catalog when the database's version `seen` is not the snapshot's. (Not only when
    /// newer: a database restored from a backup may go back. Two requests that read versions on
    /// either side of a change may reload twice; the later version always wins in the end.)
    func refresh(seen: Int64) throws(Problem) {
        guard freshness.needsCatalogReload(seen: seen) else { return }
        try writes.withLock { _ throws(Problem) in
            guard freshness.needsCatalogReload(seen: seen) else { return }  // another thread reloaded it
            // Read after `seen` was: at least as new as that version.
            let catalog = try databaseErrors.guarding { () throws(StoreError) in try storedCatalogForReload() }
            snapshot.withLock { $0 = catalog }
            freshness.catalogLoaded(atStoreVersion: seen)
            replicaCounters.catalogReloads.add(1, ordering: .relaxed)
        }
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

    // MARK: - Changing

    /// Makes one catalog change: on a shared database another replica's changes are loaded first;
    /// then, under the write lock, `ifMatch` (the request's `If-Match`) is checked against the
    /// catalog's tag (412), `edit` says what to change given the catalog as it is, the limits and the
    /// experiment rules are checked (409, 400), the store writes it in one transaction with its
    /// revision by `author` (`storing` false: this process only, no store write and no revision), and
    /// the snapshot takes it. The feed is told after the lock, when something changed.
    /// A store failure is counted and answered as the storage problem; `failedStoring` sees it first
    /// (start-up tells a database that takes no writes from other failures).
    func change(
        ifMatch: String?, author: RevisionAuthor, storing: Bool = true, failedStoring: (StoreError) -> Void = { _ in },
        _ edit: (Catalog) throws(Problem) -> CatalogEdit
    ) throws(Problem) -> CatalogChange {
        refresh()
        let made = try writes.withLock { _ throws(Problem) -> CatalogChange in
            if let ifMatch { try check(ifMatch: ifMatch) }
            let current = snapshot.current
            let edit = try edit(current)
            try edit.check(against: current, limits: limits)
            let stored: CatalogEdit.Stored
            if storing {
                let record = CatalogWriteRecord(
                    author: author, keep: revisionsKept, historyBytes: historyBytes, experiments: ExperimentIdentity.of(edit.sheetsLeft))
                stored = try databaseErrors.guarding { () throws(StoreError) in
                    do throws(StoreError) {
                        return try edit.write(to: store, record: record)
                    } catch {
                        failedStoring(error)
                        throw error
                    }
                }
            } else {
                stored = CatalogEdit.Stored(changed: true)
            }
            guard stored.changed else { return CatalogChange(changed: false, created: false, revision: nil, tag: currentTag) }
            snapshot.withLock { edit.apply(to: &$0) }
            return CatalogChange(changed: true, created: stored.created, revision: stored.revision, tag: currentTag)
        }
        if made.changed { feed.catalogChanged() }
        return made
    }

    /// A catalog write route's work (`change` and its answer) on the catalog's write thread; the
    /// request is answered when it is done. `write` must not touch the request (read what it needs first).
    func deferredWrite(_ write: @escaping @Sendable () throws(Problem) -> HTTPResponse) -> HTTPResponse {
        .deferred { [writeThread] promise in
            writeThread.run { promise.complete { () throws(Problem) in try write() } }
        }
    }

    /// At start: a first revision holding the catalog as found, so that the first change can be undone,
    /// and the identities of its experiments bound where none is yet (experiments that ran before
    /// identities were kept).
    func recordFirstRevisionIfNone() {
        writes.withLock { _ in
            do {
                try store.adoptExperimentIdentities(ExperimentIdentity.of(snapshot.current.sortedByID))
                guard try store.catalogRevisions(before: nil, limit: 1).isEmpty else { return }
                _ = try store.appendCatalogRevision(
                    author: RevisionAuthor(actor: "sheetd", comment: "the catalog when revisions began"), keep: revisionsKept)
            } catch {
                Log.write(.warn, "catalog revision not recorded", [("error", .string("\(error)"))])
            }
        }
    }

    /// The current catalog's tag (under `writes` for a write's check).
    private var currentTag: String {
        let (catalog, version) = snapshot.currentWithVersion
        return tags.tag(of: catalog, version: version)
    }

    /// Under `writes`: refuses the write with 412 when its `If-Match` names another catalog.
    private func check(ifMatch header: String) throws(Problem) {
        let current = currentTag
        guard CatalogTag.ifMatch(header, admits: current) else {
            throw ProblemType.preconditionFailed.problem(
                "the catalog changed since the ETag in If-Match (it is \(current) now): read it again (GET /v1/sheets), "
                    + "reapply your change and send the new ETag")
        }
    }
}

/// One catalog change, as `CatalogKeeper.change` makes it: what it checks, what the store writes
/// with its revision, and what it does to the snapshot.
enum CatalogEdit: Sendable {
    /// Creates or replaces one sheet (`PUT /v1/sheets/{sheetId}`).
    case putSheet(SheetDefinition)
    /// Removes one sheet (`DELETE /v1/sheets/{sheetId}`); nothing changes when there is none.
    case deleteSheet(id: String)
    /// Replaces the campaign settings (`PUT /v1/settings`).
    case putSettings(CampaignSettings)
    /// Upserts many sheets in one transaction (the `--catalog` file at start).
    case upsertSheets([SheetDefinition])
    /// Makes the catalog and settings those of revision `number`, loaded as `catalog`
    /// (`POST /v1/catalog/revisions/{revision}/restore`); nothing changes when it is no longer kept.
    case restore(revision: Int64, catalog: Catalog)

    /// What the store reported.
    struct Stored: Sendable {
        /// False when nothing changed (a sheet that was not there, a revision no longer kept).
        var changed: Bool
        /// `putSheet`: the sheet is new.
        var created = false
        /// `restore`: the revision it appended.
        var revision: CatalogRevision? = nil
    }

    /// The sheets the change puts, as it leaves them: their experiments' identities are recorded with it.
    fileprivate var sheetsLeft: [SheetDefinition] {
        switch self {
        case .putSheet(let definition): [definition]
        case .deleteSheet, .putSettings: []
        case .upsertSheets(let definitions): definitions
        case .restore(_, let catalog): catalog.sortedByID
        }
    }

    /// The limits (409 `limit-exceeded`) and, for a sheet, the experiment rules, against `current`.
    fileprivate func check(against current: Catalog, limits: CatalogLimits) throws(Problem) {
        switch self {
        case .putSheet(let definition):
            if let violation = limits.violation(upserting: [definition], into: current) { throw violation.problem }
            try Self.checkExperimentChange(definition, in: current)
        case .upsertSheets(let definitions):
            if let violation = limits.violation(upserting: definitions, into: current) { throw violation.problem }
        case .restore(_, let catalog):
            // The restored catalog replaces the current one: it must fit today's limits on its own.
            if let violation = limits.violation(upserting: catalog.sortedByID, into: Catalog()) { throw violation.problem }
        case .deleteSheet, .putSettings:
            break
        }
    }

    /// A sheet that would reassign a running experiment's users (409), or an experiment id another
    /// sheet already has (400).
    static func checkExperimentChange(_ definition: SheetDefinition, in catalog: Catalog) throws(Problem) {
        guard let new = definition.experiment else { return }
        if let old = catalog[definition.id]?.experiment, old.id == new.id, old.status == .running, !old.assignsAlike(new) {
            throw ProblemType.experimentRunning.problem(
                "experiment '\(old.id)' is running: its arms and weights cannot change, since that would reassign users already exposed; "
                    + "stop it (status stopped, optionally with a winner) or start a new experiment id")
        }
        if let (other, _) = catalog.experiment(id: new.id), other.id != definition.id {
            throw Problems.invalidParams([("experiment.id", "is already the experiment of sheet '\(other.id)'")])
        }
    }

    /// The store write, in one transaction with `record`.
    fileprivate func write(to store: any CatalogStore, record: CatalogWriteRecord) throws(StoreError) -> Stored {
        switch self {
        case .putSheet(let definition):
            let created = try store.putSheet(Self.stored(definition), record: record)
            return Stored(changed: true, created: created)
        case .deleteSheet(let id):
            return Stored(changed: try store.deleteSheet(id: id, record: record))
        case .putSettings(let settings):
            try store.putSettings(settings, record: record)
            return Stored(changed: true)
        case .upsertSheets(let definitions):
            try store.putSheets(definitions.map(Self.stored), record: record)
            return Stored(changed: true)
        case .restore(let number, _):
            let revision = try store.restoreCatalogRevision(number, record: record)
            return Stored(changed: revision != nil, revision: revision)
        }
    }

    private static func stored(_ definition: SheetDefinition) -> StoredSheet {
        StoredSheet(id: definition.id, json: String(decoding: definition.canonicalJSON, as: UTF8.self))
    }

    /// The change made to the snapshot, once stored.
    fileprivate func apply(to catalog: inout Catalog) {
        switch self {
        case .putSheet(let definition): catalog.upsert(definition)
        case .deleteSheet(let id): catalog.remove(id: id)
        case .putSettings(let settings): catalog.settings = settings
        case .upsertSheets(let definitions): for definition in definitions { catalog.upsert(definition) }
        case .restore(_, let restored): catalog = restored
        }
    }
}

/// What `CatalogKeeper.change` did.
struct CatalogChange: Sendable {
    /// False when nothing changed (no revision, no notification): see `CatalogEdit.Stored.changed`.
    let changed: Bool
    /// `putSheet`: the sheet is new.
    let created: Bool
    /// `restore`: the revision it appended.
    let revision: CatalogRevision?
    /// The catalog's tag after the change, for `ETag` and the next `If-Match`.
    let tag: String
}

/// See `CatalogKeeper.eventCatalog()`.
struct EventCatalog: Sendable {
    let taken: Catalog?
    let snapshot: CatalogSnapshot
    /// Read by the body, when it runs.
    var current: Catalog { taken ?? snapshot.current }
}

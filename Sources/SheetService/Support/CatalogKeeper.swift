import Concurrency
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// The catalog every route reads and the catalog routes write: the snapshot, the lock that orders
/// writes, the catalog's tag for `ETag`/`If-Match`, its revisions, and, on a shared database, the
/// reloads after another replica changed it.
///
/// Replicas on a shared database (PostgreSQL): every catalog read compares the database's catalog
/// version (the decision's round trip carries it; other routes read it with `current`), and reloads
/// on a change (`refresh(seen:)`). Which cached decision may be served is `DecisionFreshness`'s.
final class CatalogKeeper: Sendable {
    let store: any SheetStore
    /// The store's replica coordination when several replicas share it (PostgreSQL); nil otherwise.
    let replication: (any ReplicaCoordination)?
    /// The catalog as last written; every request reads a consistent snapshot of it.
    let snapshot: CatalogSnapshot
    /// Serializes catalog writes so the store and the snapshot change in the same order.
    let writes = Mutex(())
    /// Catalog writes run here (`deferredWrite`): a write to a large catalog (its transaction, the new
    /// snapshot and tag) then never holds up the other connections of the HTTP worker it came on.
    private let writeThread = WorkerThreads(count: 1)
    /// The catalog's entity tag, for `ETag` and `If-Match` (computed once per catalog version).
    let tags = CatalogTag()
    /// Which database catalog version the snapshot reflects (`DecisionFreshness`'s catalog mark).
    let freshness: DecisionFreshness
    let replicaCounters: ReplicaCounters
    let databaseErrors: DatabaseErrors
    /// Catalog revisions kept (`SHEETD_CATALOG_REVISIONS`).
    let revisionsKept: Int
    /// Bytes of sheet definitions the catalog history keeps (`SHEETD_CATALOG_HISTORY_BYTES`).
    let historyBytes: Int64

    init(
        store: any SheetStore, replication: (any ReplicaCoordination)?, snapshot: CatalogSnapshot, freshness: DecisionFreshness,
        replicaCounters: ReplicaCounters, databaseErrors: DatabaseErrors, revisionsKept: Int,
        historyBytes: Int64 = CatalogRevision.defaultHistoryBytes
    ) {
        self.store = store
        self.replication = replication
        self.snapshot = snapshot
        self.freshness = freshness
        self.replicaCounters = replicaCounters
        self.databaseErrors = databaseErrors
        self.revisionsKept = revisionsKept
        self.historyBytes = historyBytes
    }

    /// The catalog as stored (what start-up and a replica's reload read).
    static func storedCatalog(_ store: any CatalogStore) throws -> Catalog {
        var catalog = Catalog()
        for stored in try store.catalog() {
            let object = try RequestBody.object(Array(stored.json.utf8), subject: "the stored sheet '\(stored.id)'")
            catalog.upsert(try SheetDefinition.parse(object, pathId: stored.id))
        }
        // The campaign settings travel with the catalog snapshot (a change bumps its version).
        catalog.settings = try store.settings()
        return catalog
    }

    /// The current catalog. On a shared database it is first checked against the database's catalog
    /// version (one small read; reloaded when another replica changed it), so every route serves a
    /// catalog change made on any replica from the next request after its acknowledgement. While the
    /// database does not answer, the last catalog read.
    var current: Catalog {
        if replication != nil { try? refreshIfChanged() }
        return snapshot.current
    }

    /// The catalog an event's body decides with. On PostgreSQL the writer reads the catalog version in
    /// the batch's transaction (after the request arrived) and reloads the snapshot when it moved,
    /// before any body of the batch runs: the body takes the snapshot as it is then, and the request
    /// makes no read of its own. Elsewhere the catalog as the request sees it now (`current`).
    func eventCatalog() -> EventCatalog {
        EventCatalog(taken: replication != nil ? nil : current, snapshot: snapshot)
    }

    // MARK: - Replicas

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

    /// Reads the catalog version, then reloads if it moved (the routes that read only the catalog).
    func refreshIfChanged() throws(Problem) {
        guard let replication else { return }
        let seen = try databaseErrors.guarding { () throws(StoreError) in try replication.catalogVersion() }
        try refresh(seen: seen)
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

    // MARK: - Tags and revisions

    /// The current catalog's tag (from the snapshot; under `writes` for a write's check).
    var currentTag: String {
        let (catalog, version) = snapshot.currentWithVersion
        return tags.tag(of: catalog, version: version)
    }

    /// `write` on the catalog's write thread; the request is answered when it is done. `write` must
    /// not touch the request (read what it needs first).
    func deferredWrite(_ write: @escaping @Sendable () throws(Problem) -> HTTPResponse) -> HTTPResponse {
        .deferred { [writeThread] promise in
            writeThread.run { promise.complete { () throws(Problem) in try write() } }
        }
    }

    /// Under `writes`: refuses the write with 412 when its `If-Match` (the header's value) names another catalog.
    func checkIfMatch(_ header: String?) throws(Problem) {
        guard let header else { return }
        let current = currentTag
        guard CatalogTag.ifMatch(header, admits: current) else {
            throw ProblemType.preconditionFailed.problem(
                "the catalog changed since the ETag in If-Match (it is \(current) now): read it again (GET /v1/sheets), "
                    + "reapply your change and send the new ETag")
        }
    }

    /// What a catalog write by `author` records in its own transaction: its revision (kept as
    /// configured) and the identities of the experiments on `sheets` as the write leaves them.
    func writeRecord(by author: RevisionAuthor, sheets: some Sequence<SheetDefinition>) -> CatalogWriteRecord {
        CatalogWriteRecord(
            author: author, keep: revisionsKept, historyBytes: historyBytes, experiments: ExperimentIdentity.of(sheets))
    }

    /// At start: a first revision holding the catalog as found, so that the first change can be undone,
    /// and the identities of its experiments bound where none is yet (experiments that ran before
    /// identities were kept).
    func recordFirstRevisionIfNone() {
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

/// See `CatalogKeeper.eventCatalog()`.
struct EventCatalog: Sendable {
    let taken: Catalog?
    let snapshot: CatalogSnapshot
    /// Read by the body, when it runs.
    var current: Catalog { taken ?? snapshot.current }
}

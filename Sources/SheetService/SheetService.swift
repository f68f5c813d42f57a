import Concurrency
public import MicroHTTP
public import SheetPolicy
public import SheetStore
import Synchronization

/// The sheetd application: the /v1 API and the ops endpoints over a store and the policy.
/// Handlers run synchronously on HTTP worker threads; shared state is behind `Mutex`/`Atomic`.
public final class SheetService: Sendable {
    public static let version = "0.1.0"

    let store: any SheetStore
    /// The store's replica coordination when several replicas share it (PostgreSQL): versions to
    /// check, a listener. Nil for a store only this process writes (`SheetStore.replicaCoordination`).
    let replication: (any ReplicaCoordination)?
    /// The store's writers check the catalog version in each batch's transaction and reload the
    /// catalog there (PostgreSQL): events read no version of their own (see `eventCatalog`).
    let catalogCheckedPerBatch: Bool
    /// Replica bookkeeping for /metrics (notifications heard, listener losses).
    let replicaCounters = ReplicaCounters()
    /// Where the decision route gets exact answers, chosen at start (`LocalDecisions`, or
    /// `ReplicatedDecisions` on a shared database).
    let decisionSource: any DecisionSource
    let tokens: TokenVerifier
    let metrics: HTTPMetrics
    let openAPIDocument: [UInt8]
    /// The catalog as last written; every request reads a consistent snapshot of it.
    let catalogSnapshot: CatalogSnapshot
    /// Decision answers per user; when one may be served is `decisions.freshness`'s (`DecisionFreshness`).
    let decisions: DecisionCache
    /// How much one user may store; events beyond are refused with 409.
    let stateLimits: UserStateLimits
    /// How large the catalog may grow; catalog writes beyond are refused with 409.
    let catalogLimits: CatalogLimits
    /// How many events one user may report per minute; more are refused with 429.
    let eventRate: EventRateLimiter
    /// Serializes catalog writes so the store and the snapshot change in the same order.
    let catalogWrites = Mutex(())
    /// The catalog's entity tag, for `ETag` and `If-Match` (computed once per catalog version).
    let catalogTag = CatalogTag()
    /// Wakes the streams and long-polls whose decision a write or a catalog change may have changed.
    let feed = ChangeFeed()
    let streams: DecisionStreams
    let longPolls = LongPolls()
    /// `POST /v1/catalog/impact`: one analysis at a time, on its own thread.
    let impactAnalyses = ImpactAnalyses()
    /// The service's clock (the policy has none); tests pass a fixed or stepped one.
    let clock: @Sendable () -> Timestamp
    /// Impressions and dismissals per sheet for /metrics (bounded by the catalog).
    let sheetCounters = SheetCounters()
    /// Exposures submitted off the decision's path, and the experiment counters of /metrics.
    let experimentRecorder = ExperimentRecorder()
    let databaseErrors = Atomic<Int>(0)
    /// Catalog revisions kept (`SHEETD_CATALOG_REVISIONS`).
    let catalogRevisionsKept: Int
    let draining = Atomic<Bool>(false)

    /// Builds the service and loads the catalog from the store.
    /// `decisionCacheUsers`: about how many users' decision answers are kept in memory (0: none).
    /// `maxStreams`: open decision streams per process; `streamHeartbeatSeconds`: idle time before a heartbeat.
    public init(
        store: any SheetStore, tokens: TokenVerifier, metrics: HTTPMetrics, openAPIDocument: [UInt8],
        decisionCacheUsers: Int = ServiceDefaults.decisionCacheUsers,
        maxStreams: Int = ServiceDefaults.maxStreams, streamHeartbeatSeconds: Int = ServiceDefaults.streamHeartbeatSeconds,
        stateLimits: UserStateLimits = UserStateLimits(), catalogLimits: CatalogLimits = CatalogLimits(),
        eventsPerUserPerMinute: Int = ServiceDefaults.eventsPerUserPerMinute,
        catalogRevisionsKept: Int = CatalogRevision.defaultKept,
        clock: @escaping @Sendable () -> Timestamp = Timestamp.now
    ) throws {
        self.store = store
        self.catalogRevisionsKept = catalogRevisionsKept
        // The decision source, once: by what the store can do (no cast).
        let replication = store.replicaCoordination
        self.replication = replication
        self.catalogCheckedPerBatch = replication != nil
        self.decisionSource = replication.map { ReplicatedDecisions(coordination: $0) } ?? LocalDecisions(store: store)
        self.clock = clock
        self.streams = DecisionStreams(maxStreams: maxStreams, heartbeatSeconds: streamHeartbeatSeconds)
        self.stateLimits = stateLimits
        self.catalogLimits = catalogLimits
        self.eventRate = EventRateLimiter(eventsPerMinute: eventsPerUserPerMinute)
        self.tokens = tokens
        self.metrics = metrics
        self.openAPIDocument = openAPIDocument
        // Read before the catalog: the snapshot is then at least as new as this version.
        let sharedCatalogVersion = try replication?.catalogVersion()
        let catalogSnapshot = CatalogSnapshot(try Self.storedCatalog(store))
        self.catalogSnapshot = catalogSnapshot
        let freshness = DecisionFreshness(catalog: catalogSnapshot, coordination: replication)
        if let sharedCatalogVersion { freshness.catalogLoaded(atStoreVersion: sharedCatalogVersion) }
        self.decisions = DecisionCache(users: decisionCacheUsers, freshness: freshness)
        replication?.listen { [weak self] change in self?.apply(change) }
        // While the database does not answer, the last catalog read (as `catalog` does).
        replication?.checkCatalogVersionPerBatch { [weak self] version in try? self?.refreshCatalog(seen: version) }
        catalogWrites.withLock { _ in recordFirstRevisionIfNone() }
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
    public var catalog: Catalog {
        if replication != nil { try? refreshCatalogIfChanged() }
        return catalogSnapshot.current
    }

    /// Decision streams open now.
    public var openStreamCount: Int { streams.openCount }

    /// Readiness turns 503 from now on (SIGTERM); streams get a final `shutdown` event and end, waiting
    /// long-polls answer 304, so clients reconnect to another instance.
    public func beginDraining() {
        draining.store(true, ordering: .relaxed)
        streams.shutDown()
        longPolls.expireAll()
    }

    /// Every route of the service, on a new router.
    public func makeRouter() -> Router {
        let router = Router()
        router.add(.GET, "/healthz") { _ in .json(200, Array(#"{"status":"ok"}"#.utf8)) }
        router.add(.GET, "/readyz") { [self] _ in try readiness() }
        router.add(.GET, "/metrics") { [self] _ in .text(200, renderMetrics(), contentType: "text/plain; version=0.0.4; charset=utf-8") }
        router.add(.GET, "/openapi.yaml") { [self] _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: openAPIDocument)
        }
        router.add(.GET, "/preview") { [self] _ in previewPage() }

        router.add(.GET, "/v1/sheets") { [self] in try listSheets($0) }
        router.add(.GET, "/v1/sheets/{sheetId}") { [self] in try getSheet($0) }
        router.add(.PUT, "/v1/sheets/{sheetId}") { [self] in try putSheet($0) }
        router.add(.DELETE, "/v1/sheets/{sheetId}") { [self] in try deleteSheet($0) }
        router.add(.POST, "/v1/catalog/impact") { [self] in try catalogImpact($0) }
        router.add(.GET, "/v1/catalog/revisions") { [self] in try listRevisions($0) }
        router.add(.GET, "/v1/catalog/revisions/{revision}") { [self] in try getRevision($0) }
        router.add(.POST, "/v1/catalog/revisions/{revision}/restore") { [self] in try restoreRevision($0) }

        router.add(.PUT, "/v1/users/{userId}/containers/{containerId}/count") { [self] in try reportCount($0) }
        router.add(.POST, "/v1/users/{userId}/dismissals") { [self] in try reportDismissal($0) }
        router.add(.POST, "/v1/users/{userId}/presentations") { [self] in try reportPresentation($0) }
        router.add(.PUT, "/v1/users/{userId}/sheets/{sheetId}/content-height") { [self] in try reportContentHeight($0) }
        router.add(.GET, "/v1/users/{userId}/decision") { [self] in try decision($0) }
        router.add(.GET, "/v1/users/{userId}/decision/stream") { [self] in try decisionStream($0) }
        router.add(.POST, "/v1/users/{userId}/impressions") { [self] in try reportImpression($0) }
        router.add(.PUT, "/v1/users/{userId}/attributes") { [self] in try putAttributes($0) }
        router.add(.GET, "/v1/users/{userId}/attributes") { [self] in try getAttributes($0) }
        router.add(.GET, "/v1/settings") { [self] in try getSettings($0) }
        router.add(.PUT, "/v1/settings") { [self] in try putSettings($0) }
        router.add(.GET, "/v1/sheets/{sheetId}/stats") { [self] in try sheetStats($0) }
        router.add(.GET, "/v1/users/{userId}/state") { [self] in try userState($0) }
        router.add(.DELETE, "/v1/users/{userId}") { [self] in try deleteUser($0) }
        router.add(.POST, "/v1/users/{userId}/conversions") { [self] in try reportConversion($0) }
        router.add(.GET, "/v1/experiments/{experimentId}/results") { [self] in try experimentResults($0) }
        router.add(.PUT, "/v1/experiments/{experimentId}/pins/{userId}") { [self] in try putPin($0) }
        router.add(.DELETE, "/v1/experiments/{experimentId}/pins/{userId}") { [self] in try deletePin($0) }
        return router
    }

    /// Why `definitions` (the `--catalog` file) would not fit the catalog limits, or nil when they do.
    public func catalogLimitViolation(_ definitions: [SheetDefinition]) -> CatalogLimits.Violation? {
        catalogLimits.violation(upserting: definitions, into: catalog)
    }

    /// Upserts a whole catalog (the `--catalog` file) in one transaction.
    public func loadCatalog(_ definitions: [SheetDefinition]) throws(StoreError) {
        try catalogWrites.withLock { _ throws(StoreError) in
            let before = currentCatalogTag
            try store.putSheets(definitions.map { StoredSheet(id: $0.id, json: String(decoding: $0.canonicalJSON, as: UTF8.self)) })
            catalogSnapshot.withLock { catalog in for d in definitions { catalog.upsert(d) } }
            recordRevision(after: before, by: RevisionAuthor(actor: "sheetd", comment: "the --catalog file, upserted at start"))
        }
        feed.catalogChanged()
    }

    /// Serves `definitions` without storing them, for this process only: at start when the database
    /// takes no writes (read-only file, full disk). The catalog file is upserted again at the next start.
    public func useCatalogWithoutStoring(_ definitions: [SheetDefinition]) {
        catalogWrites.withLock { _ in
            catalogSnapshot.withLock { catalog in for d in definitions { catalog.upsert(d) } }
        }
    }
}

import Concurrency
public import MicroHTTP
public import SheetPolicy
public import SheetStore
import SheetWire
import Synchronization

/// The sheetd application: the /v1 API and the ops endpoints over a store and the policy.
///
/// The composition root: it builds the shared pieces (the catalog, the decision engine, the event
/// recorder, the change feed, the streams) and the route controllers over them (`makeRouter`).
/// Handlers run synchronously on HTTP worker threads; shared state is behind `Mutex`/`Atomic`.
public final class SheetService: Sendable {
    public static let version = "0.1.0"

    let store: any SheetStore
    let authorization: RequestAuthorization
    let metrics: HTTPMetrics
    let openAPIDocument: [UInt8]
    /// The catalog, its one way of changing (`change`), its tags, and its reloads on a shared database.
    let catalogKeeper: CatalogKeeper
    /// Decisions: the policy, the cache and the source that proves answers exact.
    let engine: DecisionEngine
    let recorder: EventRecorder
    /// How large the catalog may grow (the catalog keeper refuses changes beyond with 409; the impact
    /// analysis validates with it).
    let catalogLimits: CatalogLimits
    /// Every write of a user's state: it bumps the user's epoch and tells the feed.
    let userWrites: UserStateWrites
    /// Replica bookkeeping for /metrics (notifications heard, listener losses).
    let replicaCounters = ReplicaCounters()
    let databaseErrors = DatabaseErrors()
    /// Wakes the streams and long-polls whose decision a write or a catalog change may have changed.
    let feed = ChangeFeed()
    let streams: DecisionStreams
    let longPolls = LongPolls()
    /// `POST /v1/catalog/impact`: one analysis at a time, on its own thread.
    let impactAnalyses = ImpactAnalyses()
    /// Impressions and dismissals per sheet for /metrics (bounded by the catalog).
    let sheetCounters = SheetCounters()
    /// Exposures submitted off the decision's path, and the experiment counters of /metrics.
    let experimentRecorder = ExperimentRecorder()
    let draining = Draining()
    /// The most conversions one user counts per experiment.
    let conversionCapPerUser: Int

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
        catalogHistoryBytes: Int64 = CatalogRevision.defaultHistoryBytes,
        conversionCapPerUser: Int = SheetPolicy.defaultConversionCapPerUser,
        clock: @escaping @Sendable () -> Timestamp = Timestamp.now
    ) throws {
        self.store = store
        self.authorization = RequestAuthorization(tokens: tokens)
        self.metrics = metrics
        self.openAPIDocument = openAPIDocument
        self.catalogLimits = catalogLimits
        self.conversionCapPerUser = conversionCapPerUser
        self.streams = DecisionStreams(maxStreams: maxStreams, heartbeatSeconds: streamHeartbeatSeconds)
        // The decision source, once: by what the store can do (no cast).
        let replication = store.replicaCoordination
        // Read before the catalog: the snapshot is then at least as new as this version.
        let sharedCatalogVersion = try replication?.catalogVersion()
        let snapshot = CatalogSnapshot(try CatalogKeeper.storedCatalog(store))
        let freshness = DecisionFreshness(catalog: snapshot, coordination: replication)
        if let sharedCatalogVersion { freshness.catalogLoaded(atStoreVersion: sharedCatalogVersion) }
        let catalogKeeper = CatalogKeeper(
            store: store, replication: replication, snapshot: snapshot, freshness: freshness, feed: feed, limits: catalogLimits,
            replicaCounters: replicaCounters, databaseErrors: databaseErrors, revisionsKept: catalogRevisionsKept,
            historyBytes: catalogHistoryBytes)
        self.catalogKeeper = catalogKeeper
        let userWrites = UserStateWrites(store: store, freshness: freshness, feed: feed)
        self.userWrites = userWrites
        let decisionContext = DecisionContext(
            cache: DecisionCache(users: decisionCacheUsers, freshness: freshness), snapshot: snapshot, catalog: catalogKeeper, clock: clock,
            databaseErrors: databaseErrors, replicaCounters: replicaCounters, experimentRecorder: experimentRecorder, writes: userWrites)
        self.engine = DecisionEngine(
            context: decisionContext,
            source: replication.map { ReplicatedDecisions(coordination: $0, context: decisionContext) }
                ?? LocalDecisions(store: store, context: decisionContext))
        self.recorder = EventRecorder(
            writes: userWrites, stateLimits: stateLimits, eventRate: EventRateLimiter(eventsPerMinute: eventsPerUserPerMinute),
            sheetCounters: sheetCounters, experimentRecorder: experimentRecorder, databaseErrors: databaseErrors,
            occurredAtWindow: OccurredAtWindow(futureSeconds: Int(tokens.clockSkewSeconds)), clock: clock)
        replication?.listen { [weak self] change in self?.apply(change) }
        // While the database does not answer, the last catalog read (as `catalog` does).
        replication?.checkCatalogVersionPerBatch { [weak catalogKeeper] version in try? catalogKeeper?.refresh(seen: version) }
        catalogKeeper.recordFirstRevisionIfNone()
    }

    /// Decision answers per user (tests read its counters and versions).
    var decisions: DecisionCache { engine.decisions }
    /// Where the decision route gets exact answers.
    var decisionSource: any DecisionSource { engine.source }

    /// The catalog this process serves now (on a shared database as last loaded: the routes call
    /// `CatalogKeeper.refresh()` before they read it).
    public var catalog: Catalog { catalogKeeper.current }

    /// Decision streams open now.
    public var openStreamCount: Int { streams.openCount }

    /// Readiness turns 503 from now on (SIGTERM); streams get a final `shutdown` event and end, waiting
    /// long-polls answer 304, so clients reconnect to another instance.
    public func beginDraining() {
        draining.begin()
        streams.shutDown()
        longPolls.expireAll()
    }

    /// The route controllers, each over the shared pieces it uses.
    var controllers: [any RouteController] {
        [
            OpsController(
                store: store, draining: draining, databaseErrors: databaseErrors, metrics: metrics, openAPIDocument: openAPIDocument,
                catalog: catalogKeeper, decisions: engine.decisions,
                replicaCounters: replicaCounters, experimentRecorder: experimentRecorder, sheetCounters: sheetCounters, streams: streams,
                longPolls: longPolls),
            PreviewController(),
            ConsoleController(),
            CatalogController(authorization: authorization, catalog: catalogKeeper),
            ImpactController(
                authorization: authorization, catalog: catalogKeeper, store: store, databaseErrors: databaseErrors, limits: catalogLimits,
                analyses: impactAnalyses, clock: engine.clock),
            RevisionsController(authorization: authorization, catalog: catalogKeeper, store: store, databaseErrors: databaseErrors),
            EventsController(authorization: authorization, recorder: recorder, catalog: catalogKeeper),
            DecisionController(authorization: authorization, engine: engine, longPolls: longPolls, feed: feed),
            StreamsController(authorization: authorization, engine: engine, streams: streams, feed: feed, draining: draining),
            CampaignController(
                authorization: authorization, recorder: recorder, catalog: catalogKeeper, store: store, databaseErrors: databaseErrors),
            UsersController(authorization: authorization, store: store, databaseErrors: databaseErrors, writes: userWrites),
            ExperimentsController(
                authorization: authorization, recorder: recorder, catalog: catalogKeeper, store: store, databaseErrors: databaseErrors,
                conversionCapPerUser: conversionCapPerUser),
        ]
    }

    /// Every route of the service, on a new router.
    public func makeRouter() -> Router {
        let router = Router()
        for controller in controllers { controller.register(on: router) }
        return router
    }

    /// Why `definitions` (the `--catalog` file) would not fit the catalog limits, or nil when they do.
    public func catalogLimitViolation(_ definitions: [SheetDefinition]) -> CatalogLimits.Violation? {
        catalogLimits.violation(upserting: definitions, into: catalog)
    }

    /// Upserts a whole catalog (the `--catalog` file) in one transaction, as one catalog change
    /// (`CatalogKeeper.change`). A store failure comes back as the store's error (`.unavailable` when
    /// the database takes no writes: then `useCatalogWithoutStoring`).
    public func loadCatalog(_ definitions: [SheetDefinition]) throws(StoreError) {
        var storeFailure: StoreError?
        do {
            _ = try catalogKeeper.change(ifMatch: nil, author: Self.catalogFileAuthor, failedStoring: { storeFailure = $0 }) { _ in
                .upsertSheets(definitions)
            }
        } catch {
            throw storeFailure ?? .failure(error.detail)
        }
    }

    /// Serves `definitions` without storing them, for this process only: at start when the database
    /// takes no writes (read-only file, full disk). The catalog file is upserted again at the next start.
    /// Refused (409) only when they do not fit the limits (`catalogLimitViolation` says so first).
    public func useCatalogWithoutStoring(_ definitions: [SheetDefinition]) throws(Problem) {
        _ = try catalogKeeper.change(ifMatch: nil, author: Self.catalogFileAuthor, storing: false) { _ in .upsertSheets(definitions) }
    }

    private static let catalogFileAuthor = RevisionAuthor(actor: "sheetd", comment: "the --catalog file, upserted at start")
}

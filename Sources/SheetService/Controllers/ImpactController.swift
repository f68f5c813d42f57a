import Concurrency
import Crypto
import MicroHTTP
import Observability
import SheetPolicy
import SheetStore
import SheetWire
import Synchronization

/// `POST /v1/catalog/impact`: what a proposed catalog would change for stored users, before it ships.
struct ImpactController: RouteController {
    /// Users compared when `users` is not given, and the most a request may ask for.
    static let defaultImpactUsers = 1000
    static let maximumImpactUsers = 10_000
    /// The comparison stops after this much time and answers what it has (`sample.complete` false).
    static let impactBudgetMilliseconds = 2000

    let authorization: RequestAuthorization
    let catalog: CatalogKeeper
    let limits: CatalogLimits
    /// One analysis at a time, on the background pool.
    let analyses: ImpactAnalyses
    let clock: @Sendable () -> Timestamp

    func register(on router: Router) {
        router.add(.POST, "/v1/catalog/impact") { [self] in try catalogImpact($0) }
    }

    /// Admin only. The body is a catalog file (`{"sheets": [...]}`), validated as `sheetd catalog
    /// check` does (400 naming each member). A sample of stored users is read (never through the
    /// writer) and both catalogs decide for each in every context the two catalogs name, at one
    /// instant, with the current settings; the answer counts the decisions that change, by kind.
    func catalogImpact(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may analyse a catalog change")
        var users = Self.defaultImpactUsers
        var from: String?
        try QueryParameters.read(
            request,
            [
                "users": QueryParameters.wholeNumber(1...Self.maximumImpactUsers) { users = $0 },
                "from": QueryParameters.identifier { from = $0 },
            ])
        guard let type = request.header("Content-Type"), MediaType.isJSON(type) else { throw Problems.unsupportedMediaType }
        let (findings, definitions) = CatalogCheck.validate(request.body, limits: limits)
        let errors = findings.filter { $0.severity == .error }
        if !errors.isEmpty {
            throw Problems.invalidParams(errors.map { ($0.path.isEmpty ? "body" : $0.path, $0.reason) })
        }
        let current = catalog.current  // on a shared database: another replica's changes first
        var proposed = Catalog(definitions)
        proposed.settings = current.settings
        guard analyses.begin() else {
            throw Problems.tooManyRequests("a catalog impact analysis is running; one runs at a time", retryAfterSeconds: 2)
        }
        let store = catalog.store, databaseErrors = catalog.databaseErrors, now = clock()
        return .deferred { [analyses, users, from, proposed] promise in
            analyses.thread.run {
                defer { analyses.end() }
                promise.complete { () throws(Problem) in
                    let started = monotonicMicros()
                    let sample = try databaseErrors.guarding { () throws(StoreError) in try store.sampleUsers(from: from, limit: users) }
                    let contexts = CatalogImpact.contexts(of: [current, proposed])
                    var impact = CatalogImpact()
                    var complete = true
                    let assigns = current.hasExperiments || proposed.hasExperiments
                    for (userId, state) in sample {
                        if (monotonicMicros() - started) / 1000 >= Self.impactBudgetMilliseconds {
                            complete = false
                            break
                        }
                        let assigner = assigns ? ExperimentAssigner(userId: userId, hashPrefix: { SHA256.bigEndianPrefix(of: $0) }) : nil
                        impact.add(
                            userId: userId, state: state, current: current, proposed: proposed, contexts: contexts, now: now,
                            experiments: assigner)
                    }
                    let report = CatalogImpactReport(
                        impact: impact, from: sample.first?.userId ?? from ?? "", requestedUsers: users, complete: complete, now: now,
                        elapsedMilliseconds: (monotonicMicros() - started) / 1000, contexts: contexts, current: current, proposed: proposed)
                    return .json(200, report.jsonBytes())
                }
            }
        }
    }
}

/// At most one impact analysis runs (each may take its whole time budget of one core), on the
/// background pool, so that neither the HTTP workers nor the writer wait for it.
final class ImpactAnalyses: Sendable {
    let thread = WorkerThreads.background
    private let running = Atomic<Bool>(false)

    /// False when one is running already.
    func begin() -> Bool { !running.exchange(true, ordering: .acquiringAndReleasing) }
    func end() { running.store(false, ordering: .releasing) }
}

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
    /// Users whose states are read and held at once: what bounds the analysis's memory (about 110
    /// KiB per user at 256 containers, so about 11 MiB), whatever `users` asks for.
    static let impactBatchUsers = 100

    let authorization: RequestAuthorization
    let catalog: CatalogKeeper
    /// Users are sampled from it (never through the writer).
    let store: any SheetStore
    let databaseErrors: DatabaseErrors
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
        catalog.refresh()  // on a shared database: another replica's changes first
        let current = catalog.current
        var proposed = Catalog(definitions)
        proposed.settings = current.settings
        guard analyses.begin() else {
            throw Problems.tooManyRequests("a catalog impact analysis is running; one runs at a time", retryAfterSeconds: 2)
        }
        let store = self.store, databaseErrors = self.databaseErrors, now = clock()
        return .deferred { [analyses, users, from, proposed] promise in
            analyses.thread.run {
                defer { analyses.end() }
                promise.complete { () throws(Problem) in
                    let started = monotonicMicros()
                    var sample = ImpactSample(store: store, from: from, limit: users, batch: Self.impactBatchUsers)
                    let contexts = CatalogImpact.contexts(of: [current, proposed])
                    var impact = CatalogImpact()
                    var complete = true
                    let assigns = current.hasExperiments || proposed.hasExperiments
                    try databaseErrors.guarding { () throws(StoreError) in
                        try sample.visit { userId, state in
                            if (monotonicMicros() - started) / 1000 >= Self.impactBudgetMilliseconds {
                                complete = false
                                return false
                            }
                            let assigner = assigns ? ExperimentAssigner(userId: userId, hashPrefix: { SHA256.bigEndianPrefix(of: $0) }) : nil
                            impact.add(
                                userId: userId, state: state, current: current, proposed: proposed, contexts: contexts, now: now,
                                experiments: assigner)
                            return true
                        }
                    }
                    let report = CatalogImpactReport(
                        impact: impact, from: sample.firstUserId ?? from ?? "", requestedUsers: users, complete: complete, now: now,
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

/// The users of an impact analysis, in the order `sampleUsers` gives them (ids from `from` on,
/// continuing from the smallest), read `batch` at a time so that at most one batch of states is held,
/// whatever `limit` is.
struct ImpactSample {
    let store: any StoreOperations
    let from: String?
    let limit: Int
    let batch: Int
    /// The sample's first user (the answer's `from`); nil before the first read or when none is stored.
    private(set) var firstUserId: String?
    /// The most states held at once so far (what the batch bounds).
    private(set) var mostHeld = 0

    init(store: any StoreOperations, from: String?, limit: Int, batch: Int) {
        self.store = store; self.from = from; self.limit = limit; self.batch = max(1, batch)
    }

    /// Calls `body` with each user in turn until it returns false or `limit` users went by; each user
    /// once, also when users come and go meanwhile (the walk stops on coming round to the first).
    mutating func visit(_ body: (String, UserState) throws(StoreError) -> Bool) throws(StoreError) {
        var seen = 0
        var last: String?
        var wrapped = false
        while seen < limit {
            let wanted = min(batch, limit - seen)
            // After the first batch: from the last user on (it comes again first, and is skipped).
            var users = try store.sampleUsers(from: last ?? from, limit: last == nil ? wanted : wanted + 1)
            mostHeld = max(mostHeld, users.count)
            if let last, users.first?.userId == last { users.removeFirst() }
            guard !users.isEmpty else { return }
            for (userId, state) in users.prefix(wanted) {
                if let first = firstUserId {
                    if let previous = last, userId.utf8.lexicographicallyPrecedes(previous.utf8) { wrapped = true }
                    // Round to the first again: every stored user went by.
                    if wrapped && !userId.utf8.lexicographicallyPrecedes(first.utf8) { return }
                } else {
                    firstUserId = userId
                }
                seen += 1
                last = userId
                guard try body(userId, state) else { return }
            }
        }
    }
}

import Concurrency
import Crypto
import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire

/// Exact decision answers for the decision route, long-polls and streams: what they share. The
/// answers come from the service's `DecisionSource` (chosen at start), which works with a
/// `DecisionContext` it was given; the engine only forwards to it and shapes answers for the request.
final class DecisionEngine: Sendable {
    /// What every decision source works with (the cache, the catalog, the policy at the clock).
    let context: DecisionContext
    /// Where exact answers come from (`LocalDecisions`, or `ReplicatedDecisions` on a shared database).
    let source: any DecisionSource

    init(context: DecisionContext, source: any DecisionSource) {
        self.context = context
        self.source = source
    }

    /// Decision answers per user; when one may be served is `decisions.freshness`'s (`DecisionFreshness`).
    var decisions: DecisionCache { context.cache }
    /// The service's clock (the policy has none); tests pass a fixed or stepped one.
    var clock: @Sendable () -> Timestamp { context.clock }

    /// The answer to a decision GET without `Prefer: wait` (see `DecisionSource.respond`).
    func respond(userId: String, clientContext: ClientContext, condition: String?, form: DecisionForm) throws(Problem) -> HTTPResponse {
        try source.respond(userId: userId, context: clientContext, condition: condition, form: form)
    }

    /// The decision for this user and context, exact (see `DecisionSource.currentAnswer`).
    func currentAnswer(userId: String, context: ClientContext) throws(Problem) -> DecisionCache.Fresh {
        try source.currentAnswer(userId: userId, context: context)
    }

    /// `full` in the form the request asked for (`DecisionContext.answer(_:as:)`).
    func answer(_ full: DecisionCache.Answer, as form: DecisionForm) -> DecisionCache.Answer { context.answer(full, as: form) }
}

/// What a decision source is handed at start (a value, so that a source never calls back into the
/// engine that holds it): the cache and its freshness rules, the catalog, and the policy over a state
/// at the service's clock, with the answers it computes interned, cached and shaped.
struct DecisionContext: Sendable {
    /// Decision answers per user; when one may be served is `freshness`'s.
    let cache: DecisionCache
    /// The catalog snapshot, held directly: the cached decision reads its version on every request.
    let snapshot: CatalogSnapshot
    /// The catalog's keeper: on a shared database, reloads when a round trip saw another version.
    let catalog: CatalogKeeper
    /// The service's clock (the policy has none); tests pass a fixed or stepped one.
    let clock: @Sendable () -> Timestamp
    let databaseErrors: DatabaseErrors
    let replicaCounters: ReplicaCounters
    /// Exposures submitted off the decision's path, through the user writes.
    private let experimentRecorder: ExperimentRecorder
    private let writes: UserStateWrites
    /// The minimal answers (`Prefer: return=minimal`) of the full ones asked for that way.
    private let minimalAnswers = GenerationalCache<Int, MinimalAnswer>(generationCapacity: 64, shardCount: 16)

    init(
        cache: DecisionCache, snapshot: CatalogSnapshot, catalog: CatalogKeeper, clock: @escaping @Sendable () -> Timestamp,
        databaseErrors: DatabaseErrors, replicaCounters: ReplicaCounters, experimentRecorder: ExperimentRecorder, writes: UserStateWrites
    ) {
        self.cache = cache
        self.snapshot = snapshot
        self.catalog = catalog
        self.clock = clock
        self.databaseErrors = databaseErrors
        self.replicaCounters = replicaCounters
        self.experimentRecorder = experimentRecorder
        self.writes = writes
    }

    /// The rules of serving and storing cached answers.
    var freshness: DecisionFreshness { cache.freshness }

    /// The decision's JSON for this catalog, state and context at the service's clock, with its next
    /// time boundary (both store paths compute it here).
    /// A catalog without experiments takes no experiment work at all (no assigner, no hashing).
    func decide(userId: String, catalog: Catalog, state: UserState, context: ClientContext) -> (body: [UInt8], validUntil: Timestamp?) {
        let now = clock()
        guard catalog.hasExperiments else {
            let decision = SheetPolicy.decide(catalog: catalog, state: state, context: context, now: now)
            return (decision.jsonBytes(), decision.validUntil)
        }
        let assigner = ExperimentAssigner(userId: userId, hashPrefix: { SHA256.bigEndianPrefix(of: $0) })
        let decision = SheetPolicy.decide(catalog: catalog, state: state, context: context, now: now, experiments: assigner)
        if !decision.exposures.isEmpty { experimentRecorder.expose(userId: userId, decision.exposures, at: now, writes: writes) }
        return (decision.jsonBytes(), decision.validUntil)
    }

    /// Decides over `state` (read on `basis`, with the catalog at `catalogVersion`), interns and caches
    /// the answer (until its time boundary) and returns it.
    func decideAndRemember(
        userId: String, basis: ReadBasis, context: ClientContext, catalog: Catalog, catalogVersion: Int, state: UserState
    ) -> DecisionCache.Fresh {
        let decision = decide(userId: userId, catalog: catalog, state: state, context: context)
        let answer = cache.answer(userId: userId, body: decision.body, etag: Self.entityTag)
        cache.insert(
            userId: userId, basis: basis, context: context, catalogVersion: catalogVersion, answer: answer, validUntil: decision.validUntil)
        return DecisionCache.Fresh(answer: answer, validUntil: decision.validUntil)
    }

    /// Strong validator over the exact bytes: an event that leaves the decision unchanged leaves the tag.
    /// The first 16 bytes of the body's SHA-256, in hex, quoted.
    static func entityTag(_ body: [UInt8]) -> String { SHA256.quotedHexPrefix(of: body, length: 16) }

    /// `full` in the form the request asked for: itself, or its minimal answer (without `sheet` and
    /// `trace`, with a tag of its own), derived once per full answer and kept beside the cache (never
    /// in it: the cache holds full answers only, so neither form is served for the other).
    func answer(_ full: DecisionCache.Answer, as form: DecisionForm) -> DecisionCache.Answer {
        guard case .minimal = form else { return full }
        let key = ObjectIdentifier(full).hashValue
        if let kept = minimalAnswers.value(for: key, hash: key), kept.full === full { return kept.minimal }
        let body = Decision.minimalBody(fromFull: full.body)
        let minimal = DecisionCache.Answer(body: body, etag: Self.entityTag(body))
        minimalAnswers.insert(MinimalAnswer(full: full, minimal: minimal), for: key, hash: key)
        return minimal
    }
}

/// A full answer and its minimal form.
private struct MinimalAnswer: Sendable {
    let full: DecisionCache.Answer
    let minimal: DecisionCache.Answer
}

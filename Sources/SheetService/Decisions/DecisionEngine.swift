import Concurrency
import Crypto
import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire

/// Exact decision answers: computed by the policy over the stored state and the catalog at the
/// service's clock, cached per user (`DecisionCache`), proven current by the service's
/// `DecisionSource`. What the decision route, long-polls and streams share.
final class DecisionEngine: Sendable {
    /// Decision answers per user; when one may be served is `decisions.freshness`'s (`DecisionFreshness`).
    let decisions: DecisionCache
    let catalog: CatalogKeeper
    /// `catalog.snapshot`, held here: the cached decision reads its version on every request.
    let snapshot: CatalogSnapshot
    /// Where the decision route gets exact answers, chosen at start (`LocalDecisions`, or
    /// `ReplicatedDecisions` on a shared database).
    let source: any DecisionSource
    /// The service's clock (the policy has none); tests pass a fixed or stepped one.
    let clock: @Sendable () -> Timestamp
    private let store: any UserStateStore
    /// Exposures submitted off the decision's path.
    private let experimentRecorder: ExperimentRecorder
    let databaseErrors: DatabaseErrors
    let replicaCounters: ReplicaCounters
    /// The minimal answers (`Prefer: return=minimal`) of the full ones asked for that way.
    private let minimalAnswers = GenerationalCache<Int, MinimalAnswer>(generationCapacity: 64, shardCount: 16)

    init(
        decisions: DecisionCache, catalog: CatalogKeeper, source: any DecisionSource, clock: @escaping @Sendable () -> Timestamp,
        store: any UserStateStore, experimentRecorder: ExperimentRecorder, databaseErrors: DatabaseErrors, replicaCounters: ReplicaCounters
    ) {
        self.decisions = decisions
        self.catalog = catalog
        self.snapshot = catalog.snapshot
        self.source = source
        self.clock = clock
        self.store = store
        self.experimentRecorder = experimentRecorder
        self.databaseErrors = databaseErrors
        self.replicaCounters = replicaCounters
    }

    /// The decision for this user and context, exact (see `DecisionSource.currentAnswer`).
    func currentAnswer(userId: String, context: ClientContext) throws(Problem) -> DecisionCache.Fresh {
        try source.currentAnswer(userId: userId, context: context, in: self)
    }

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
        if !decision.exposures.isEmpty { experimentRecorder.expose(userId: userId, decision.exposures, at: now, store: store) }
        return (decision.jsonBytes(), decision.validUntil)
    }

    /// Interns and caches a computed decision (until its time boundary) and returns it.
    func remember(
        userId: String, context: ClientContext, catalogVersion: Int, epoch: Int, storeVersion: Int64?,
        decision: (body: [UInt8], validUntil: Timestamp?)
    ) -> DecisionCache.Fresh {
        let answer = decisions.answer(userId: userId, body: decision.body, etag: Self.entityTag)
        decisions.insert(
            userId: userId, context: context, catalogVersion: catalogVersion, epoch: epoch, storeVersion: storeVersion,
            answer: answer, validUntil: decision.validUntil)
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

import MicroHTTP
import SheetPolicy
import SheetStore

/// Where the decision route gets exact answers: chosen once, at start, from what the store can do
/// (`SheetStore.replicaCoordination`), and held by the service. The route has one code path, a call
/// to its source; which proof of exactness applies (`DecisionFreshness`, invariant 5) is the source's.
///
/// - `LocalDecisions`: a store only this process writes (SQLite). Cached answers are exact by epochs alone.
/// - `ReplicatedDecisions`: a database other replicas write too (PostgreSQL). A cached answer is
///   proven by the listener's barrier, anything else is read with its version in a batched round trip.
///
/// A source is a strategy over the decision engine (its cache, catalog and policy), which it is
/// handed on each call: it holds only what is its own (the store capability it reads, its batcher).
protocol DecisionSource: Sendable {
    /// The answer to a decision GET (no `Prefer: wait`) in the asked `form`: 200, or 304 when
    /// `condition` (If-None-Match) matches; answered now or deferred until proven exact.
    func respond(
        userId: String, context: ClientContext, condition: String?, form: DecisionForm, in engine: DecisionEngine
    ) throws(Problem) -> HTTPResponse

    /// The current answer, on the calling thread (long-polls, streams, `Prefer: wait`): from the cache
    /// when it is exact, else computed from the stored state at the service's clock (and cached).
    func currentAnswer(userId: String, context: ClientContext, in engine: DecisionEngine) throws(Problem) -> DecisionCache.Fresh
}

/// Decisions over a store only this process writes: a cached answer whose epoch is current is exact
/// (`DecisionFreshness` 1 to 3), anything else is read and decided on the request's thread.
final class LocalDecisions: DecisionSource {
    private let store: any UserStateStore

    init(store: any UserStateStore) {
        self.store = store
    }

    func respond(
        userId: String, context: ClientContext, condition: String?, form: DecisionForm, in engine: DecisionEngine
    ) throws(Problem) -> HTTPResponse {
        let answer = try currentAnswer(userId: userId, context: context, in: engine).answer
        return DecisionResponse.answering(engine.answer(answer, as: form), form: form, condition: condition)
    }

    func currentAnswer(userId: String, context: ClientContext, in engine: DecisionEngine) throws(Problem) -> DecisionCache.Fresh {
        let decisions = engine.decisions
        let snapshot = engine.snapshot
        if let cached = decisions.lookup(userId: userId, context: context, catalogVersion: snapshot.currentVersion, now: engine.clock) {
            return cached
        }
        let (catalog, catalogVersion) = snapshot.currentWithVersion
        let epoch = decisions.freshness.epoch(of: userId)  // before the state is read
        let state = try engine.databaseErrors.guarding { () throws(StoreError) in try store.userState(userId: userId) }
        return engine.remember(
            userId: userId, context: context, catalogVersion: catalogVersion, epoch: epoch, storeVersion: nil,
            decision: engine.decide(userId: userId, catalog: catalog, state: state, context: context))
    }
}

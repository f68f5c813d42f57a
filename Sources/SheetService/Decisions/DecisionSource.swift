import MicroHTTP
import SheetPolicy
import SheetStore

/// Where the decision route gets exact answers: chosen once, at start, from what the store can do
/// (`SheetStore.replicaCoordination`), and held by the service's `DecisionEngine`. The route has one
/// code path, a call to its source; which proof of exactness applies (`DecisionFreshness`, invariant
/// 5) is the source's.
///
/// - `LocalDecisions`: a store only this process writes (SQLite). Cached answers are exact by epochs alone.
/// - `ReplicatedDecisions`: a database other replicas write too (PostgreSQL). A cached answer is
///   proven by the listener's barrier, anything else is read with its version in a batched round trip.
///
/// A source is a strategy over a `DecisionContext` (the cache, the catalog, the policy), handed to it
/// at start; it never calls back into the engine. Every state it reads is read on a `ReadBasis`
/// taken first (`DecisionFreshness.beginRead`), the only thing the cache stores an answer on.
protocol DecisionSource: Sendable {
    /// The answer to a decision GET (no `Prefer: wait`) in the asked `form`: 200, or 304 when
    /// `condition` (If-None-Match) matches; answered now or deferred until proven exact.
    func respond(userId: String, context: ClientContext, condition: String?, form: DecisionForm) throws(Problem) -> HTTPResponse

    /// The current answer, on the calling thread (long-polls, streams, `Prefer: wait`): from the cache
    /// when it is exact, else computed from the stored state at the service's clock (and cached).
    func currentAnswer(userId: String, context: ClientContext) throws(Problem) -> DecisionCache.Fresh
}

/// Decisions over a store only this process writes: a cached answer whose epoch is current is exact
/// (`DecisionFreshness` 1 to 3), anything else is read and decided on the request's thread.
final class LocalDecisions: DecisionSource {
    private let store: any UserStateStore
    private let decisions: DecisionContext

    init(store: any UserStateStore, context: DecisionContext) {
        self.store = store
        self.decisions = context
    }

    func respond(userId: String, context: ClientContext, condition: String?, form: DecisionForm) throws(Problem) -> HTTPResponse {
        let answer = try currentAnswer(userId: userId, context: context).answer
        return DecisionResponse.answering(decisions.answer(answer, as: form), form: form, condition: condition)
    }

    func currentAnswer(userId: String, context: ClientContext) throws(Problem) -> DecisionCache.Fresh {
        let request = ServingRequest(catalogVersion: decisions.snapshot.currentVersion, proof: .local)
        if let cached = decisions.cache.lookup(userId: userId, context: context, request: request, now: decisions.clock) {
            return cached
        }
        let (catalog, catalogVersion) = decisions.snapshot.currentWithVersion
        let basis = decisions.freshness.beginRead(userId)
        let state = try decisions.databaseErrors.guarding { () throws(StoreError) in try store.userState(userId: userId) }
        return decisions.decideAndRemember(
            userId: userId, basis: basis, context: context, catalog: catalog, catalogVersion: catalogVersion, state: state)
    }
}

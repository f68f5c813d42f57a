import Concurrency
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// Decisions over a database other replicas write too (PostgreSQL).
///
/// The route (`respond`): a cached answer is taken as a candidate when the request arrives and served
/// once the listener's barrier proves it (`DecisionFreshness.confirm`: one round trip on the listening
/// session shared by every request waiting, no per-user read). Without a usable cached answer, when
/// the proof fails, or without a listener, the state is read with its version and the catalog's in
/// one batched statement (`VersionBatcher`) and decided on a decision thread.
/// Long-polls and streams (`currentAnswer`): one round trip that reads the versions, and the state
/// only when the cached answer's version is not current (`ReplicaCoordination.userState(userId:unlessUserVersion:)`).
final class ReplicatedDecisions: DecisionSource {
    private let coordination: any ReplicaCoordination
    private let decisions: DecisionContext
    /// One round trip reads the states of every waiting decision not answered from the cache.
    let versionBatcher: VersionBatcher
    /// Where decisions are computed from the states the batched read brought: one thread per core
    /// (at least two).
    private let decisionThreads = WorkerThreads(count: max(2, WorkerThreads.onlineCores), name: "decisions")

    init(coordination: any ReplicaCoordination, context: DecisionContext) {
        self.coordination = coordination
        self.decisions = context
        self.versionBatcher = VersionBatcher(coordination: coordination)
    }

    func respond(userId: String, context: ClientContext, condition: String?, form: DecisionForm) throws(Problem) -> HTTPResponse {
        let decisions = self.decisions
        guard
            let candidate = decisions.cache.candidate(
                userId: userId, context: context, catalogVersion: decisions.snapshot.currentVersion, now: decisions.clock)
        else {
            let basis = decisions.freshness.beginRead(userId)
            return .deferred { [self] promise in
                versionChecked(userId: userId, context: context, condition: condition, form: form, basis: basis, promise: promise)
            }
        }
        return .deferred { [self] promise in
            decisions.freshness.confirm(candidate, now: decisions.clock) { [self] exact in
                decisions.cache.countProof(candidate, exact: exact)
                if exact {
                    decisions.replicaCounters.barrierHits.add(1, ordering: .relaxed)
                    return promise.succeed(
                        DecisionResponse.answering(decisions.answer(candidate.fresh.answer, as: form), form: form, condition: condition))
                }
                let basis = decisions.freshness.beginRead(userId)
                versionChecked(userId: userId, context: context, condition: condition, form: form, basis: basis, promise: promise)
            }
        }
    }

    /// The decision computed, on a decision thread, from the state read in one batched round trip
    /// (the versions and the state of every request waiting, one statement) on `basis`.
    private func versionChecked(
        userId: String, context: ClientContext, condition: String?, form: DecisionForm, basis: ReadBasis, promise: ResponsePromise
    ) {
        let decisions = self.decisions
        versionBatcher.read(userId) { [decisionThreads] result in
            switch result {
            case .success(let read):
                decisionThreads.run {
                    promise.complete { () throws(Problem) in
                        try decisions.catalog.refresh(seen: read.versions.catalog)
                        let (catalog, catalogVersion) = decisions.snapshot.currentWithVersion
                        let fresh = decisions.decideAndRemember(
                            userId: userId, basis: basis.read(atStoreVersion: read.versions.user), context: context, catalog: catalog,
                            catalogVersion: catalogVersion, state: read.state)
                        return DecisionResponse.answering(decisions.answer(fresh.answer, as: form), form: form, condition: condition)
                    }
                }
            case .failure(let error):
                decisions.databaseErrors.record()
                promise.fail(Problems.storage(error))
            }
        }
    }

    /// One round trip, the state only on a cache miss.
    func currentAnswer(userId: String, context: ClientContext) throws(Problem) -> DecisionCache.Fresh {
        var known = decisions.cache.storeVersion(userId: userId, context: context, catalogVersion: decisions.snapshot.currentVersion)
        while true {
            let basis = decisions.freshness.beginRead(userId)
            let (versions, state) = try decisions.databaseErrors.guarding { () throws(StoreError) in
                try coordination.userState(userId: userId, unlessUserVersion: known)
            }
            try decisions.catalog.refresh(seen: versions.catalog)
            let (catalog, catalogVersion) = decisions.snapshot.currentWithVersion
            let request = ServingRequest(catalogVersion: catalogVersion, proof: .versionRead(versions.user))
            if let cached = decisions.cache.lookup(userId: userId, context: context, request: request, now: decisions.clock) {
                return cached
            }
            // The entry named by `known` went meanwhile (or the catalog was reloaded): read the state.
            guard let state else {
                known = nil
                continue
            }
            return decisions.decideAndRemember(
                userId: userId, basis: basis.read(atStoreVersion: versions.user), context: context, catalog: catalog,
                catalogVersion: catalogVersion, state: state)
        }
    }
}

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
    /// One round trip reads the states of every waiting decision not answered from the cache.
    let versionBatcher: VersionBatcher
    /// Where decisions are computed from the states the batched read brought: one thread per core
    /// (at least two).
    private let decisionThreads = WorkerThreads(count: max(2, WorkerThreads.onlineCores), name: "decisions")

    init(coordination: any ReplicaCoordination) {
        self.coordination = coordination
        self.versionBatcher = VersionBatcher(coordination: coordination)
    }

    func respond(
        userId: String, context: ClientContext, condition: String?, form: DecisionForm, in engine: DecisionEngine
    ) throws(Problem) -> HTTPResponse {
        let decisions = engine.decisions
        guard
            let candidate = decisions.candidate(
                userId: userId, context: context, catalogVersion: engine.snapshot.currentVersion, now: engine.clock)
        else {
            let epoch = decisions.freshness.epoch(of: userId)  // before the state is read
            return .deferred { [self] promise in
                versionChecked(userId: userId, context: context, condition: condition, form: form, epoch: epoch, engine: engine, promise: promise)
            }
        }
        return .deferred { [self] promise in
            decisions.freshness.confirm(candidate, now: engine.clock) { [self] exact in
                decisions.countProof(candidate, exact: exact)
                if exact {
                    engine.replicaCounters.barrierHits.add(1, ordering: .relaxed)
                    return promise.succeed(
                        DecisionResponse.answering(engine.answer(candidate.fresh.answer, as: form), form: form, condition: condition))
                }
                let epoch = decisions.freshness.epoch(of: userId)  // before the state is read
                versionChecked(userId: userId, context: context, condition: condition, form: form, epoch: epoch, engine: engine, promise: promise)
            }
        }
    }

    /// The decision computed, on a decision thread, from the state read in one batched round trip
    /// (the versions and the state of every request waiting, one statement).
    private func versionChecked(
        userId: String, context: ClientContext, condition: String?, form: DecisionForm, epoch: Int, engine: DecisionEngine,
        promise: ResponsePromise
    ) {
        versionBatcher.read(userId) { [decisionThreads] result in
            switch result {
            case .success(let read):
                decisionThreads.run {
                    promise.complete { () throws(Problem) in
                        try engine.catalog.refresh(seen: read.versions.catalog)
                        let (catalog, catalogVersion) = engine.snapshot.currentWithVersion
                        let fresh = engine.remember(
                            userId: userId, context: context, catalogVersion: catalogVersion, epoch: epoch, storeVersion: read.versions.user,
                            decision: engine.decide(userId: userId, catalog: catalog, state: read.state, context: context))
                        return DecisionResponse.answering(engine.answer(fresh.answer, as: form), form: form, condition: condition)
                    }
                }
            case .failure(let error):
                engine.databaseErrors.record()
                promise.fail(Problems.storage(error))
            }
        }
    }

    /// One round trip, the state only on a cache miss.
    func currentAnswer(userId: String, context: ClientContext, in engine: DecisionEngine) throws(Problem) -> DecisionCache.Fresh {
        let decisions = engine.decisions
        var known = decisions.storeVersion(userId: userId, context: context, catalogVersion: engine.snapshot.currentVersion)
        while true {
            let epoch = decisions.freshness.epoch(of: userId)  // before the state is read
            let (versions, state) = try engine.databaseErrors.guarding { () throws(StoreError) in
                try coordination.userState(userId: userId, unlessUserVersion: known)
            }
            try engine.catalog.refresh(seen: versions.catalog)
            let (catalog, catalogVersion) = engine.snapshot.currentWithVersion
            if let cached = decisions.lookup(
                userId: userId, context: context, catalogVersion: catalogVersion, storeVersion: versions.user, now: engine.clock)
            {
                return cached
            }
            // The entry named by `known` went meanwhile (or the catalog was reloaded): read the state.
            guard let state else {
                known = nil
                continue
            }
            return engine.remember(
                userId: userId, context: context, catalogVersion: catalogVersion, epoch: epoch, storeVersion: versions.user,
                decision: engine.decide(userId: userId, catalog: catalog, state: state, context: context))
        }
    }
}

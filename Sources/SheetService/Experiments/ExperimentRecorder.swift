import SheetPolicy
import SheetStore
import Synchronization

/// Exposures off the decision's path: a decision that exposes a user hands them here; those this
/// process has not seen yet go to the writer asynchronously (the GET does not wait), where the
/// user's state and `experiment_exposures` take them once (insert-or-ignore, under the user's lock
/// on every backend and replica). Plus the per-experiment counters of /metrics.
final class ExperimentRecorder: Sendable {
    /// "experimentId\0userId" pairs submitted by this process. Bounded: past the limit it starts over
    /// (the store still ignores a second exposure, so forgetting costs one write, never a double count).
    private let submitted = Mutex<Set<String>>([])
    static let rememberedPairs = 1_000_000

    private struct Counts {
        var exposures: [String: Int] = [:]
        var conversions: [String: Int] = [:]
        var unattributed = 0
    }
    private let counts = Mutex<[String: Counts]>([:])

    /// Queues the exposures of one decision made at `now` (those not submitted by this process yet).
    /// A write no decision reads: through `UserStateWrites.submitUnreadByDecisions` (no epoch bump).
    func expose(userId: String, _ exposures: [ExperimentExposure], at now: Timestamp, writes: UserStateWrites) {
        let fresh = submitted.withLock { seen in
            if seen.count >= Self.rememberedPairs { seen.removeAll(keepingCapacity: true) }
            return exposures.filter { seen.insert($0.experimentId + "\u{0}" + userId).inserted }
        }
        guard !fresh.isEmpty else { return }
        let emitted = ActivityBox()
        writes.submitUnreadByDecisions(
            userId: userId,
            { (state: inout UserState, activity: inout [SheetActivity]) in
                for exposure in fresh where state.experiments.exposures[exposure.experimentId] == nil {
                    state.experiments.exposures[exposure.experimentId] = ExperimentState.Exposure(arm: exposure.arm, at: now)
                    activity.append(
                        SheetActivity(sheetId: exposure.sheetId, kind: .exposure, at: now, experimentId: exposure.experimentId, arm: exposure.arm))
                }
                emitted.records.withLock { $0 = activity }
                return []
            },
            completion: { [self] result in
                switch result {
                case .success: add(emitted.records.withLock { $0 })
                case .failure:
                    // Not stored: a later decision submits it again.
                    submitted.withLock { seen in for e in fresh { seen.remove(e.experimentId + "\u{0}" + userId) } }
                }
            })
    }

    /// Counts the committed experiment facts of one update (exposures and conversions).
    func add(_ activity: [SheetActivity]) {
        guard activity.contains(where: { $0.kind == .exposure || $0.kind == .conversion }) else { return }
        counts.withLock { counts in
            for record in activity {
                guard let experimentId = record.experimentId else { continue }
                switch record.kind {
                case .exposure: counts[experimentId, default: Counts()].exposures[record.arm ?? "", default: 0] += 1
                case .conversion:
                    if let arm = record.arm {
                        counts[experimentId, default: Counts()].conversions[arm, default: 0] += 1
                    } else {
                        counts[experimentId, default: Counts()].unattributed += 1
                    }
                default: break
                }
            }
        }
    }

    /// The metric families, for the experiments of `catalog` (and their arms) only.
    func render(catalog: Catalog) -> String {
        let snapshot = counts.withLock { $0 }
        var exposures = """
            # HELP sheetd_experiment_exposures_total Users exposed per experiment and arm (by this process, since it started).
            # TYPE sheetd_experiment_exposures_total counter

            """
        var conversions = """
            # HELP sheetd_experiment_conversions_total Conversions counted for an arm per experiment (since the process started).
            # TYPE sheetd_experiment_conversions_total counter

            """
        var unattributed = """
            # HELP sheetd_experiment_unattributed_conversions_total Conversions outside any exposure's window (since the process started).
            # TYPE sheetd_experiment_unattributed_conversions_total counter

            """
        guard catalog.hasExperiments else { return exposures + conversions + unattributed }
        for sheet in catalog.sortedByID {
            guard let experiment = sheet.experiment else { continue }
            let c = snapshot[experiment.id] ?? Counts()
            // Experiment and arm ids are identifiers (letters, digits, ._:@-): nothing to escape in a label value.
            for arm in experiment.arms {
                exposures += "sheetd_experiment_exposures_total{experiment=\"\(experiment.id)\",arm=\"\(arm.id)\"} \(c.exposures[arm.id] ?? 0)\n"
                conversions +=
                    "sheetd_experiment_conversions_total{experiment=\"\(experiment.id)\",arm=\"\(arm.id)\"} \(c.conversions[arm.id] ?? 0)\n"
            }
            unattributed += "sheetd_experiment_unattributed_conversions_total{experiment=\"\(experiment.id)\"} \(c.unattributed)\n"
        }
        return exposures + conversions + unattributed
    }
}

/// What an update's body emitted, read after its commit (the body runs once, on the writer).
final class ActivityBox: Sendable {
    let records = Mutex<[SheetActivity]>([])
}

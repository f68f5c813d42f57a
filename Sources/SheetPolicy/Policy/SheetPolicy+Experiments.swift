/// Experiments in a decision: which arm the user is in for each sheet the decision looks at, what
/// the arm changes, and who is exposed. Only built when the catalog has an experiment.
struct ExperimentArms {
    let assigner: ExperimentAssigner
    let pins: [String: String]
    /// Sheet id → the user's arm (sheets looked at so far).
    private(set) var assignments: [String: ArmAssignment] = [:]
    /// Sheet id → the definition with the arm's overrides applied.
    private(set) var resolved: [String: SheetDefinition] = [:]
    private(set) var exposures: [ExperimentExposure] = []

    init(assigner: ExperimentAssigner, pins: [String: String]) {
        self.assigner = assigner
        self.pins = pins
    }

    /// The sheet as the user's arm has it and whether the user is held out; nil when the experiment
    /// assigns nothing (stopped without a winner: the sheet as defined). Traced once per sheet.
    mutating func resolve(_ sheet: SheetDefinition, trace: inout [String]) -> (SheetDefinition, Bool)? {
        guard let experiment = sheet.experiment else { return nil }
        if let known = assignments[sheet.id] { return (resolved[sheet.id] ?? sheet, known.holdsOut) }
        if resolved[sheet.id] != nil { return nil }
        resolved[sheet.id] = sheet
        guard let assignment = experiment.assignment(for: assigner, pins: pins) else {
            trace.append("experiment: '\(sheet.id)' in '\(experiment.id)': stopped without a winner, presented as defined")
            return nil
        }
        assignments[sheet.id] = assignment
        let definition = assignment.arm.definition ?? sheet
        resolved[sheet.id] = definition
        let why: String
        switch assignment.source {
        case .bucket:
            // Not the user's bucket itself: users in the same state and arm must get the same bytes
            // (one interned answer). The bucket follows from the documented formula.
            let bounds = experiment.upperBuckets.map(String.init).joined(separator: ", ")
            why = "assigned by bucket, SHA-256 of '\(experiment.id):<userId>' mod 10000 (the arms end below \(bounds))"
        case .pinned: why = "pinned for QA (not exposed, not counted)"
        case .winner: why = "the winner of the stopped experiment, for every user"
        }
        trace.append(
            "experiment: '\(sheet.id)' in '\(experiment.id)': arm '\(assignment.arm.id)', \(why)"
                + (assignment.holdsOut ? "; the holdout is not shown the sheet" : ""))
        return (definition, assignment.holdsOut)
    }

    /// Notes the exposure of a presented (or, for the holdout, would-be presented) sheet: once per
    /// experiment, and only for bucket assignments.
    mutating func expose(sheetId: String, _ assignment: ArmAssignment) {
        guard assignment.exposes, !exposures.contains(where: { $0.experimentId == assignment.experimentId }) else { return }
        exposures.append(ExperimentExposure(experimentId: assignment.experimentId, sheetId: sheetId, arm: assignment.arm.id))
    }

    /// The holdout sheet that would have been presented.
    mutating func exposeHoldout(_ sheet: SheetDefinition) {
        if let assignment = assignments[sheet.id] { expose(sheetId: sheet.id, assignment) }
    }
}

extension SheetPolicy {
    /// Cuts the stack at its first sheet whose experiment holds the user out (that sheet and those
    /// above it are not shown; it is listed in `held`). A stack left holding only a card sheet is
    /// dropped, as `liveStack` does.
    static func cutAtHoldout(
        _ stack: inout [StackEntry], catalog: Catalog, context: ClientContext, arms: inout ExperimentArms, held: inout [HeldSheet],
        trace: inout [String]
    ) {
        guard !stack.isEmpty else { return }
        let rootOwned = catalog[stack[0].sheetId]?.isOwned(by: context) == true
        for (index, entry) in stack.enumerated() {
            guard let sheet = catalog[entry.sheetId], sheet.experiment != nil, let (_, holdsOut) = arms.resolve(sheet, trace: &trace), holdsOut
            else { continue }
            held.append(HeldSheet(sheetId: sheet.id, reason: .holdout))
            // It would have been presented (in the stack shown on this screen): the holdout is exposed.
            if rootOwned, let assignment = arms.assignments[sheet.id] { arms.expose(sheetId: sheet.id, assignment) }
            trace.append("experiment: stack cut below '\(sheet.id)', the user is in its holdout")
            stack.removeSubrange(index...)
            if stack.count == 1, let root = catalog[stack[0].sheetId], root.isCardSheet {
                trace.append("stack: dropped, it holds only card sheet '\(root.id)' (the card rules present it)")
                stack = []
            }
            return
        }
    }

    /// `held` in byte order of id, each sheet once (a holdout stack entry may also be a card sheet).
    static func sortedHeld(_ held: [HeldSheet], _ arms: ExperimentArms?) -> [HeldSheet] {
        guard arms != nil, held.count > 1 else { return held }
        var seen: [String] = []
        var out: [HeldSheet] = []
        for sheet in held.sorted(by: { $0.sheetId.utf8.lexicographicallyPrecedes($1.sheetId.utf8) }) where !seen.contains(sheet.sheetId) {
            seen.append(sheet.sheetId)
            out.append(sheet)
        }
        return out
    }

    /// Conversions one user may count per experiment by default (`SHEETD_EXPERIMENT_CONVERSION_CAP`).
    public static let defaultConversionCapPerUser = 10

    /// What a conversion counted for.
    public struct ConversionAttribution: Sendable, Equatable {
        /// Counted in the results (for `arm`, or unattributed when `arm` is nil).
        public var counted: Bool
        public var arm: String?
        /// Not counted because the user reached the per-user cap.
        public var capped: Bool
        /// Nothing counted (no experiment on the sheet).
        public static let none = ConversionAttribution(counted: false, arm: nil, capped: false)
    }

    /// Folds a conversion into the user's experiment facts: counted for the arm the user was exposed
    /// to, within the window and only when the experiment still has that arm; else unattributed (no
    /// exposure, outside the window, an arm the experiment no longer has). Pinned users' conversions
    /// count nowhere; nor do a user's conversions beyond `capPerUser` for the experiment (so one user
    /// cannot inflate an arm or the unattributed count). Counted conversions are noted in `state`.
    public static func recordConversion(
        in experiment: Experiment, state: inout UserState, at: Timestamp, capPerUser: Int
    ) -> ConversionAttribution {
        if state.experiments.pins[experiment.id] != nil { return .none }
        let counted = state.experiments.conversions[experiment.id] ?? 0
        guard counted < capPerUser else { return ConversionAttribution(counted: false, arm: nil, capped: true) }
        state.experiments.conversions[experiment.id] = counted + 1
        guard let exposure = state.experiments.exposures[experiment.id], experiment.isWithinWindow(at, exposedAt: exposure.at),
            experiment.arm(exposure.arm) != nil
        else {
            return ConversionAttribution(counted: true, arm: nil, capped: false)
        }
        return ConversionAttribution(counted: true, arm: exposure.arm, capped: false)
    }
}

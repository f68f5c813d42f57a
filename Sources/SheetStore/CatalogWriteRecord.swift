public import SheetPolicy

/// What a catalog write records in its own transaction, so that no change can be stored without it:
/// the revision (who, why, how many are kept) and the identities of the experiments the changed
/// sheets carry (checked against those already bound, `ExperimentIdentitySQL`).
public struct CatalogWriteRecord: Sendable, Equatable {
    public var author: RevisionAuthor
    /// Revisions kept; the oldest beyond go in the same transaction.
    public var keep: Int
    /// Bytes of sheet definitions the history keeps; the oldest revisions beyond go in the same transaction.
    public var historyBytes: Int64
    /// The experiments of the sheets as the write leaves them.
    public var experiments: [ExperimentIdentity]

    public init(
        author: RevisionAuthor, keep: Int, historyBytes: Int64 = CatalogRevision.defaultHistoryBytes, experiments: [ExperimentIdentity] = []
    ) {
        self.author = author; self.keep = keep; self.historyBytes = historyBytes; self.experiments = experiments
    }

    /// What the history may hold after this write.
    public var budget: CatalogHistorySQL.Budget { CatalogHistorySQL.Budget(revisions: keep, bytes: historyBytes) }
}

/// An experiment as it assigns users: its sheet and its arms (ids, weights, holdout, in order).
/// Once the experiment has exposed a user, or was stopped, its id keeps this identity for good.
public struct ExperimentIdentity: Sendable, Equatable {
    public var experimentId: String
    public var sheetId: String
    /// The arms in a canonical text form (`id:weight[:holdout]`, comma-separated, in order).
    public var arms: String
    public var stopped: Bool

    public init(experimentId: String, sheetId: String, arms: String, stopped: Bool) {
        self.experimentId = experimentId; self.sheetId = sheetId; self.arms = arms; self.stopped = stopped
    }

    /// The identity of `definition`'s experiment; nil when it has none.
    public init?(_ definition: SheetDefinition) {
        guard let experiment = definition.experiment else { return nil }
        self.init(
            experimentId: experiment.id, sheetId: definition.id,
            arms: experiment.arms.map { "\($0.id):\($0.weight)" + ($0.holdout ? ":holdout" : "") }.joined(separator: ","),
            stopped: experiment.status == .stopped)
    }

    /// The identities of the experiments among `definitions`.
    public static func of(_ definitions: some Sequence<SheetDefinition>) -> [ExperimentIdentity] {
        definitions.compactMap(ExperimentIdentity.init)
    }
}

/// Experiment identities (`migrations/0010_experiment_identities.sql`), written once for both backends.
public enum ExperimentIdentitySQL {
    /// In a catalog write's transaction: refuses (`StoreError.conflict`, naming the experiment) any
    /// identity that differs from the one its id is bound to, when that experiment has an exposure or
    /// was stopped; otherwise records the identity (a stop is kept for good).
    public static func enforce(_ identities: [ExperimentIdentity], _ db: some SQLSession) throws {
        for identity in identities {
            let id = ExperimentSQL.Write.Argument.text(identity.experimentId)
            if let bound = try db.rows("SELECT sheet_id, arms, stopped FROM experiment_identities WHERE experiment_id = $1", [id]).first,
                bound[0] != identity.sheetId || bound[1] != identity.arms
            {
                let stopped = bound[2] == "1"
                let exposed = try !db.rows("SELECT 1 FROM experiment_exposures WHERE experiment_id = $1 LIMIT 1", [id]).isEmpty
                if exposed || stopped {
                    let what =
                        bound[0] != identity.sheetId
                        ? "belongs to sheet '\(bound[0] ?? "")'" : "assigns users with arms \(bound[1] ?? "") (not \(identity.arms))"
                    throw StoreError.conflict(
                        "experiment '\(identity.experimentId)' \(what) since \(exposed ? "its first exposure" : "it was stopped"): "
                            + "its id, arms, weights and holdout cannot change, or users already counted would be reassigned; "
                            + "start a new experiment id")
                }
            }
            try record(identity, onlyIfMissing: false, db)
        }
    }

    /// Records identities not bound yet (the catalog a server starts with, so experiments that ran
    /// before identities were kept are bound from then on).
    public static func adopt(_ identities: [ExperimentIdentity], _ db: some SQLSession) throws {
        for identity in identities { try record(identity, onlyIfMissing: true, db) }
    }

    private static func record(_ identity: ExperimentIdentity, onlyIfMissing: Bool, _ db: some SQLSession) throws {
        _ = try db.rows(
            """
            INSERT INTO experiment_identities (experiment_id, sheet_id, arms, stopped) VALUES ($1, $2, $3, $4)
            ON CONFLICT (experiment_id) DO
            """
                + (onlyIfMissing
                    ? " NOTHING"
                    : """
                     UPDATE SET sheet_id = excluded.sheet_id, arms = excluded.arms,
                        stopped = CASE WHEN experiment_identities.stopped = 1 THEN 1 ELSE excluded.stopped END
                    """),
            [.text(identity.experimentId), .text(identity.sheetId), .text(identity.arms), .integer(identity.stopped ? 1 : 0)])
    }
}

import SheetPolicy

/// The statements behind experiment facts and results, shared by both backends (`$n` placeholders,
/// see `SQLDialect`).
public enum ExperimentSQL {
    /// One statement to run in an update's transaction: its text (`$n` placeholders) and arguments.
    public struct Write: Sendable, Equatable {
        public typealias Argument = SQLValue
        public var sql: String
        public var arguments: [Argument]
    }

    static let exposure = """
        INSERT INTO experiment_exposures (experiment_id, user_id, arm, exposed_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (experiment_id, user_id) DO NOTHING
        """
    static let impression = "UPDATE experiment_exposures SET impressions = impressions + 1 WHERE experiment_id = $1 AND user_id = $2"
    static let conversion = """
        UPDATE experiment_exposures SET conversions = conversions + 1 WHERE experiment_id = $1 AND user_id = $2 AND arm = $3
        """
    static let unattributed = """
        INSERT INTO experiment_unattributed (experiment_id, conversions) VALUES ($1, 1)
        ON CONFLICT (experiment_id) DO UPDATE SET conversions = experiment_unattributed.conversions + 1
        """
    static let pin = "UPDATE experiment_exposures SET pinned = $3 WHERE experiment_id = $1 AND user_id = $2"
    /// Per arm: exposed users, impressions, converted users, conversions; pinned users left out.
    public static let counts = """
        SELECT arm, count(*), sum(impressions), sum(CASE WHEN conversions > 0 THEN 1 ELSE 0 END), sum(conversions)
        FROM experiment_exposures WHERE experiment_id = $1 AND pinned = 0 GROUP BY arm ORDER BY arm
        """
    public static let unattributedCount = "SELECT conversions FROM experiment_unattributed WHERE experiment_id = $1"
    /// Erasing a user.
    public static let erase = "DELETE FROM experiment_exposures WHERE user_id = $1"

    /// The statements for the experiment facts among `activity`, in order (none for other records).
    public static func writes(userId: String, activity: [SheetActivity]) -> [Write] {
        var out: [Write] = []
        for record in activity where record.isExperimentFact {
            guard let experimentId = record.experimentId else { continue }
            let e = Write.Argument.text(experimentId), u = Write.Argument.text(userId)
            switch record.kind {
            case .exposure:
                guard let arm = record.arm else { continue }
                out.append(Write(sql: exposure, arguments: [e, u, .text(arm), .integer(record.at.millisecondsSince1970)]))
            case .experimentImpression:
                out.append(Write(sql: impression, arguments: [e, u]))
            case .conversion:
                if let arm = record.arm {
                    out.append(Write(sql: conversion, arguments: [e, u, .text(arm)]))
                } else {
                    out.append(Write(sql: unattributed, arguments: [e]))
                }
            case .pin:
                out.append(Write(sql: pin, arguments: [e, u, .integer(record.arm == nil ? 0 : 1)]))
            case .impression, .dismissal, .latchRelease, .opened:
                continue
            }
        }
        return out
    }
}

import PostgresKit
import SheetPolicy
import SheetStore

/// The writes of a group-committed batch as a few multi-row statements: one per table and kind of
/// change, each over `unnest` of parallel arrays, however many users and events the batch carries.
/// Each user's rows are written once per batch, as the difference between the state loaded in the
/// transaction and the state after the user's last event (a row changed by several events of one
/// batch is written once, so no statement touches a row twice).
///
/// The slow path (one event at a time, in savepoints) builds the same statements for one user.
struct RowWrites {
    /// One statement with its parameters.
    typealias Statement = (sql: String, parameters: [PostgresValue])

    private var containerDeletes = Columns(3)
    private var containerUpserts = Columns(5)
    private var latchDeletes = Columns(2)
    private var latchUpserts = Columns(3)
    private var stackDeletes = Columns(2)
    private var stackInserts = Columns(5)
    private var heightDeletes = Columns(3)
    private var heightUpserts = Columns(4)
    private var impressionDeletes = Columns(2)
    private var impressionUpserts = Columns(3)
    private var impressionTotalDeletes = Columns(2)
    private var impressionTotalUpserts = Columns(3)
    private var dismissalDeletes = Columns(2)
    private var dismissalUpserts = Columns(3)
    private var segmentDeletes = Columns(1)
    private var segmentInserts = Columns(3)
    private var pinDeletes = Columns(2)
    private var pinUpserts = Columns(3)
    private var processed = Columns(5)
    /// Event ids recorded per user in this batch (their numbers follow the user's last stored one).
    private var eventsPerUser: [String: Int] = [:]

    /// Adds the rows that differ between `old` (as loaded in this transaction) and `new`.
    mutating func addChanges(userId user: String, from old: UserState, to new: UserState) {
        for (key, value) in new.containers where old.containers[key] != value {
            containerUpserts.append([user, key.containerId, key.filter, String(value.count), value.seq.map { String($0) }])
        }
        for key in old.containers.keys where new.containers[key] == nil {
            containerDeletes.append([user, key.containerId, key.filter])
        }
        for (sheetId, count) in new.latches where old.latches[sheetId] != count {
            latchUpserts.append([user, sheetId, String(count)])
        }
        for sheetId in old.latches.keys where new.latches[sheetId] == nil {
            latchDeletes.append([user, sheetId])
        }
        // Stack: keep the common bottom, rewrite from the first difference up.
        if old.stack != new.stack {
            var common = 0
            while common < min(old.stack.count, new.stack.count) && old.stack[common] == new.stack[common] { common += 1 }
            if common < old.stack.count { stackDeletes.append([user, String(common)]) }
            for position in common..<new.stack.count {
                let entry = new.stack[position]
                stackInserts.append([user, String(position), entry.sheetId, entry.mode.rawValue, entry.replacedSheetId])
            }
        }
        for (key, height) in new.contentHeights where old.contentHeights[key] != height {
            heightUpserts.append([user, key.sheetId, key.platform.rawValue, "\(height)"])
        }
        for key in old.contentHeights.keys where new.contentHeights[key] == nil {
            heightDeletes.append([user, key.sheetId, key.platform.rawValue])
        }
        if old.campaign != new.campaign { addCampaignChanges(user: user, from: old.campaign, to: new.campaign) }
        // Exposures are rows of experiment_exposures, written by their facts (`ExperimentSQL`); pins are rows here.
        if old.experiments.pins != new.experiments.pins {
            for (experimentId, arm) in new.experiments.pins where old.experiments.pins[experimentId] != arm {
                pinUpserts.append([user, experimentId, arm])
            }
            for experimentId in old.experiments.pins.keys where new.experiments.pins[experimentId] == nil {
                pinDeletes.append([user, experimentId])
            }
        }
    }

    private mutating func addCampaignChanges(user: String, from old: CampaignState, to new: CampaignState) {
        for (sheetId, times) in new.impressions where old.impressions[sheetId] != times {
            // A bigint[] literal inside the text[] parameter, cast per row.
            impressionUpserts.append([user, sheetId, "{" + times.map { String($0.millisecondsSince1970) }.joined(separator: ",") + "}"])
        }
        for sheetId in old.impressions.keys where new.impressions[sheetId] == nil {
            impressionDeletes.append([user, sheetId])
        }
        for (sheetId, total) in new.impressionTotals where old.impressionTotals[sheetId] != total {
            impressionTotalUpserts.append([user, sheetId, String(total)])
        }
        for sheetId in old.impressionTotals.keys where new.impressionTotals[sheetId] == nil {
            impressionTotalDeletes.append([user, sheetId])
        }
        for (sheetId, time) in new.lastDismissals where old.lastDismissals[sheetId] != time {
            dismissalUpserts.append([user, sheetId, String(time.millisecondsSince1970)])
        }
        for sheetId in old.lastDismissals.keys where new.lastDismissals[sheetId] == nil {
            dismissalDeletes.append([user, sheetId])
        }
        // Segments change rarely (an operator's PUT): rewritten whole.
        if old.segments != new.segments {
            segmentDeletes.append([user])
            for (position, segment) in new.segments.enumerated() { segmentInserts.append([user, String(position), segment]) }
        }
    }

    /// Records an event id with the outcome its retries answer.
    mutating func addProcessedEvent(userId: String, eventId: String, outcome: [UInt8], at now: Int64) {
        let ordinal = eventsPerUser[userId, default: 0] + 1
        eventsPerUser[userId] = ordinal
        processed.append([userId, String(ordinal), eventId, Self.hex(outcome), String(now)])
    }

    /// The statements, deletions first (a stack or segment list rewritten from some position is
    /// deleted from there, then inserted); only those with rows. The event ids of the users who
    /// recorded some are then trimmed to their latest `keep`.
    func statements(keepingEventIds keep: Int) -> [Statement] {
        var statements: [Statement] = []
        func add(_ sql: String, _ columns: Columns) {
            if !columns.isEmpty { statements.append((sql, columns.parameters)) }
        }
        add(Self.deleteContainersSQL, containerDeletes)
        add(Self.deleteLatchesSQL, latchDeletes)
        add(Self.deleteStackSQL, stackDeletes)
        add(Self.deleteHeightsSQL, heightDeletes)
        add(Self.deleteImpressionsSQL, impressionDeletes)
        add(Self.deleteImpressionTotalsSQL, impressionTotalDeletes)
        add(Self.deleteDismissalsSQL, dismissalDeletes)
        add(Self.deleteSegmentsSQL, segmentDeletes)
        add(Self.deletePinsSQL, pinDeletes)
        add(Self.upsertContainersSQL, containerUpserts)
        add(Self.upsertLatchesSQL, latchUpserts)
        add(Self.insertStackSQL, stackInserts)
        add(Self.upsertHeightsSQL, heightUpserts)
        add(Self.upsertImpressionsSQL, impressionUpserts)
        add(Self.upsertImpressionTotalsSQL, impressionTotalUpserts)
        add(Self.upsertDismissalsSQL, dismissalUpserts)
        add(Self.insertSegmentsSQL, segmentInserts)
        add(Self.upsertPinsSQL, pinUpserts)
        add(Self.insertProcessedSQL, processed)
        if !eventsPerUser.isEmpty {
            statements.append((Self.trimProcessedSQL, [PostgresUserStateSQL.textArray(Array(eventsPerUser.keys)), .int(Int64(keep))]))
        }
        return statements
    }

    /// One batch's rollup changes in one statement, its rows in key order (the order their row
    /// locks are taken in, the same on every writer, so writers never deadlock on them).
    static func rollupsStatement(_ rollups: RollupDeltas) -> Statement? {
        let rows = rollups.sorted
        if rows.isEmpty { return nil }
        var columns = Columns(RollupCounters.columns.count + 2)
        for (key, counters) in rows { columns.append([key.sheetId, String(key.bucket)] + counters.values.map { String($0) }) }
        return (PostgresSQL.upsertRollups, columns.parameters)
    }

    // MARK: - SQL

    static let deleteContainersSQL = """
        DELETE FROM container_counts c USING unnest($1::text[], $2::text[], $3::text[]) AS t(u, k, f)
        WHERE c.user_id = t.u AND c.container_id = t.k AND c.filter = t.f
        """
    static let upsertContainersSQL = """
        INSERT INTO container_counts (user_id, container_id, filter, count, seq)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
        ON CONFLICT (user_id, container_id, filter) DO UPDATE SET count = excluded.count, seq = excluded.seq
        """
    static let deleteLatchesSQL = """
        DELETE FROM latches l USING unnest($1::text[], $2::text[]) AS t(u, s) WHERE l.user_id = t.u AND l.sheet_id = t.s
        """
    static let upsertLatchesSQL = """
        INSERT INTO latches (user_id, sheet_id, count) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
        ON CONFLICT (user_id, sheet_id) DO UPDATE SET count = excluded.count
        """
    static let deleteStackSQL = """
        DELETE FROM stack s USING unnest($1::text[], $2::integer[]) AS t(u, p) WHERE s.user_id = t.u AND s.position >= t.p
        """
    static let insertStackSQL = """
        INSERT INTO stack (user_id, position, sheet_id, mode, replaced_sheet_id)
        SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::text[])
        """
    static let deleteHeightsSQL = """
        DELETE FROM content_heights h USING unnest($1::text[], $2::text[], $3::text[]) AS t(u, s, p)
        WHERE h.user_id = t.u AND h.sheet_id = t.s AND h.platform = t.p
        """
    static let upsertHeightsSQL = """
        INSERT INTO content_heights (user_id, sheet_id, platform, height)
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[])
        ON CONFLICT (user_id, sheet_id, platform) DO UPDATE SET height = excluded.height
        """
    static let deleteImpressionsSQL = """
        DELETE FROM impressions i USING unnest($1::text[], $2::text[]) AS t(u, s) WHERE i.user_id = t.u AND i.sheet_id = t.s
        """
    static let upsertImpressionsSQL = """
        INSERT INTO impressions (user_id, sheet_id, times)
        SELECT u, s, t::bigint[] FROM unnest($1::text[], $2::text[], $3::text[]) AS x(u, s, t)
        ON CONFLICT (user_id, sheet_id) DO UPDATE SET times = excluded.times
        """
    static let deleteImpressionTotalsSQL = """
        DELETE FROM impression_totals i USING unnest($1::text[], $2::text[]) AS t(u, s) WHERE i.user_id = t.u AND i.sheet_id = t.s
        """
    static let upsertImpressionTotalsSQL = """
        INSERT INTO impression_totals (user_id, sheet_id, total) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
        ON CONFLICT (user_id, sheet_id) DO UPDATE SET total = excluded.total
        """
    static let deleteDismissalsSQL = """
        DELETE FROM last_dismissals d USING unnest($1::text[], $2::text[]) AS t(u, s) WHERE d.user_id = t.u AND d.sheet_id = t.s
        """
    static let upsertDismissalsSQL = """
        INSERT INTO last_dismissals (user_id, sheet_id, at) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
        ON CONFLICT (user_id, sheet_id) DO UPDATE SET at = excluded.at
        """
    static let deletePinsSQL = """
        DELETE FROM experiment_pins p USING unnest($1::text[], $2::text[]) AS t(u, e) WHERE p.user_id = t.u AND p.experiment_id = t.e
        """
    static let upsertPinsSQL = """
        INSERT INTO experiment_pins (user_id, experiment_id, arm) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])
        ON CONFLICT (user_id, experiment_id) DO UPDATE SET arm = excluded.arm
        """

    /// The experiment facts among a user's records, as statements (see `ExperimentSQL`).
    static func experimentStatements(userId: String, _ activity: [SheetActivity]) -> [Statement] {
        guard activity.contains(where: \.isExperimentFact) else { return [] }
        return ExperimentSQL.writes(userId: userId, activity: activity).map { write in
            (
                write.sql,
                write.arguments.map { argument -> PostgresValue in
                    switch argument {
                    case .text(let text): .text(text)
                    case .integer(let value): .int(value)
                    }
                }
            )
        }
    }

    static let deleteSegmentsSQL = "DELETE FROM user_segments WHERE user_id = ANY($1::text[])"
    static let insertSegmentsSQL = """
        INSERT INTO user_segments (user_id, position, segment) SELECT * FROM unnest($1::text[], $2::integer[], $3::text[])
        """
    /// Each user's ids numbered after their last stored one (one snapshot for the statement, so
    /// the batch's ordinals keep them apart).
    static let insertProcessedSQL = """
        INSERT INTO processed_events (user_id, seq, event_id, outcome, processed_at)
        SELECT u, coalesce((SELECT max(seq) FROM processed_events p WHERE p.user_id = t.u), 0) + k, e, decode(o, 'hex'), a
        FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[]) AS t(u, k, e, o, a)
        """
    /// `ProcessedEventSQL.trim` for the users in `$1`.
    static let trimProcessedSQL = """
        DELETE FROM processed_events p USING (
            SELECT u, (SELECT coalesce(max(seq), 0) FROM processed_events q WHERE q.user_id = u) - $2 AS top
            FROM unnest($1::text[]) AS u) AS t
        WHERE p.user_id = t.u AND p.seq <= t.top AND p.seq > t.top - \(ProcessedEventSQL.trimSpan)
        """

    private static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xf)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Parallel columns of values (nil: SQL NULL), each sent as one PostgreSQL array literal.
struct Columns {
    private var literals: [[UInt8]]
    private(set) var isEmpty = true

    init(_ count: Int) { literals = Array(repeating: [UInt8(ascii: "{")], count: count) }

    /// One row: a value per column.
    mutating func append(_ row: [String?]) {
        precondition(row.count == literals.count)
        for (column, value) in row.enumerated() {
            if !isEmpty { literals[column].append(UInt8(ascii: ",")) }
            Self.appendElement(value, to: &literals[column])
        }
        isEmpty = false
    }

    /// The columns as text parameters (array literals, every element quoted or NULL).
    var parameters: [PostgresValue] {
        literals.map { .text(String(decoding: $0 + [UInt8(ascii: "}")], as: UTF8.self)) }
    }

    static func appendElement(_ value: String?, to literal: inout [UInt8]) {
        guard let value else {
            literal.append(contentsOf: "NULL".utf8)
            return
        }
        literal.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { literal.append(UInt8(ascii: "\\")) }
            literal.append(byte)
        }
        literal.append(UInt8(ascii: "\""))
    }
}

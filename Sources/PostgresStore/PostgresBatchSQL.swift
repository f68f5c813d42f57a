import PostgresKit
import SheetPolicy
import SheetStore

/// A group-committed batch's writes (`BatchWrites`) as a few multi-row statements, however many
/// users and events the batch carries: the changed states (one row per user), the event ids, the
/// rollups, the experiment facts.
enum PostgresBatchSQL {
    /// One statement with its parameters.
    typealias Statement = (sql: String, parameters: [PostgresValue])

    /// The statements of `writes`, only those with rows; the event ids of the users who recorded
    /// some are trimmed to their latest `writes.eventIdsPerUser`.
    static func statements(_ writes: BatchWrites) -> [Statement] {
        var statements: [Statement] = []
        if !writes.states.isEmpty {
            var columns = Columns(2)
            for change in writes.states { columns.append([change.userId, hex(UserStateCodec.encode(change.new))]) }
            statements.append((PostgresUserStateSQL.updateStatesSQL, columns.parameters))
        }
        if !writes.events.isEmpty {
            // Event ids recorded per user in this batch (their numbers follow the user's last stored one).
            var eventsPerUser: [String: Int] = [:]
            var users: [String] = []
            var columns = Columns(5)
            for event in writes.events {
                let ordinal = eventsPerUser[event.userId, default: 0] + 1
                if ordinal == 1 { users.append(event.userId) }
                eventsPerUser[event.userId] = ordinal
                columns.append([event.userId, String(ordinal), event.eventId, hex(event.outcome), String(writes.now)])
            }
            statements.append((insertProcessedSQL, columns.parameters))
            statements.append((trimProcessedSQL, [PostgresUserStateSQL.textArray(users), .int(Int64(writes.eventIdsPerUser))]))
        }
        if let rollups = rollupsStatement(writes.rollups) { statements.append(rollups) }
        statements += experimentStatements(writes.experimentFacts)
        return statements
    }

    /// One batch's rollup changes in one statement, its rows in key order (the order their row
    /// locks are taken in, the same on every writer, so writers never deadlock on them).
    static func rollupsStatement(_ rollups: RollupDeltas) -> Statement? {
        let rows = rollups.sorted
        if rows.isEmpty { return nil }
        var columns = Columns(RollupCounters.columns.count + 2)
        for (key, counters) in rows { columns.append([key.sheetId, String(key.bucket)] + counters.values.map { String($0) }) }
        return (upsertRollups, columns.parameters)
    }

    /// `RollupSQL.upsert` for many (sheet, bucket) entries: parallel arrays, in the order given.
    static let upsertRollups: String = {
        let values = RollupCounters.columns.indices.map { "c\($0)" }.joined(separator: ", ")
        let arrays = RollupCounters.columns.indices.map { "$\($0 + 3)::bigint[]" }.joined(separator: ", ")
        return """
            INSERT INTO sheet_rollups (sheet_id, bucket, \(RollupSQL.columnList))
            SELECT s, b, \(values) FROM unnest($1::text[], $2::bigint[], \(arrays)) WITH ORDINALITY AS t(s, b, \(values), n)
            ORDER BY n
            ON CONFLICT (sheet_id, bucket) DO UPDATE SET \(RollupSQL.additions)
            """
    }()

    /// Experiment facts (see `ExperimentSQL`) as statements, in order.
    static func experimentStatements(_ writes: [ExperimentSQL.Write]) -> [Statement] {
        writes.map { write in (write.sql, write.arguments.map(PostgresSession.value)) }
    }

    // MARK: - SQL

    /// The event ids of a batch already processed: `$1` and `$2` are parallel arrays.
    static let replayManySQL = """
        SELECT p.user_id, p.event_id, p.outcome FROM processed_events p
        JOIN unnest($1::text[], $2::text[]) AS t(u, e) ON p.user_id = t.u AND p.event_id = t.e
        """
    static let notifySQL = "SELECT pg_notify($1, $2)"
    static let catalogVersionSQL = "SELECT version FROM catalog_version"

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

    static func hex(_ bytes: [UInt8]) -> String {
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

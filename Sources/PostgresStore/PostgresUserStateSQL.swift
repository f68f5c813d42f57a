import PostgresKit
import SheetPolicy
import SheetStore

/// Reading and writing one user's `UserState` rows (the PostgreSQL twin of the SQLite store's).
enum PostgresUserStateSQL {
    /// All of a user's rows in one statement (one snapshot): a tag column says which table each row
    /// comes from.
    static let loadSQL = """
        SELECT 0, container_id, filter, count::float8, seq::text FROM container_counts WHERE user_id = $1
        UNION ALL SELECT 1, sheet_id, NULL::text, count::float8, NULL::text FROM latches WHERE user_id = $1
        UNION ALL SELECT 2, sheet_id, mode, position::float8, replaced_sheet_id FROM stack WHERE user_id = $1
        UNION ALL SELECT 3, sheet_id, platform, height, NULL::text FROM content_heights WHERE user_id = $1
        UNION ALL SELECT 4, sheet_id, array_to_string(times, ','), NULL::float8, NULL::text FROM impressions WHERE user_id = $1
        UNION ALL SELECT 5, sheet_id, NULL::text, NULL::float8, total::text FROM impression_totals WHERE user_id = $1
        UNION ALL SELECT 6, sheet_id, NULL::text, NULL::float8, at::text FROM last_dismissals WHERE user_id = $1
        UNION ALL SELECT 7, segment, NULL::text, position::float8, NULL::text FROM user_segments WHERE user_id = $1
        """

    /// Several users' rows in one statement (`$1` a text array of user ids): `loadSQL` with the
    /// user id as a first column, so it stays in step with it.
    static let loadManySQL =
        loadSQL
        .replacing("SELECT ", with: "SELECT user_id, ")
        .replacing("WHERE user_id = $1", with: "WHERE user_id = ANY($1::text[])")

    static func load(userId: String, _ db: PostgresConnection) throws -> UserState {
        try decode(try db.query(loadSQL, [.text(userId)]))
    }

    /// The states in the rows of `loadManySQL`, by user id (users without rows are absent).
    static func states(from rows: some Sequence<PostgresRow>) throws -> [String: UserState] {
        var byUser: [String: [PostgresRow]] = [:]
        for row in rows { byUser[row.string(at: 0), default: []].append(row) }
        return try byUser.mapValues { try decode($0, column: 1) }
    }

    /// `values` as a PostgreSQL text array literal (every element quoted).
    static func textArray(_ values: [String]) -> PostgresValue {
        var literal = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { literal += "," }
            literal += "\""
            for character in value {
                if character == "\"" || character == "\\" { literal += "\\" }
                literal.append(character)
            }
            literal += "\""
        }
        return .text(literal + "}")
    }

    /// The state in rows shaped like `loadSQL`'s (its columns from `column` on).
    static func decode(_ rows: some Sequence<PostgresRow>, column c: Int = 0) throws -> UserState {
        var state = UserState()
        var stack: [(position: Int, entry: StackEntry)] = []
        var segments: [(position: Int, segment: String)] = []
        for row in rows {
            // Counts and positions travel as float8 to share the column with heights; they are whole.
            switch row.int(at: c) {
            case 0:
                let key = ContainerKey(containerId: row.string(at: c + 1), filter: row.string(at: c + 2))
                state.containers[key] = ContainerCount(count: Int(row.double(at: c + 3)), seq: row.optionalInt(at: c + 4))
            case 1:
                state.latches[row.string(at: c + 1)] = Int(row.double(at: c + 3))
            case 2:
                let raw = row.string(at: c + 2)
                guard let mode = OpenMode(rawValue: raw) else { throw StoreError.failure("stack row with unknown mode \(raw)") }
                stack.append(
                    (
                        Int(row.double(at: c + 3)),
                        StackEntry(sheetId: row.string(at: c + 1), mode: mode, replacedSheetId: row.optionalString(at: c + 4))
                    ))
            case 4:
                let list = row.string(at: c + 2)
                var times: [Timestamp] = []
                if !list.isEmpty {
                    for item in list.split(separator: ",") {
                        guard let ms = Int64(item) else { throw StoreError.failure("impression row with a bad time \(item)") }
                        times.append(Timestamp(millisecondsSince1970: ms))
                    }
                }
                state.campaign.impressions[row.string(at: c + 1)] = times
            case 5:
                state.campaign.impressionTotals[row.string(at: c + 1)] = row.int(at: c + 4)
            case 6:
                state.campaign.lastDismissals[row.string(at: c + 1)] = Timestamp(millisecondsSince1970: Int64(row.int(at: c + 4)))
            case 7:
                segments.append((Int(row.double(at: c + 3)), row.string(at: c + 1)))
            default:
                let raw = row.string(at: c + 2)
                guard let platform = Platform(rawValue: raw) else {
                    throw StoreError.failure("content height row with unknown platform \(raw)")
                }
                state.contentHeights[HeightKey(sheetId: row.string(at: c + 1), platform: platform)] = row.double(at: c + 3)
            }
        }
        if !stack.isEmpty {
            stack.sort { $0.position < $1.position }
            state.stack = stack.map(\.entry)
        }
        if !segments.isEmpty {
            segments.sort { $0.position < $1.position }
            state.campaign.segments = segments.map(\.segment)
        }
        return state
    }

    /// Writes only the rows that differ between `old` (as loaded in this transaction) and `new`.
    static func writeChanges(userId: String, from old: UserState, to new: UserState, _ db: PostgresConnection) throws {
        for statement in changes(userId: userId, from: old, to: new) { try db.query(statement.sql, statement.parameters) }
    }

    /// One statement with its parameters.
    typealias Statement = (sql: String, parameters: [PostgresValue])

    /// The statements that turn the rows of `old` into those of `new` (only the rows that differ).
    static func changes(userId: String, from old: UserState, to new: UserState) -> [Statement] {
        var statements: [Statement] = []
        func query(_ sql: String, _ parameters: [PostgresValue]) { statements.append((sql, parameters)) }
        let user = PostgresValue.text(userId)
        for (key, value) in new.containers where old.containers[key] != value {
            query(
                """
                INSERT INTO container_counts (user_id, container_id, filter, count, seq) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (user_id, container_id, filter) DO UPDATE SET count = excluded.count, seq = excluded.seq
                """,
                [user, .text(key.containerId), .text(key.filter), .int(Int64(value.count)), value.seq.map { .int(Int64($0)) } ?? .null])
        }
        for key in old.containers.keys where new.containers[key] == nil {
            query(
                "DELETE FROM container_counts WHERE user_id = $1 AND container_id = $2 AND filter = $3",
                [user, .text(key.containerId), .text(key.filter)])
        }
        for (sheetId, count) in new.latches where old.latches[sheetId] != count {
            query(
                """
                INSERT INTO latches (user_id, sheet_id, count) VALUES ($1, $2, $3)
                ON CONFLICT (user_id, sheet_id) DO UPDATE SET count = excluded.count
                """, [user, .text(sheetId), .int(Int64(count))])
        }
        for sheetId in old.latches.keys where new.latches[sheetId] == nil {
            query("DELETE FROM latches WHERE user_id = $1 AND sheet_id = $2", [user, .text(sheetId)])
        }
        // Stack: keep the common bottom, rewrite from the first difference up.
        if old.stack != new.stack {
            var common = 0
            while common < min(old.stack.count, new.stack.count) && old.stack[common] == new.stack[common] { common += 1 }
            if common < old.stack.count {
                query("DELETE FROM stack WHERE user_id = $1 AND position >= $2", [user, .int(Int64(common))])
            }
            for position in common..<new.stack.count {
                let entry = new.stack[position]
                query(
                    "INSERT INTO stack (user_id, position, sheet_id, mode, replaced_sheet_id) VALUES ($1, $2, $3, $4, $5)",
                    [
                        user, .int(Int64(position)), .text(entry.sheetId), .text(entry.mode.rawValue),
                        entry.replacedSheetId.map { .text($0) } ?? .null,
                    ])
            }
        }
        for (key, height) in new.contentHeights where old.contentHeights[key] != height {
            query(
                """
                INSERT INTO content_heights (user_id, sheet_id, platform, height) VALUES ($1, $2, $3, $4)
                ON CONFLICT (user_id, sheet_id, platform) DO UPDATE SET height = excluded.height
                """, [user, .text(key.sheetId), .text(key.platform.rawValue), .double(height)])
        }
        for key in old.contentHeights.keys where new.contentHeights[key] == nil {
            query(
                "DELETE FROM content_heights WHERE user_id = $1 AND sheet_id = $2 AND platform = $3",
                [user, .text(key.sheetId), .text(key.platform.rawValue)])
        }
        if old.campaign != new.campaign { statements += campaignChanges(user: user, from: old.campaign, to: new.campaign) }
        return statements
    }

    private static func campaignChanges(user: PostgresValue, from old: CampaignState, to new: CampaignState) -> [Statement] {
        var statements: [Statement] = []
        func query(_ sql: String, _ parameters: [PostgresValue]) { statements.append((sql, parameters)) }
        for (sheetId, times) in new.impressions where old.impressions[sheetId] != times {
            query(
                """
                INSERT INTO impressions (user_id, sheet_id, times) VALUES ($1, $2, $3::bigint[])
                ON CONFLICT (user_id, sheet_id) DO UPDATE SET times = excluded.times
                """, [user, .text(sheetId), .text("{" + times.map { String($0.millisecondsSince1970) }.joined(separator: ",") + "}")])
        }
        for sheetId in old.impressions.keys where new.impressions[sheetId] == nil {
            query("DELETE FROM impressions WHERE user_id = $1 AND sheet_id = $2", [user, .text(sheetId)])
        }
        for (sheetId, total) in new.impressionTotals where old.impressionTotals[sheetId] != total {
            query(
                """
                INSERT INTO impression_totals (user_id, sheet_id, total) VALUES ($1, $2, $3)
                ON CONFLICT (user_id, sheet_id) DO UPDATE SET total = excluded.total
                """, [user, .text(sheetId), .int(Int64(total))])
        }
        for sheetId in old.impressionTotals.keys where new.impressionTotals[sheetId] == nil {
            query("DELETE FROM impression_totals WHERE user_id = $1 AND sheet_id = $2", [user, .text(sheetId)])
        }
        for (sheetId, time) in new.lastDismissals where old.lastDismissals[sheetId] != time {
            query(
                """
                INSERT INTO last_dismissals (user_id, sheet_id, at) VALUES ($1, $2, $3)
                ON CONFLICT (user_id, sheet_id) DO UPDATE SET at = excluded.at
                """, [user, .text(sheetId), .int(time.millisecondsSince1970)])
        }
        for sheetId in old.lastDismissals.keys where new.lastDismissals[sheetId] == nil {
            query("DELETE FROM last_dismissals WHERE user_id = $1 AND sheet_id = $2", [user, .text(sheetId)])
        }
        // Segments change rarely (an operator's PUT): rewritten whole.
        if old.segments != new.segments {
            query("DELETE FROM user_segments WHERE user_id = $1", [user])
            for (position, segment) in new.segments.enumerated() {
                query(
                    "INSERT INTO user_segments (user_id, position, segment) VALUES ($1, $2, $3)",
                    [user, .int(Int64(position)), .text(segment)])
            }
        }
        return statements
    }

    /// Appends the activity records of one update (same transaction). The totals are added per batch
    /// (`addTotals`), just before the commit.
    static func append(_ activity: [SheetActivity], userId: String, _ db: PostgresConnection) throws {
        for statement in appendStatements(activity, userId: userId) { try db.query(statement.sql, statement.parameters) }
    }

    static func appendStatements(_ activity: [SheetActivity], userId: String) -> [Statement] {
        var statements: [Statement] = []
        func query(_ sql: String, _ parameters: [PostgresValue]) { statements.append((sql, parameters)) }
        for record in activity {
            query(
                "INSERT INTO sheet_activity (user_id, sheet_id, at, kind, method) VALUES ($1, $2, $3, $4, $5)",
                [
                    .text(userId), .text(record.sheetId), .int(record.at.millisecondsSince1970), .text(record.kind.rawValue),
                    record.method.map { .text($0) } ?? .null,
                ])
        }
        return statements
    }

    /// One batch's additions to `sheet_totals`, in key order (see migrations/postgres/0003_campaign.sql).
    static func addTotals(_ totals: [TotalsKey: Int], _ db: PostgresConnection) throws {
        for statement in totalsStatements(totals) { try db.query(statement.sql, statement.parameters) }
    }

    static func totalsStatements(_ totals: [TotalsKey: Int]) -> [Statement] {
        var statements: [Statement] = []
        func query(_ sql: String, _ parameters: [PostgresValue]) { statements.append((sql, parameters)) }
        for (key, count) in totals.sorted(by: { $0.key < $1.key }) {
            query(
                """
                INSERT INTO sheet_totals (sheet_id, kind, method, total) VALUES ($1, $2, $3, $4)
                ON CONFLICT (sheet_id, kind, method) DO UPDATE SET total = sheet_totals.total + excluded.total
                """, [.text(key.sheetId), .text(key.kind), .text(key.method), .int(Int64(count))])
        }
        return statements
    }
}

/// A row of `sheet_totals`.
struct TotalsKey: Hashable, Comparable {
    var sheetId: String
    var kind: String
    var method: String
    init(_ record: SheetActivity) { sheetId = record.sheetId; kind = record.kind.rawValue; method = record.method ?? "" }
    static func < (a: Self, b: Self) -> Bool {
        // Byte order, the same on every replica (the order the row locks are taken in).
        for (x, y) in [(a.sheetId, b.sheetId), (a.kind, b.kind), (a.method, b.method)] where x != y {
            return x.utf8.lexicographicallyPrecedes(y.utf8)
        }
        return false
    }
}

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
        UNION ALL SELECT 8, experiment_id, arm, NULL::float8, exposed_at::text FROM experiment_exposures WHERE user_id = $1
        UNION ALL SELECT 10, experiment_id, arm, NULL::float8, NULL::text FROM experiment_pins WHERE user_id = $1
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
            case 8:
                state.experiments.exposures[row.string(at: c + 1)] = ExperimentState.Exposure(
                    arm: row.string(at: c + 2), at: Timestamp(millisecondsSince1970: Int64(row.int(at: c + 4))))
            case 10:  // (9 is the versions row of the shared store's reads)
                state.experiments.pins[row.string(at: c + 1)] = row.string(at: c + 2)
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
}

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
        """

    static func load(userId: String, _ db: PostgresConnection) throws -> UserState {
        var state = UserState()
        var stack: [(position: Int, entry: StackEntry)] = []
        for row in try db.query(loadSQL, [.text(userId)]) {
            // Counts and positions travel as float8 to share the column with heights; they are whole.
            switch row.int(at: 0) {
            case 0:
                let key = ContainerKey(containerId: row.string(at: 1), filter: row.string(at: 2))
                state.containers[key] = ContainerCount(count: Int(row.double(at: 3)), seq: row.optionalInt(at: 4))
            case 1:
                state.latches[row.string(at: 1)] = Int(row.double(at: 3))
            case 2:
                let raw = row.string(at: 2)
                guard let mode = OpenMode(rawValue: raw) else { throw StoreError.failure("stack row with unknown mode \(raw)") }
                stack.append((Int(row.double(at: 3)), StackEntry(sheetId: row.string(at: 1), mode: mode, replacedSheetId: row.optionalString(at: 4))))
            default:
                let raw = row.string(at: 2)
                guard let platform = Platform(rawValue: raw) else {
                    throw StoreError.failure("content height row with unknown platform \(raw)")
                }
                state.contentHeights[HeightKey(sheetId: row.string(at: 1), platform: platform)] = row.double(at: 3)
            }
        }
        if !stack.isEmpty {
            stack.sort { $0.position < $1.position }
            state.stack = stack.map(\.entry)
        }
        return state
    }

    /// Writes only the rows that differ between `old` (as loaded in this transaction) and `new`.
    static func writeChanges(userId: String, from old: UserState, to new: UserState, _ db: PostgresConnection) throws {
        let user = PostgresValue.text(userId)
        for (key, value) in new.containers where old.containers[key] != value {
            try db.query(
                """
                INSERT INTO container_counts (user_id, container_id, filter, count, seq) VALUES ($1, $2, $3, $4, $5)
                ON CONFLICT (user_id, container_id, filter) DO UPDATE SET count = excluded.count, seq = excluded.seq
                """,
                [user, .text(key.containerId), .text(key.filter), .int(Int64(value.count)), value.seq.map { .int(Int64($0)) } ?? .null])
        }
        for key in old.containers.keys where new.containers[key] == nil {
            try db.query(
                "DELETE FROM container_counts WHERE user_id = $1 AND container_id = $2 AND filter = $3",
                [user, .text(key.containerId), .text(key.filter)])
        }
        for (sheetId, count) in new.latches where old.latches[sheetId] != count {
            try db.query(
                """
                INSERT INTO latches (user_id, sheet_id, count) VALUES ($1, $2, $3)
                ON CONFLICT (user_id, sheet_id) DO UPDATE SET count = excluded.count
                """, [user, .text(sheetId), .int(Int64(count))])
        }
        for sheetId in old.latches.keys where new.latches[sheetId] == nil {
            try db.query("DELETE FROM latches WHERE user_id = $1 AND sheet_id = $2", [user, .text(sheetId)])
        }
        // Stack: keep the common bottom, rewrite from the first difference up.
        if old.stack != new.stack {
            var common = 0
            while common < min(old.stack.count, new.stack.count) && old.stack[common] == new.stack[common] { common += 1 }
            if common < old.stack.count {
                try db.query("DELETE FROM stack WHERE user_id = $1 AND position >= $2", [user, .int(Int64(common))])
            }
            for position in common..<new.stack.count {
                let entry = new.stack[position]
                try db.query(
                    "INSERT INTO stack (user_id, position, sheet_id, mode, replaced_sheet_id) VALUES ($1, $2, $3, $4, $5)",
                    [
                        user, .int(Int64(position)), .text(entry.sheetId), .text(entry.mode.rawValue),
                        entry.replacedSheetId.map { .text($0) } ?? .null,
                    ])
            }
        }
        for (key, height) in new.contentHeights where old.contentHeights[key] != height {
            try db.query(
                """
                INSERT INTO content_heights (user_id, sheet_id, platform, height) VALUES ($1, $2, $3, $4)
                ON CONFLICT (user_id, sheet_id, platform) DO UPDATE SET height = excluded.height
                """, [user, .text(key.sheetId), .text(key.platform.rawValue), .double(height)])
        }
        for key in old.contentHeights.keys where new.contentHeights[key] == nil {
            try db.query(
                "DELETE FROM content_heights WHERE user_id = $1 AND sheet_id = $2 AND platform = $3",
                [user, .text(key.sheetId), .text(key.platform.rawValue)])
        }
    }
}

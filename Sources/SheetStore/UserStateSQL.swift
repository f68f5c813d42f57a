import SheetPolicy
import SQLiteKit

/// Reading and writing one user's `UserState` rows.
enum UserStateSQL {
    /// All of a user's rows in one statement (one snapshot, one round of stepping): a tag column
    /// says which table each row comes from.
    static let loadSQL = """
        SELECT 0, container_id, filter, count, seq FROM container_counts WHERE user_id = ?1
        UNION ALL SELECT 1, sheet_id, NULL, count, NULL FROM latches WHERE user_id = ?1
        UNION ALL SELECT 2, sheet_id, mode, position, replaced_sheet_id FROM stack WHERE user_id = ?1
        UNION ALL SELECT 3, sheet_id, platform, height, NULL FROM content_heights WHERE user_id = ?1
        """

    static func load(userId: String, _ db: Connection) throws -> UserState {
        let statement = try db.cachedStatement(loadSQL)
        defer { statement.reset() }
        try statement.bind(userId, at: 1)
        var state = UserState()
        var stack: [(position: Int, entry: StackEntry)] = []
        while try statement.step() {
            switch statement.int(at: 0) {
            case 0:
                let key = ContainerKey(containerId: statement.string(at: 1), filter: statement.string(at: 2))
                state.containers[key] = ContainerCount(count: statement.int(at: 3), seq: statement.optionalInt(at: 4))
            case 1:
                state.latches[statement.string(at: 1)] = statement.int(at: 3)
            case 2:
                let raw = statement.string(at: 2)
                guard let mode = OpenMode(rawValue: raw) else { throw StoreError.failure("stack row with unknown mode \(raw)") }
                stack.append((statement.int(at: 3), StackEntry(sheetId: statement.string(at: 1), mode: mode, replacedSheetId: statement.optionalString(at: 4))))
            default:
                let raw = statement.string(at: 2)
                guard let platform = Platform(rawValue: raw) else {
                    throw StoreError.failure("content height row with unknown platform \(raw)")
                }
                state.contentHeights[HeightKey(sheetId: statement.string(at: 1), platform: platform)] = statement.double(at: 3)
            }
        }
        if !stack.isEmpty {
            stack.sort { $0.position < $1.position }
            state.stack = stack.map(\.entry)
        }
        return state
    }

    /// Writes only the rows that differ between `old` (as loaded in this transaction) and `new`.
    static func writeChanges(userId: String, from old: UserState, to new: UserState, _ db: Connection) throws {
        // Containers
        for (key, value) in new.containers where old.containers[key] != value {
            let statement = try db.cachedStatement(
                """
                INSERT INTO container_counts (user_id, container_id, filter, count, seq) VALUES (?1, ?2, ?3, ?4, ?5)
                ON CONFLICT (user_id, container_id, filter) DO UPDATE SET count = excluded.count, seq = excluded.seq
                """)
            defer { statement.reset() }
            try statement.bind(userId, at: 1)
            try statement.bind(key.containerId, at: 2)
            try statement.bind(key.filter, at: 3)
            try statement.bind(value.count, at: 4)
            try statement.bind(value.seq, at: 5)
            try statement.run()
        }
        for key in old.containers.keys where new.containers[key] == nil {
            try db.run(
                "DELETE FROM container_counts WHERE user_id = ?1 AND container_id = ?2 AND filter = ?3",
                [.text(userId), .text(key.containerId), .text(key.filter)])
        }
        // Latches
        for (sheetId, count) in new.latches where old.latches[sheetId] != count {
            try db.run(
                """
                INSERT INTO latches (user_id, sheet_id, count) VALUES (?1, ?2, ?3)
                ON CONFLICT (user_id, sheet_id) DO UPDATE SET count = excluded.count
                """, [.text(userId), .text(sheetId), .integer(Int64(count))])
        }
        for sheetId in old.latches.keys where new.latches[sheetId] == nil {
            try db.run("DELETE FROM latches WHERE user_id = ?1 AND sheet_id = ?2", [.text(userId), .text(sheetId)])
        }
        // Stack: keep the common bottom, rewrite from the first difference up.
        if old.stack != new.stack {
            var common = 0
            while common < min(old.stack.count, new.stack.count) && old.stack[common] == new.stack[common] { common += 1 }
            if common < old.stack.count {
                try db.run(
                    "DELETE FROM stack WHERE user_id = ?1 AND position >= ?2", [.text(userId), .integer(Int64(common))])
            }
            for position in common..<new.stack.count {
                let entry = new.stack[position]
                try db.run(
                    "INSERT INTO stack (user_id, position, sheet_id, mode, replaced_sheet_id) VALUES (?1, ?2, ?3, ?4, ?5)",
                    [.text(userId), .integer(Int64(position)), .text(entry.sheetId), .text(entry.mode.rawValue),
                     entry.replacedSheetId.map { .text($0) } ?? .null])
            }
        }
        // Content heights
        for (key, height) in new.contentHeights where old.contentHeights[key] != height {
            try db.run(
                """
                INSERT INTO content_heights (user_id, sheet_id, platform, height) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (user_id, sheet_id, platform) DO UPDATE SET height = excluded.height
                """, [.text(userId), .text(key.sheetId), .text(key.platform.rawValue), .real(height)])
        }
        for key in old.contentHeights.keys where new.contentHeights[key] == nil {
            try db.run(
                "DELETE FROM content_heights WHERE user_id = ?1 AND sheet_id = ?2 AND platform = ?3",
                [.text(userId), .text(key.sheetId), .text(key.platform.rawValue)])
        }
    }

    /// Erases everything stored for the user, processed event ids included.
    static func erase(userId: String, _ db: Connection) throws {
        for table in ["container_counts", "latches", "stack", "content_heights", "processed_events"] {
            try db.run("DELETE FROM \(table) WHERE user_id = ?1", [.text(userId)])
        }
    }
}

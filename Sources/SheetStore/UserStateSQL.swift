import SQLiteKit
import SheetPolicy

/// Reading and writing one user's `UserState`: one row of `user_states` (see `UserStateCodec`).
enum UserStateSQL {
    /// The user's state: one key lookup; no row is the empty state.
    static func load(userId: String, _ db: Connection) throws -> UserState {
        let statement = try db.cachedStatement("SELECT state FROM user_states WHERE user_id = ?1")
        defer { statement.reset() }
        try statement.bind(userId, at: 1)
        guard try statement.step() else { return UserState() }
        return try UserStateCodec.decode(statement.blob(at: 0))
    }

    /// Writes `new` when it differs from `old` (as loaded in this transaction); an empty state
    /// deletes the row, so that it reads exactly as a user never seen.
    static func writeChanges(userId: String, from old: UserState, to new: UserState, _ db: Connection) throws {
        guard new != old else { return }
        if new == UserState() {
            let statement = try db.cachedStatement("DELETE FROM user_states WHERE user_id = ?1")
            defer { statement.reset() }
            try statement.bind(userId, at: 1)
            try statement.run()
            return
        }
        let statement = try db.cachedStatement(
            """
            INSERT INTO user_states (user_id, state) VALUES (?1, ?2)
            ON CONFLICT (user_id) DO UPDATE SET state = excluded.state
            """)
        defer { statement.reset() }
        try statement.bind(userId, at: 1)
        try statement.bind(UserStateCodec.encode(new), at: 2)
        try statement.run()
    }

    /// One activity record, numbered after the user's last. Its plan must build no temporary B-tree
    /// (a CHECK with a long IN list did, for every row: migration 5).
    static let appendSQL = """
        INSERT INTO sheet_activity (user_id, seq, sheet_id, at, kind, method)
        VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM sheet_activity WHERE user_id = ?1), ?2, ?3, ?4, ?5)
        """

    /// Appends the activity records of one update (same transaction). The per-sheet totals are not
    /// touched here: the writer counts a batch's records in `ActivityTotals` and adds them once, before
    /// the batch commits.
    static func append(_ activity: [SheetActivity], userId: String, _ db: Connection) throws {
        guard !activity.isEmpty else { return }
        let insert = try db.cachedStatement(appendSQL)
        for record in activity {
            defer { insert.reset() }
            try insert.bind(userId, at: 1)
            try insert.bind(record.sheetId, at: 2)
            try insert.bind(record.at.millisecondsSince1970, at: 3)
            try insert.bind(record.kind.rawValue, at: 4)
            try insert.bind(record.method, at: 5)
            try insert.run()
        }
    }

    /// Adds counted activity records to the per-sheet totals (same transaction as the records).
    static func add(_ totals: ActivityTotals, _ db: Connection) throws {
        guard !totals.counts.isEmpty else { return }
        let total = try db.cachedStatement(
            """
            INSERT INTO sheet_totals (sheet_id, kind, method, total) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (sheet_id, kind, method) DO UPDATE SET total = total + excluded.total
            """)
        for entry in totals.counts {
            defer { total.reset() }
            try total.bind(entry.sheetId, at: 1)
            try total.bind(entry.kind.rawValue, at: 2)
            try total.bind(entry.method ?? "", at: 3)
            try total.bind(Int64(entry.count), at: 4)
            try total.run()
        }
    }

    /// Erases everything stored for the user: state, processed event ids, activity rows.
    static func erase(userId: String, _ db: Connection) throws {
        try db.run("DELETE FROM user_states WHERE user_id = ?1", [.text(userId)])
        try db.run("DELETE FROM processed_events WHERE user_id = ?1", [.text(userId)])
        try db.run("DELETE FROM sheet_activity WHERE user_id = ?1", [.text(userId)])
    }
}

/// The activity records of a batch's committed-to-be updates, counted per (sheet, kind, method): one
/// `sheet_totals` upsert per key and batch instead of one per record.
struct ActivityTotals {
    /// Few distinct keys per batch (mostly one sheet and kind), so a list searched linearly.
    private(set) var counts: [(sheetId: String, kind: SheetActivity.Kind, method: String?, count: Int)] = []

    mutating func add(_ records: [SheetActivity]) {
        for record in records {
            if let i = counts.firstIndex(where: { $0.kind == record.kind && $0.method == record.method && $0.sheetId == record.sheetId }) {
                counts[i].count += 1
            } else {
                counts.append((record.sheetId, record.kind, record.method, 1))
            }
        }
    }
}

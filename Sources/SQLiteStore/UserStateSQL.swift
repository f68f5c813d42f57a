import SQLiteKit
import SheetPolicy
import SheetStore

/// Reading and writing one user's `UserState`: one row of `user_states` (see `UserStateCodec`), on
/// the writer's and readers' connections directly (cached statements: the hot path).
enum UserStateSQL {
    /// The shared statements the hot path runs, in SQLite's spelling.
    static let replay = SQLDialect.sqlite.spell(ProcessedEventSQL.replay)
    static let insertEvent = SQLDialect.sqlite.spell(ProcessedEventSQL.insert)
    static let trimEvents = SQLDialect.sqlite.spell(ProcessedEventSQL.trim)
    static let upsertRollup = SQLDialect.sqlite.spell(RollupSQL.upsert)

    /// The user's state: one key lookup; no row is the empty state.
    static func load(userId: String, _ db: Connection) throws -> UserState {
        let statement = try db.cachedStatement("SELECT state FROM user_states WHERE user_id = ?1")
        defer { statement.reset() }
        try statement.bind(userId, at: 1)
        guard try statement.step() else { return UserState() }
        return try UserStateCodec.decode(statement.blob(at: 0))
    }

    /// Writes `new` when it differs from `old` (as loaded in this transaction); an empty state
    /// deletes the row, so that it reads exactly as a user never seen. Returns the bytes the row now
    /// reads as (the empty state's for a deleted row), or nil when nothing was written.
    static func writeChanges(userId: String, from old: UserState, to new: UserState, _ db: Connection) throws -> [UInt8]? {
        guard new != old else { return nil }
        let bytes = UserStateCodec.encode(new)
        if new == UserState() {
            let statement = try db.cachedStatement("DELETE FROM user_states WHERE user_id = ?1")
            defer { statement.reset() }
            try statement.bind(userId, at: 1)
            try statement.run()
            return bytes
        }
        let statement = try db.cachedStatement(
            """
            INSERT INTO user_states (user_id, state) VALUES (?1, ?2)
            ON CONFLICT (user_id) DO UPDATE SET state = excluded.state
            """)
        defer { statement.reset() }
        try statement.bind(userId, at: 1)
        try statement.bind(bytes, at: 2)
        try statement.run()
        return bytes
    }

    /// A batch's experiment facts (see `ExperimentSQL`), in the same transaction.
    static func writeExperimentFacts(_ writes: [ExperimentSQL.Write], _ db: Connection) throws {
        for write in writes {
            let statement = try db.cachedStatement(SQLDialect.sqlite.spell(write.sql))
            defer { statement.reset() }
            for (index, argument) in write.arguments.enumerated() { try statement.bind(SQLiteSession.value(argument), at: index + 1) }
            try statement.run()
        }
    }

    /// Records a processed event id and forgets the user's ids that fell out of the latest `keep`.
    static func recordEvent(userId: String, eventId: String, outcome: [UInt8], now: Int64, keep: Int, _ db: Connection) throws {
        let insert = try db.cachedStatement(insertEvent)
        defer { insert.reset() }
        try insert.bind(userId, at: 1)
        try insert.bind(eventId, at: 2)
        try insert.bind(outcome, at: 3)
        try insert.bind(now, at: 4)
        try insert.run()
        let trim = try db.cachedStatement(trimEvents)
        defer { trim.reset() }
        try trim.bind(userId, at: 1)
        try trim.bind(Int64(keep), at: 2)
        try trim.run()
    }

    /// Adds a batch's rollup changes, one upsert per (sheet, hour), in key order (same transaction).
    static func add(_ rollups: RollupDeltas, _ db: Connection) throws {
        guard !rollups.isEmpty else { return }
        let upsert = try db.cachedStatement(upsertRollup)
        for (key, counters) in rollups.sorted {
            defer { upsert.reset() }
            try upsert.bind(key.sheetId, at: 1)
            try upsert.bind(key.bucket, at: 2)
            for (i, value) in counters.values.enumerated() { try upsert.bind(value, at: i + 3) }
            try upsert.run()
        }
    }
}

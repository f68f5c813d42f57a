import PostgresKit
import SheetPolicy
import SheetStore

/// Reading and writing users' `UserState`: one row of `user_states` per user, its `state` the bytes
/// of `UserStateCodec` (the same as SQLite's), beside the user's version (see
/// migrations/postgres/0009_user_state_rows.sql).
enum PostgresUserStateSQL {
    static let loadSQL = "SELECT state FROM user_states WHERE user_id = $1"

    /// The state bytes of an empty state (the format byte alone), as a hex literal for `decode`.
    static let emptyStateHex = "31"

    /// The batch's users (`$1`, in user order) locked, in one statement: rows are inserted (and
    /// locked) in the order of the array; an existing row takes the version the row to insert drew
    /// (one `nextval` per user), a new one starts with the empty state. Returns every user's state.
    /// Should two writers ever deadlock anyway, the loser's batch fails here and runs again job by job.
    static let lockManySQL = """
        INSERT INTO user_states (user_id, version, state)
        SELECT u, nextval('user_versions_seq'), decode('\(emptyStateHex)', 'hex') FROM unnest($1::text[]) WITH ORDINALITY AS t(u, n) ORDER BY n
        ON CONFLICT (user_id) DO UPDATE SET version = excluded.version
        RETURNING user_id, state
        """

    /// The changed states of a batch: `$1` user ids, `$2` their states in hex (one row each).
    static let updateStatesSQL = """
        UPDATE user_states AS s SET state = decode(t.h, 'hex') FROM unnest($1::text[], $2::text[]) AS t(u, h) WHERE s.user_id = t.u
        """

    static func load(userId: String, _ db: PostgresConnection) throws -> UserState {
        guard let row = try db.query(loadSQL, [.text(userId)]).first else { return UserState() }
        return try state(row, at: 0)
    }

    /// The state in a `state` column (NULL: no row, the empty state).
    static func state(_ row: PostgresRow, at column: Int) throws(StoreError) -> UserState {
        guard row.optionalString(at: column) != nil else { return UserState() }
        return try UserStateCodec.decode(row.bytes(at: column))
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
}

import PostgresKit
import SheetPolicy
import Testing

@testable import PostgresStore
@testable import SQLiteStore
@testable import SheetStore

/// PostgreSQL's migration 9, from a populated database of version 8: every user's rows of the
/// normalized tables become one `user_states` row in the codec's format 1 (the bytes SQLite stores),
/// with the user's version from `user_versions`; the replaced tables go, experiment_exposures stays.
@Suite
struct UserStateRowMigrationTests {
    static let rich = "ü-Ωmega ✓"
    static let plain = "plain"
    static let versionOnly = "version-only"

    /// Rows of version 8 of every kind: unicode ids and segments with quotes, commas and braces, a
    /// stack with replaced ids (inserted out of order), heights that need every digit, an empty
    /// impression list, negative and absent values.
    static let version8Rows = [
        "SELECT setval('user_versions_seq', 40)",
        "INSERT INTO user_versions (user_id, version) VALUES ('\(rich)', 37), ('\(plain)', 12), ('\(versionOnly)', 21)",
        """
        INSERT INTO container_counts (user_id, container_id, filter, count, seq) VALUES
            ('\(rich)', 'inbox-é', '', 3, NULL), ('\(rich)', 'inbox-é', 'f:ß', -2, 9), ('\(plain)', 'c', '', 1, 1234567890123)
        """,
        "INSERT INTO latches (user_id, sheet_id, count) VALUES ('\(rich)', 'card-ü', 4), ('\(rich)', 'card-2', 0)",
        """
        INSERT INTO stack (user_id, position, sheet_id, mode, replaced_sheet_id) VALUES
            ('\(rich)', 2, 'step-3', 'replace', 'step-2'), ('\(rich)', 0, 'home', 'push', NULL),
            ('\(rich)', 1, 'step-2', 'replace', 'step-1-ü')
        """,
        """
        INSERT INTO content_heights (user_id, sheet_id, platform, height) VALUES
            ('\(rich)', 'home', 'ios', 0.1), ('\(rich)', 'home', 'android', 1e-7),
            ('\(rich)', 'step-2', 'ios', 0.3333333333333333), ('\(plain)', 'x', 'android', 812.5)
        """,
        """
        INSERT INTO impressions (user_id, sheet_id, times) VALUES
            ('\(rich)', 'promo-ü', '{1700000000123,1700000000456}'), ('\(rich)', 'empty', '{}')
        """,
        "INSERT INTO impression_totals (user_id, sheet_id, total) VALUES ('\(rich)', 'promo-ü', 7), ('\(rich)', 'empty', 1)",
        "INSERT INTO last_dismissals (user_id, sheet_id, at) VALUES ('\(rich)', 'promo-ü', 1700000000789)",
        """
        INSERT INTO user_segments (user_id, position, segment) VALUES
            ('\(rich)', 1, 'a"b\\c,{d}'), ('\(rich)', 0, 'vip'), ('\(rich)', 2, 'ñew')
        """,
        """
        INSERT INTO experiment_exposures (experiment_id, user_id, arm, exposed_at, impressions, conversions, pinned) VALUES
            ('exp-ü', '\(rich)', 'b', 1700000000000, 3, 1, 0)
        """,
        "INSERT INTO experiment_pins (user_id, experiment_id, arm) VALUES ('\(rich)', 'exp-2', 'control')",
    ]

    static var richState: UserState {
        var state = UserState()
        state.containers[ContainerKey(containerId: "inbox-é")] = ContainerCount(count: 3)
        state.containers[ContainerKey(containerId: "inbox-é", filter: "f:ß")] = ContainerCount(count: -2, seq: 9)
        state.latches = ["card-ü": 4, "card-2": 0]
        state.stack = [
            StackEntry(sheetId: "home", mode: .push),
            StackEntry(sheetId: "step-2", mode: .replace, replacedSheetId: "step-1-ü"),
            StackEntry(sheetId: "step-3", mode: .replace, replacedSheetId: "step-2"),
        ]
        state.contentHeights = [
            HeightKey(sheetId: "home", platform: .ios): 0.1,
            HeightKey(sheetId: "home", platform: .android): 1e-7,
            HeightKey(sheetId: "step-2", platform: .ios): 1.0 / 3.0,
        ]
        state.campaign.impressions = [
            "promo-ü": [Timestamp(millisecondsSince1970: 1_700_000_000_123), Timestamp(millisecondsSince1970: 1_700_000_000_456)],
            "empty": [],
        ]
        state.campaign.impressionTotals = ["promo-ü": 7, "empty": 1]
        state.campaign.lastDismissals = ["promo-ü": Timestamp(millisecondsSince1970: 1_700_000_000_789)]
        state.campaign.segments = ["vip", #"a"b\c,{d}"#, "ñew"]
        state.experiments.exposures = ["exp-ü": ExperimentState.Exposure(arm: "b", at: Timestamp(millisecondsSince1970: 1_700_000_000_000))]
        state.experiments.pins = ["exp-2": "control"]
        return state
    }

    static var plainState: UserState {
        var state = UserState()
        state.containers[ContainerKey(containerId: "c")] = ContainerCount(count: 1, seq: 1_234_567_890_123)
        state.contentHeights[HeightKey(sheetId: "x", platform: .android)] = 812.5
        return state
    }

    /// Every user's rows come back as the same state, field by field, at the same version; a user
    /// with a version and no rows keeps the version with an empty state; the replaced tables are gone.
    @Test func version8RowsBecomeOneRowPerUser() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        do {
            let db = try PostgresConnection(url: database.location)
            defer { db.close() }
            _ = try MigrationRunner(shippedPostgresMigrations.filter { $0.version <= 8 }).migrate(db)
            for sql in Self.version8Rows { try db.execute(sql) }
        }
        let store = try #require(try database.open() as? PostgresSheetStore)
        defer { store.close() }

        let rich = try store.userState(userId: Self.rich, unlessUserVersion: nil)
        #expect(rich.versions.user == 37)
        let state = try #require(rich.state)
        let wanted = Self.richState
        #expect(state.containers == wanted.containers)
        #expect(state.latches == wanted.latches)
        #expect(state.stack == wanted.stack)
        #expect(state.contentHeights == wanted.contentHeights)
        for (key, height) in state.contentHeights { #expect(height.bitPattern == wanted.contentHeights[key]?.bitPattern, "\(key)") }
        #expect(state.campaign.impressions == wanted.campaign.impressions)
        #expect(state.campaign.impressionTotals == wanted.campaign.impressionTotals)
        #expect(state.campaign.lastDismissals == wanted.campaign.lastDismissals)
        #expect(state.campaign.segments == wanted.campaign.segments)
        #expect(state.experiments == wanted.experiments)
        #expect(state == wanted)

        let plain = try store.userState(userId: Self.plain, unlessUserVersion: nil)
        #expect(plain.versions.user == 12)
        #expect(plain.state == Self.plainState)
        let versionOnly = try store.userState(userId: Self.versionOnly, unlessUserVersion: nil)
        #expect(versionOnly.versions.user == 21)
        #expect(versionOnly.state == UserState())
        #expect(try store.userState(userId: "never", unlessUserVersion: nil).versions.user == 0)

        // The stored bytes decode with the codec SQLite uses, and the results still count the exposure.
        let db = try PostgresConnection(url: database.location)
        defer { db.close() }
        let bytes = try #require(try db.query("SELECT state FROM user_states WHERE user_id = $1", [.text(Self.rich)]).first).bytes(at: 0)
        #expect(try UserStateCodec.decode(bytes) == wanted)
        #expect(try store.experimentCounts(experimentId: "exp-ü").arms["b"]?.impressions == 3)
        let tables = Set(try db.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()").map { $0.string(at: 0) })
        #expect(tables.isSuperset(of: ["user_states", "experiment_exposures", "processed_events"]))
        #expect(
            tables.isDisjoint(with: [
                "user_versions", "container_counts", "latches", "stack", "content_heights", "impressions", "impression_totals",
                "last_dismissals", "user_segments", "experiment_pins",
            ]))

        // A write after the migration reads the migrated state, and moves the version on from the sequence.
        _ = try store.update(userId: Self.rich, eventId: "e1") { state, _ in
            #expect(state == wanted)
            state.campaign.segments.append("later")
            return []
        }
        let after = try store.userState(userId: Self.rich, unlessUserVersion: 37)
        #expect(after.versions.user > 40)
        #expect(after.state?.campaign.segments == wanted.campaign.segments + ["later"])
        #expect(try store.sampleUsers(from: nil, limit: 10).map(\.userId).sorted() == [Self.plain, Self.versionOnly, Self.rich].sorted())
    }

    /// A write stores the codec's bytes of the new state (the bytes SQLite stores for it); emptying
    /// the state keeps the row (and its version) with the empty state's bytes; an erase removes it.
    @Test func rowsHoldTheCodecsBytes() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let store = try #require(try database.open() as? PostgresSheetStore)
        defer { store.close() }
        let db = try PostgresConnection(url: database.location)
        defer { db.close() }
        func row() throws -> (version: Int, state: [UInt8])? {
            try db.query("SELECT version, state FROM user_states WHERE user_id = $1", [.text(Self.rich)]).first.map {
                ($0.int(at: 0), $0.bytes(at: 1))
            }
        }
        _ = try store.update(userId: Self.rich, eventId: nil) { state, _ in
            state = Self.richState
            return []
        }
        let written = try #require(try row())
        #expect(written.state == UserStateCodec.encode(Self.richState))
        _ = try store.update(userId: Self.rich, eventId: nil) { state, _ in
            state = UserState()
            return []
        }
        let emptied = try #require(try row())
        #expect(emptied.state == UserStateCodec.encode(UserState()))
        #expect(emptied.version > written.version)
        try store.deleteUser(userId: Self.rich)
        #expect(try row() == nil)
    }
}

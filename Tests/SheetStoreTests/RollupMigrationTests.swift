import Foundation
import PostgresKit
import SQLiteKit
import SheetPolicy
import Testing

@testable import PostgresStore
@testable import SQLiteStore
@testable import SheetStore

/// Migration 6 on both backends, from a populated database of version 5: the activity log and the
/// totals become hour rollups (the totals' surplus, erased users' events, in the archive), then go;
/// processed event ids are numbered per user in time order and still replay.
@Suite struct RollupMigrationTests {
    static let hour: Int64 = 3_600_000
    /// Recent hours, well inside the retention (a store prunes when it opens).
    static let base = Int64(Date().timeIntervalSince1970) / 3600 - 10
    static let now = Int64(Date().timeIntervalSince1970)
    static func h(_ hours: Int64, plus ms: Int64 = 0) -> Timestamp { Timestamp(millisecondsSince1970: (base + hours) * hour + ms) }

    /// Rows of version 5, the same on both backends: (user, seq, sheet, at, kind, method).
    static let activity: [(String, Int, String, Int64, String, String?)] = [
        ("u1", 1, "offers", h(1, plus: 5).millisecondsSince1970, "impression", nil),
        ("u1", 2, "offers", h(1, plus: 6).millisecondsSince1970, "dismissal", "swipe"),
        ("u1", 3, "tips", h(2).millisecondsSince1970, "latch-release", nil),
        ("u1", 4, "offers", h(3).millisecondsSince1970, "impression", nil),
        ("u2", 1, "offers", h(2).millisecondsSince1970, "impression", nil),
        ("u2", 2, "offers", h(3, plus: 1).millisecondsSince1970, "opened", nil),
        ("u2", 3, "offers", h(3, plus: 2).millisecondsSince1970, "dismissal", "closeButton"),
    ]
    /// The totals kept for good: two more impressions than the log has (users erased since).
    static let totals: [(String, String, String, Int)] = [
        ("offers", "impression", "", 5), ("offers", "dismissal", "swipe", 1), ("offers", "dismissal", "closeButton", 1),
        ("offers", "opened", "", 1), ("tips", "latch-release", "", 1),
    ]
    /// (user, event id, processed at): u1's ids out of name order.
    static let events: [(String, String, Int64)] = [("u1", "e1", now - 100), ("u1", "e2", now - 150), ("u2", "e1", now - 130)]

    static var u1: UserState {
        var state = UserState()
        state.campaign.recordImpression(of: "offers", at: h(1, plus: 5), keepSeconds: nil)
        state.campaign.recordImpression(of: "offers", at: h(3), keepSeconds: nil)
        return state
    }

    static func version5Rows(outcome: (UInt8) -> String) -> [String] {
        activity.map { user, seq, sheet, at, kind, method in
            "INSERT INTO sheet_activity (user_id, seq, sheet_id, at, kind, method) VALUES ('\(user)', \(seq), '\(sheet)', \(at), '\(kind)', \(method.map { "'\($0)'" } ?? "NULL"))"
        }
            + totals.map { "INSERT INTO sheet_totals (sheet_id, kind, method, total) VALUES ('\($0.0)', '\($0.1)', '\($0.2)', \($0.3))" }
            + events.enumerated().map { i, event in
                "INSERT INTO processed_events (user_id, event_id, outcome, processed_at) VALUES ('\(event.0)', '\(event.1)', \(outcome(UInt8(i + 1))), \(event.2))"
            }
    }

    /// Creates `database` at version 5 with the rows above (and u1's state) in it.
    static func populateVersion5(_ database: TestDatabase) throws {
        switch database.backend {
        case .sqlite:
            let db = try Connection(path: database.location)
            defer { db.close() }
            _ = try MigrationRunner(shippedMigrations.filter { $0.version <= 5 }).migrate(db)
            for sql in version5Rows(outcome: { String(format: "X'%02x'", $0) }) { try db.run(sql) }
            try db.run("INSERT INTO user_states (user_id, state) VALUES ('u1', ?1)", [.blob(UserStateCodec.encode(u1))])
        case .postgres:
            let db = try PostgresConnection(url: database.location)
            defer { db.close() }
            _ = try MigrationRunner(shippedPostgresMigrations.filter { $0.version <= 5 }).migrate(db)
            for sql in version5Rows(outcome: { String(format: "'\\x%02x'::bytea", $0) }) { try db.execute(sql) }
            let times = u1.campaign.impressions["offers"]!.map { String($0.millisecondsSince1970) }.joined(separator: ",")
            try db.execute("INSERT INTO impressions (user_id, sheet_id, times) VALUES ('u1', 'offers', '{\(times)}')")
            try db.execute("INSERT INTO impression_totals (user_id, sheet_id, total) VALUES ('u1', 'offers', 2)")
        }
    }

    @Test(arguments: Backend.available) func version5ActivityBecomesRollups(_ backend: Backend) throws {
        let database = try TestDatabase(backend)
        defer { database.remove() }
        try Self.populateVersion5(database)
        let store = try database.open()
        defer { store.close() }

        #expect(
            try store.sheetStats(sheetId: "offers", since: nil)
                == SheetStats(impressions: 5, uniqueUsers: 2, dismissals: ["swipe": 1, "closeButton": 1], openedFrom: 1))
        #expect(
            try store.sheetStats(sheetId: "offers", since: Self.h(0))
                == SheetStats(impressions: 3, uniqueUsers: 2, dismissals: ["swipe": 1, "closeButton": 1], openedFrom: 1, countedFrom: Self.h(0)))
        // u1's latest impression is in hour 3, u2's in hour 2.
        #expect(
            try store.sheetStats(sheetId: "offers", since: Self.h(2))
                == SheetStats(impressions: 2, uniqueUsers: 2, dismissals: ["closeButton": 1], openedFrom: 1, countedFrom: Self.h(2)))
        #expect(
            try store.sheetStats(sheetId: "offers", since: Self.h(2, plus: 1))
                == SheetStats(impressions: 1, uniqueUsers: 1, dismissals: ["closeButton": 1], openedFrom: 1, countedFrom: Self.h(3)))
        #expect(try store.sheetStats(sheetId: "tips", since: nil) == SheetStats(latchReleases: 1))

        // The ids replay their outcomes; u1's next id is numbered after their two, in time order.
        #expect(try store.update(userId: "u1", eventId: "e1") { _ in [0] } == EventResult(outcome: [1], replayed: true))
        #expect(try store.update(userId: "u1", eventId: "e2") { _ in [0] } == EventResult(outcome: [2], replayed: true))
        #expect(try store.update(userId: "u2", eventId: "e1") { _ in [0] } == EventResult(outcome: [3], replayed: true))
        #expect(try store.update(userId: "u1", eventId: "e3") { _ in [4] }.replayed == false)
        #expect(try Self.eventIds(database) == ["u1 1 e2", "u1 2 e1", "u1 3 e3", "u2 1 e1"])
        #expect(try Self.tables(database).isDisjoint(with: ["sheet_activity", "sheet_totals"]))

        // u1's next impression moves them on from hour 3.
        _ = try store.update(userId: "u1", eventId: nil) { state, activity in
            #expect(state == Self.u1)
            state.campaign.recordImpression(of: "offers", at: Self.h(4), keepSeconds: nil)
            activity.append(SheetActivity(sheetId: "offers", kind: .impression, at: Self.h(4)))
            return []
        }
        #expect(
            try store.sheetStats(sheetId: "offers", since: Self.h(3))
                == SheetStats(impressions: 2, uniqueUsers: 1, dismissals: ["closeButton": 1], openedFrom: 1, countedFrom: Self.h(3)))
        #expect(try store.sheetStats(sheetId: "offers", since: nil).uniqueUsers == 2)
    }

    static func eventIds(_ database: TestDatabase) throws -> [String] {
        let sql = "SELECT user_id || ' ' || seq || ' ' || event_id FROM processed_events ORDER BY user_id, seq"
        switch database.backend {
        case .sqlite:
            let db = try Connection(path: database.location)
            defer { db.close() }
            return try db.query(sql) { $0.string(at: 0) }
        case .postgres:
            let db = try PostgresConnection(url: database.location)
            defer { db.close() }
            return try db.query(sql).map { $0.string(at: 0) }
        }
    }

    static func tables(_ database: TestDatabase) throws -> Set<String> {
        switch database.backend {
        case .sqlite:
            let db = try Connection(path: database.location)
            defer { db.close() }
            return Set(try db.query("SELECT name FROM sqlite_schema WHERE type = 'table'") { $0.string(at: 0) })
        case .postgres:
            let db = try PostgresConnection(url: database.location)
            defer { db.close() }
            return Set(try db.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()").map { $0.string(at: 0) })
        }
    }
}

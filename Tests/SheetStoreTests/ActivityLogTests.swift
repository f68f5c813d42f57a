import SQLiteKit
import SheetPolicy
import TestSupport
import Testing

@testable import SheetStore

/// The SQLite activity log after migration 5 (sheet_activity rebuilt with its `kind` check spelled
/// without an IN list): same rows, same numbering, same stats, same erase.
@Suite struct ActivityLogTests {
    static func t(_ ms: Int64) -> Timestamp { Timestamp(millisecondsSince1970: ms) }

    /// Appending a record builds no temporary B-tree (SQLite did, per row, for the check's IN list).
    @Test func appendPlanHasNoEphemeralTable() throws {
        try withStore { store, _ in
            let opcodes = try store.writer.write { db in
                try db.query("EXPLAIN \(UserStateSQL.appendSQL)", [.text("u"), .text("s"), .integer(1), .text("impression"), .null]) {
                    $0.string(at: 1)
                }
            }
            #expect(opcodes.contains("IdxInsert"))
            #expect(!opcodes.contains("OpenEphemeral"))
        }
    }

    /// The check still refuses a kind outside the four, and a missing one.
    @Test func kindCheckStillRefusesUnknownKinds() throws {
        try withStore { store, _ in
            try store.writer.write { db in
                try db.run("INSERT INTO sheet_activity VALUES ('u', 1, 's', 0, 'opened', NULL)")
                for kind in ["impression", "dismissal", "latch-release"] {
                    try db.run("INSERT INTO sheet_activity VALUES ('u', (SELECT max(seq) + 1 FROM sheet_activity), 's', 0, ?1, NULL)", [.text(kind)])
                }
                for bad: SQLiteValue in [.text("click"), .text("Impression"), .text(""), .null] {
                    #expect(throws: SQLiteError.self) {
                        try db.run("INSERT INTO sheet_activity VALUES ('u', 99, 's', 0, ?1, NULL)", [bad])
                    }
                }
            }
            #expect(try store.sheetStats(sheetId: "s", since: nil) == SheetStats(uniqueUsers: 1), "direct rows add no totals")
            #expect(
                try store.sheetStats(sheetId: "s", since: Self.t(0))
                    == SheetStats(impressions: 1, uniqueUsers: 1, dismissals: ["": 1], latchReleases: 1, openedFrom: 1))
        }
    }

    /// A version 4 database with activity rows opens at version 5 with every row kept as it was
    /// (user, seq, sheet, time, kind, method); stats read the same, new records number after each
    /// user's last, and an erase still removes a user's rows (the totals stay).
    @Test func version4ActivityRowsSurviveMigration5() throws {
        let dir = try TemporaryDirectory(prefix: "sheetstore-tests")
        defer { dir.remove() }
        let db = try Connection(path: dir.file())
        _ = try Migrator(migrations: shippedMigrations.filter { $0.version <= 4 }).migrate(db)
        #expect(try db.scalar("SELECT max(version) FROM schema_migrations") == .integer(4))
        let rows: [(String, Int64, String, Int64, String, String?)] = [
            ("u1", 1, "offers", 1_000, "impression", nil),
            ("u1", 2, "offers", 2_000, "dismissal", "swipe"),
            ("u1", 3, "tips", 2_500, "latch-release", nil),
            ("u2", 1, "offers", 3_000, "impression", nil),
            ("u2", 2, "offers", 4_000, "opened", nil),
            ("u3", 7, "offers", 5_000, "dismissal", "closeButton"),
        ]
        for (user, seq, sheet, at, kind, method) in rows {
            try db.run(
                "INSERT INTO sheet_activity (user_id, seq, sheet_id, at, kind, method) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                [.text(user), .integer(seq), .text(sheet), .integer(at), .text(kind), method.map { .text($0) } ?? .null])
        }
        try db.run("INSERT INTO sheet_totals (sheet_id, kind, method, total) VALUES ('offers', 'impression', '', 2)")
        db.close()

        let store = try SQLiteSheetStore.open(path: dir.file())
        defer { store.close() }
        let all = "SELECT user_id, seq, sheet_id, at, kind, method FROM sheet_activity ORDER BY user_id, seq"
        let read: (Statement) -> String = {
            "\($0.string(at: 0)) \($0.int64(at: 1)) \($0.string(at: 2)) \($0.int64(at: 3)) \($0.string(at: 4)) \($0.isNull(at: 5) ? "-" : $0.string(at: 5))"
        }
        let expected = rows.map { "\($0.0) \($0.1) \($0.2) \($0.3) \($0.4) \($0.5 ?? "-")" }
        #expect(try store.writer.write { try $0.query(all, row: read) } == expected)
        #expect(try store.writer.write { try $0.scalar("SELECT max(version) FROM schema_migrations") } == .integer(5))
        #expect(
            try store.sheetStats(sheetId: "offers", since: Self.t(0))
                == SheetStats(impressions: 2, uniqueUsers: 2, dismissals: ["swipe": 1, "closeButton": 1], openedFrom: 1))
        #expect(
            try store.sheetStats(sheetId: "offers", since: Self.t(3_000))
                == SheetStats(impressions: 1, uniqueUsers: 1, dismissals: ["closeButton": 1], openedFrom: 1))
        #expect(try store.sheetStats(sheetId: "offers", since: nil) == SheetStats(impressions: 2, uniqueUsers: 2))

        // New records continue each user's numbering.
        _ = try store.update(userId: "u3", eventId: nil) { _, activity in
            activity = [
                SheetActivity(sheetId: "offers", kind: .impression, at: Self.t(6_000)),
                SheetActivity(sheetId: "tips", kind: .dismissal, method: "swipe", at: Self.t(6_000)),
            ]
            return []
        }
        _ = try store.update(userId: "u4", eventId: nil) { _, activity in
            activity = [SheetActivity(sheetId: "offers", kind: .impression, at: Self.t(6_500))]
            return []
        }
        let seqs = try store.writer.write {
            try $0.query("SELECT user_id, seq FROM sheet_activity WHERE at >= 6000 ORDER BY at, seq") { "\($0.string(at: 0)) \($0.int64(at: 1))" }
        }
        #expect(seqs == ["u3 8", "u3 9", "u4 1"])
        #expect(try store.sheetStats(sheetId: "offers", since: nil) == SheetStats(impressions: 4, uniqueUsers: 4))
        #expect(try store.sheetStats(sheetId: "offers", since: Self.t(5_500)) == SheetStats(impressions: 2, uniqueUsers: 2))

        // Erase removes the user's rows and nothing else; the totals keep counting them.
        try store.deleteUser(userId: "u1")
        let left = try store.writer.write { try $0.query(all, row: read) }
        #expect(left.allSatisfy { !$0.hasPrefix("u1 ") })
        #expect(left.count == rows.count - 3 + 3)
        #expect(
            try store.sheetStats(sheetId: "offers", since: Self.t(0))
                == SheetStats(impressions: 3, uniqueUsers: 3, dismissals: ["closeButton": 1], openedFrom: 1))
        #expect(try store.sheetStats(sheetId: "offers", since: nil) == SheetStats(impressions: 4, uniqueUsers: 3))
    }
}

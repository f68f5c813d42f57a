import Concurrency
import Foundation
import SQLiteKit
import SQLiteStore
import SheetStore
import TestSupport
import Testing

/// `sheetd backup` and `sheetd restore` as an operator runs them, against a running `sheetd serve`.
@Suite(.serialized) struct BackupRestoreTests {
    /// Every count acknowledged before the backup started is in the copy, while a writer keeps
    /// writing through the live server during the backup (the server runs on a database with many
    /// users, so the copy takes long enough for writes to land while it runs).
    @Test func backupUnderWriteLoadHoldsEveryEventAcknowledgedBeforeItStarted() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-backup-load")
        defer { dir.remove() }
        let database = dir.file("db.sqlite")
        try Self.populate(database, users: 200_000)
        let sheetd = try LaunchedSheetd(["--access-log", "false"], database: database)
        let writer = CountWriter(port: sheetd.port)
        defer { writer.stop() }
        #expect(writer.waitForAcknowledged(200, seconds: 20), "the writer got no answers")

        let before = writer.acknowledged()
        let copy = dir.file("backup.sqlite")
        let run = try SheetdBinary.run(["backup", "--db", database, "--to", copy])
        let after = writer.acknowledged()
        #expect(writer.waitForAcknowledged(after.count + 50, seconds: 20))
        writer.stop()

        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stdout.contains(copy) && run.stdout.contains("integrity ok"), "\(run.stdout)")
        let users = run.stdout.split(separator: " ").firstIndex(of: "users,").flatMap { Int(run.stdout.split(separator: " ")[$0 - 1]) }
        #expect((users ?? 0) >= 200_000, "the users count: \(run.stdout)")
        #expect(after.count > before.count, "no write was acknowledged while the backup ran: the test proves nothing")
        #expect(writer.failures == 0, "writes failed during the backup")

        let db = try Connection(path: copy, flags: [.readOnly], options: .init(walJournal: false))
        defer { db.close() }
        // Count events are recorded under the report's kind (`count/<eventId>`).
        let stored = Set(try db.query("SELECT event_id FROM processed_events") { $0.string(at: 0) })
        let missing = before.filter { !stored.contains("count/" + $0) }
        #expect(stored.count >= before.count)
        #expect(missing.isEmpty, "\(missing.count) of \(before.count) acknowledged events are missing from the backup, e.g. \(missing.prefix(3))")
        #expect(try db.query("PRAGMA integrity_check") { $0.string(at: 0) } == ["ok"])
        #expect(!FileManager.default.fileExists(atPath: copy + "-wal"), "the backup is one self-contained file")
    }

    /// While a server holds the database, restore refuses (exit 1, a clear line) and changes nothing.
    @Test func restoreIsRefusedWhileAServerHoldsTheDatabase() throws {
        let sheetd = try LaunchedSheetd(["--access-log", "false"])
        #expect(try Self.http(sheetd.port, "PUT", "/v1/users/kept/containers/box/count", #"{"count":7}"#).status == 200)
        let dir = try TemporaryDirectory(prefix: "sheetd-restore-refused")
        defer { dir.remove() }
        let copy = dir.file("backup.sqlite")
        #expect(try SheetdBinary.run(["backup", "--db", sheetd.databasePath, "--to", copy]).status == 0)

        let run = try SheetdBinary.run(["restore", "--db", sheetd.databasePath, "--from", copy])
        #expect(run.status == 1)
        #expect(run.stderr.contains("in use") && run.stderr.contains("stop the server first"), "\(run.stderr)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(run.stderr)")
        // The server still serves the same database.
        let state = try Self.http(sheetd.port, "GET", "/v1/users/kept/state")
        #expect(state.status == 200 && state.body.contains("\"count\":7"), "\(state.body)")
    }

    /// The guard is the database file itself: with no lock file anywhere beside it (the probe deleted
    /// the old `<db>.sheetd-lock`), a restore and a second `serve` are still refused while a server
    /// runs, and every write the server acknowledged survives its restart.
    @Test func theLiveServersLockCannotBeDeletedOrReplaced() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-restore-guard")
        defer { dir.remove() }
        let database = dir.file("db.sqlite")
        let copy = dir.file("backup.sqlite")
        var acknowledged: [String] = []
        do {
            let sheetd = try LaunchedSheetd(["--access-log", "false"], database: database)
            for i in 0..<50 where try Self.http(sheetd.port, "PUT", "/v1/users/u\(i)/containers/box/count", #"{"count":1}"#).status == 200 {
                acknowledged.append("u\(i)")
            }
            #expect(try SheetdBinary.run(["backup", "--db", database, "--to", copy]).status == 0)
            DatabaseFiles.remove(database + ".sheetd-lock")
            let beside = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix("db.sqlite.") }
            #expect(beside.isEmpty, "files beside the database: \(beside)")

            let restore = try SheetdBinary.run(["restore", "--db", database, "--from", copy])
            #expect(restore.status == 1, "a restore ran under a live server: \(restore.stdout)")
            #expect(restore.stderr.contains("in use by another sheetd process (pid "), "\(restore.stderr)")
            let second = try SheetdBinary.run(
                ["serve", "--db", database, "--port", "0", "--access-log", "false"],
                environment: ["SHEETD_JWT_SECRET": "secret", "SHEETD_ADMIN_TOKEN": "admin"], deadline: 15)
            #expect(second.status != 0, "a second server started on the same database")
            #expect(second.stderr.contains("in use by another sheetd process"), "\(second.stderr)")
            for i in 50..<100 where try Self.http(sheetd.port, "PUT", "/v1/users/u\(i)/containers/box/count", #"{"count":1}"#).status == 200 {
                acknowledged.append("u\(i)")
            }
            sheetd.stop()
        }
        #expect(acknowledged.count == 100)
        let again = try LaunchedSheetd(["--access-log", "false"], database: database)
        let lost = try acknowledged.filter { try !Self.http(again.port, "GET", "/v1/users/\($0)/state").body.contains("\"count\":1") }
        #expect(lost.isEmpty, "\(lost.count) of \(acknowledged.count) acknowledged users lost, e.g. \(lost.prefix(3))")
        again.stop()
    }

    /// A backup is never written over the database's own files, and each bad target gets its own
    /// message (not SQLite's "database disk image is malformed"); the live server's later backups
    /// still work.
    @Test func backupRefusesTheDatabasesOwnFilesAndBadTargets() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-backup-targets")
        defer { dir.remove() }
        let database = dir.file("db.sqlite")
        let sheetd = try LaunchedSheetd(["--access-log", "false"], database: database)
        #expect(try Self.http(sheetd.port, "PUT", "/v1/users/kept/containers/box/count", #"{"count":7}"#).status == 200)
        try FileManager.default.createDirectory(atPath: dir.file("folder"), withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: dir.file("dangling"), withDestinationPath: dir.file("nowhere/x.sqlite"))
        try FileManager.default.createSymbolicLink(atPath: dir.file("wal-link"), withDestinationPath: database + "-wal")
        let cases: [(target: String, says: String)] = [
            (database, "the database itself"),
            (database + "-wal", "write-ahead log"),
            (database + "-shm", "shared-memory index"),
            (database + "-journal", "rollback journal"),
            (database + ".sheetd-lock", "lock file of earlier sheetd versions"),
            (dir.path + "/./db.sqlite-wal", "write-ahead log"),
            (dir.file("wal-link"), "write-ahead log"),
            (dir.file("folder"), "is a directory"),
            (dir.file("dangling"), "symbolic link to a file that does not exist"),
            ("/dev/full", "character device"),
            (dir.file("missing/backup.sqlite"), "does not exist"),
        ]
        for (target, says) in cases {
            let run = try SheetdBinary.run(["backup", "--db", database, "--to", target])
            #expect(run.status == 1, "\(target): \(run.stdout)")
            #expect(run.stderr.contains(says), "\(target): \(run.stderr)")
            #expect(!run.stderr.contains("malformed"), "\(target): \(run.stderr)")
        }
        // The live database is untouched: it still serves, and a backup to a sound target works.
        #expect(try Self.http(sheetd.port, "PUT", "/v1/users/kept/containers/box/count", #"{"count":8}"#).status == 200)
        let good = try SheetdBinary.run(["backup", "--db", database, "--to", dir.file("good.sqlite")])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(try Self.http(sheetd.port, "GET", "/v1/users/kept/state").body.contains("\"count\":8"))
        sheetd.stop()
    }

    /// A file that is not a sound sheetd database is refused before anything is replaced.
    @Test func restoreRefusesAFileThatIsNotASheetdDatabase() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-restore-bad")
        defer { dir.remove() }
        let database = dir.file("db.sqlite")
        try SQLiteSheetStore.migrate(path: database)
        let garbage = dir.file("garbage.sqlite")
        try Data("not a database at all, not even close".utf8).write(to: URL(fileURLWithPath: garbage))
        let plain = dir.file("plain.sqlite")
        let other = try Connection(path: plain)
        try other.execute("CREATE TABLE t (x); INSERT INTO t VALUES (1)")
        other.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: database))
        for file in [garbage, plain, dir.file("missing.sqlite")] {
            let run = try SheetdBinary.run(["restore", "--db", database, "--from", file])
            #expect(run.status == 1, "\(file): \(run.stdout) \(run.stderr)")
            #expect(!run.stderr.isEmpty)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: database)) == before)
        #expect(!FileManager.default.fileExists(atPath: database + ".restore-partial"))
    }

    /// Backup, more changes, stop, restore, serve again: the decisions and states are those of the
    /// moment of the backup, and the server takes writes again.
    @Test func restoreThenServeAnswersAsAtTheBackup() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-restore-serve")
        defer { dir.remove() }
        let database = dir.file("db.sqlite")
        let users = ["ana", "bo", "cy"]
        let probes = users.flatMap { ["/v1/users/\($0)/decision?screen=home&tab=accounts&platform=ios", "/v1/users/\($0)/state"] }
        var atBackup: [String] = []
        let copy = dir.file("backup.sqlite")
        do {
            let sheetd = try LaunchedSheetd(["--access-log", "false"], database: database)
            #expect(try Self.http(sheetd.port, "PUT", "/v1/sheets/offers", Self.offers).status == 201)
            for (i, user) in users.enumerated() {
                #expect(try Self.http(sheetd.port, "PUT", "/v1/users/\(user)/containers/offers-home/count", #"{"count":\#(i + 1)}"#).status == 200)
            }
            atBackup = try probes.map { try Self.http(sheetd.port, "GET", $0).body }
            let run = try SheetdBinary.run(["backup", "--db", database, "--to", copy])
            #expect(run.status == 0, "\(run.stderr)")
            // Changes after the backup, which the restore takes back.
            for user in users {
                #expect(try Self.http(sheetd.port, "PUT", "/v1/users/\(user)/containers/offers-home/count", #"{"count":0}"#).status == 200)
            }
            #expect(try Self.http(sheetd.port, "DELETE", "/v1/sheets/offers").status == 204)
            #expect(try probes.map { try Self.http(sheetd.port, "GET", $0).body } != atBackup)
            sheetd.stop()
        }
        let run = try SheetdBinary.run(["restore", "--db", database, "--from", copy])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("3 users"), "\(run.stdout)")
        #expect(!FileManager.default.fileExists(atPath: database + "-wal"))

        let again = try LaunchedSheetd(["--access-log", "false"], database: database)
        let restored = try probes.map { try Self.http(again.port, "GET", $0).body }
        #expect(restored == atBackup)
        #expect(try Self.http(again.port, "PUT", "/v1/users/ana/containers/offers-home/count", #"{"count":9}"#).status == 200)
        again.stop()
    }

    // MARK: - Helpers

    static let offers = #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10}"#

    /// A migrated database with `users` stored states, written by SQL in one transaction.
    static func populate(_ path: String, users: Int) throws {
        try SQLiteSheetStore.migrate(path: path)
        let db = try Connection(path: path)
        defer { db.close() }
        try db.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(users))
            INSERT INTO user_states (user_id, state) SELECT 'bulk-' || i, CAST('1c11:offers-home0:1:3~' AS BLOB) FROM n;
            PRAGMA wal_checkpoint(TRUNCATE);
            """)
    }

    struct Answer { var status: Int; var body: String }

    /// One request on its own connection, as the admin (`admin`).
    static func http(_ port: Int, _ method: String, _ path: String, _ body: String? = nil) throws -> Answer {
        let socket = try RawConnection(port: port)
        var request = "\(method) \(path) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin\r\nConnection: close\r\n"
        if let body { request += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)" } else { request += "\r\n" }
        try socket.send(request)
        let response = String(decoding: socket.readToEnd(), as: UTF8.self)
        guard response.hasPrefix("HTTP/1.1 "), let status = Int(response.dropFirst(9).prefix(3)) else {
            throw ClientError(description: "no answer to \(method) \(path): \(response.prefix(80))")
        }
        let text = response.range(of: "\r\n\r\n").map { String(response[$0.upperBound...]) } ?? ""
        return Answer(status: status, body: text)
    }
}

/// Count PUTs with event ids from one thread until `stop()`; remembers the ids the server acknowledged (200).
final class CountWriter: Sendable {
    private struct State {
        var acked: [String] = []
        var failed = 0
        var stopped = false
    }
    private let state = Locked(State())
    private let done = DispatchSemaphore(value: 0)

    init(port: Int) {
        Thread.detachNewThread { [self] in
            var n = 0
            while !isStopped {
                n += 1
                let id = "load-\(n)"
                let answer = try? BackupRestoreTests.http(
                    port, "PUT", "/v1/users/w\(n % 64)/containers/box/count", #"{"count":\#(n),"eventId":"\#(id)"}"#)
                state.withLock { s in
                    if answer?.status == 200 { s.acked.append(id) } else { s.failed += 1 }
                }
            }
            done.signal()
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }
    var failures: Int { state.withLock { $0.failed } }

    /// The ids acknowledged so far.
    func acknowledged() -> [String] { state.withLock { $0.acked } }

    func waitForAcknowledged(_ count: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if acknowledged().count >= count { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    /// Stops the writer and waits for its last request. Idempotent.
    func stop() {
        let first = state.withLock { s in
            defer { s.stopped = true }
            return !s.stopped
        }
        if first { done.wait() }
    }
}

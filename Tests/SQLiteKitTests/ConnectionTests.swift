import Foundation
import SQLiteKit
import TestSupport
import Testing

@Suite struct ConnectionTests {
    /// Opening applies the pragmas: WAL, synchronous, foreign keys, busy timeout.
    @Test func openSetsPragmas() throws {
        let dir = try TemporaryDirectory(prefix: "sqlitekit-tests")
        defer { dir.remove() }
        let db = try Connection(path: dir.file(), options: .init(synchronous: .full, busyTimeoutMilliseconds: 1234))
        #expect(try db.pragma("journal_mode") == .text("wal"))
        #expect(try db.pragma("synchronous") == .integer(2))
        #expect(try db.pragma("foreign_keys") == .integer(1))
        #expect(try db.pragma("busy_timeout") == .integer(1234))

        let normal = try Connection(path: dir.file(), options: .init(synchronous: .normal))
        #expect(try normal.pragma("synchronous") == .integer(1))
    }

    /// With the WAL tracked, automatic checkpoints stop (the WAL grows past SQLite's 1000-frame
    /// threshold), `walFrames` follows every commit, and a checkpoint from a second connection
    /// copies everything so that the next commit restarts the WAL from its beginning.
    @Test func trackedWALIsCheckpointedByItsOwner() throws {
        let dir = try TemporaryDirectory(prefix: "sqlitekit-tests")
        defer { dir.remove() }
        let writer = try Connection(path: dir.file())
        try writer.trackWALSize()
        try writer.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
        var last = 0
        for i in 0..<1200 {
            try writer.run("INSERT INTO t VALUES (?1, zeroblob(100))", [.integer(Int64(i))])
            #expect(writer.walFrames > last)
            last = writer.walFrames
        }
        #expect(last > 1200, "no automatic checkpoint reset the WAL")

        let checkpointer = try Connection(path: dir.file(), options: .init(walJournal: false))
        let result = try checkpointer.checkpoint(.passive)
        #expect(result.walFrames == last)
        #expect(result.checkpointedFrames == last)
        try writer.run("INSERT INTO t VALUES (?1, zeroblob(100))", [.integer(5000)])
        #expect(writer.walFrames < 10, "the WAL restarted after the complete checkpoint")
        #expect(try checkpointer.scalar("SELECT count(*) FROM t") == .integer(1201))
    }

    /// Every storage class survives a bind and read round trip, including empty strings and blobs.
    @Test func bindAndReadRoundTrip() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("CREATE TABLE t (i INTEGER, r REAL, s TEXT, b BLOB, n)")
        let statement = try db.cachedStatement("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)")
        try statement.bind(Int64.max, at: 1)
        try statement.bind(2.5, at: 2)
        try statement.bind("héllo\u{0}wörld", at: 3)
        try statement.bind([0, 1, 255] as [UInt8], at: 4)
        try statement.bindNull(at: 5)
        try statement.run()
        try db.run("INSERT INTO t VALUES (?1, ?2, ?3, ?4, ?5)", [-1, 0.0, "", .blob([]), .null])

        let rows = try db.query("SELECT i, r, s, b, n FROM t ORDER BY rowid") { row in
            (row.int64(at: 0), row.double(at: 1), row.string(at: 2), row.blob(at: 3), row.isNull(at: 4), row.value(at: 2))
        }
        #expect(rows.count == 2)
        #expect(rows[0].0 == Int64.max)
        #expect(rows[0].1 == 2.5)
        #expect(rows[0].2 == "héllo\u{0}wörld")
        #expect(rows[0].3 == [0, 1, 255])
        #expect(rows[0].4)
        #expect(rows[1].2 == "")
        #expect(rows[1].5 == .text(""), "the empty string is bound as text, not NULL")
        #expect(rows[1].3 == [])
        #expect(try db.scalar("SELECT typeof(b) FROM t WHERE i = -1") == .text("blob"), "an empty blob is not NULL")
    }

    /// A failing statement throws SQLiteError with its code, SQLite's message and the SQL.
    @Test func errorsNameTheSQL() throws {
        let db = try Connection(path: ":memory:")
        try db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)")
        let prepareError = #expect(throws: SQLiteError.self) { try db.run("SELECT nope FROM t") }
        #expect(prepareError?.code == .error)
        #expect(prepareError?.sql == "SELECT nope FROM t")
        #expect(prepareError?.message.contains("nope") == true)
        #expect(prepareError?.description.contains("SELECT nope FROM t") == true)

        try db.run("INSERT INTO t VALUES (1, 'a')")
        let constraint = #expect(throws: SQLiteError.self) { try db.run("INSERT INTO t VALUES (?1, 'b')", [1]) }
        let error = try #require(constraint)
        #expect(error.code == .constraint)
        #expect(error.extendedCode != .constraint, "extended codes are on")
        #expect(ResultCode.constraint ~= error.extendedCode, "a primary code matches its family")
        #expect(!(ResultCode.busy ~= error.extendedCode))
        #expect(!error.isTransient)
        #expect(error.sql == "INSERT INTO t VALUES (?1, 'b')")
        #expect(!error.description.contains("'1'"))
        switch error {
        case ResultCode.constraint: break
        default: Issue.record("pattern match on the code family failed")
        }
    }

    /// A throwing transaction body rolls back; a returning one commits.
    @Test func transactionRollsBackOnError() throws {
        struct Boom: Error {}
        let dir = try TemporaryDirectory(prefix: "sqlitekit-tests")
        defer { dir.remove() }
        let db = try Connection(path: dir.file())
        try db.execute("CREATE TABLE t (v INTEGER)")
        #expect(throws: Boom.self) {
            try db.transaction(.immediate) {
                try db.run("INSERT INTO t VALUES (1)")
                throw Boom()
            }
        }
        #expect(db.isAutocommit)
        #expect(try db.scalar("SELECT count(*) FROM t") == .integer(0))
        try db.transaction(.immediate) {
            try db.run("INSERT INTO t VALUES (2)")
            #expect(throws: Boom.self) {
                try db.savepoint {
                    try db.run("INSERT INTO t VALUES (3)")
                    throw Boom()
                }
            }
        }
        #expect(try db.query("SELECT v FROM t") { $0.int(at: 0) } == [2])
    }

    /// Cached statements are prepared once per SQL text and reused, reset and unbound.
    @Test func statementCacheReusesStatements() throws {
        let db = try Connection(path: ":memory:")
        let first = try db.cachedStatement("SELECT ?1")
        try first.bind(5, at: 1)
        #expect(try first.step())
        let again = try db.cachedStatement("SELECT ?1")
        #expect(first === again)
        #expect(try again.step())
        #expect(again.isNull(at: 0), "bindings were cleared")
        again.reset()
        _ = try db.scalar("SELECT 2")
        #expect(db.cachedStatementCount == 2)
    }

    /// A second writer waiting past the busy timeout gets SQLITE_BUSY, a transient error.
    @Test func busyIsTransient() throws {
        let dir = try TemporaryDirectory(prefix: "sqlitekit-tests")
        defer { dir.remove() }
        let a = try Connection(path: dir.file(), options: .init(busyTimeoutMilliseconds: 10))
        let b = try Connection(path: dir.file(), options: .init(busyTimeoutMilliseconds: 10))
        try a.execute("CREATE TABLE t (v INTEGER)")
        try a.run("BEGIN IMMEDIATE")
        let error = try #require(#expect(throws: SQLiteError.self) { try b.run("BEGIN IMMEDIATE") })
        #expect(error.code == .busy)
        #expect(error.isTransient)
        a.rollbackIfNeeded()
        #expect(a.isAutocommit)
    }

    /// Opening a file that cannot exist fails with CANTOPEN and leaves nothing open.
    @Test func openFailureThrows() throws {
        let error = try #require(
            #expect(throws: SQLiteError.self) { _ = try Connection(path: "/nonexistent-dir/x/y.sqlite") })
        #expect(error.code == .cantopen)
        #expect(error.message.contains("/nonexistent-dir/x/y.sqlite"))
    }

    /// A closed connection refuses work with SQLITE_MISUSE instead of touching freed memory.
    @Test func closedConnectionThrowsMisuse() throws {
        let db = try Connection(path: ":memory:")
        db.close()
        db.close()
        let error = try #require(#expect(throws: SQLiteError.self) { try db.execute("SELECT 1") })
        #expect(error.code == .misuse)
    }
}

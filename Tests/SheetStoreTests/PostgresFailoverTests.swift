import PostgresKit
import SQLiteStore
import SheetStore
import Testing

@testable import PostgresStore

#if canImport(Glibc)
import Glibc
#endif

/// What a failover asks of the PostgreSQL backend: only a writable server is used (a standby or a
/// read-only primary is noticed at connect and on a live session), and reconnection attempts are
/// bounded and counted. `scripts/failover-test.sh` runs the real failover.
@Suite
struct PostgresFailoverTests {
    /// The URL of a database whose sessions start read-only, as on a standby or a fenced primary.
    static func readOnly(_ url: String, targetAny: Bool) -> String {
        let separator = url.contains("?") ? "&" : "?"
        return url + separator + "options=-cdefault_transaction_read_only%3Don" + (targetAny ? "&target_session_attrs=any" : "")
    }

    /// By default libpq looks for a read-write session (target_session_attrs=read-write) and refuses
    /// this one; told to take any, sheetd's own check refuses it with SQLSTATE 25006.
    @Test func aReadOnlyServerIsRefusedAtConnect() throws {
        let url = try Backend.requirePostgresURL()
        for targetAny in [false, true] {
            do {
                _ = try PostgresConnection(url: Self.readOnly(url, targetAny: targetAny))
                Issue.record("connected to a read-only session (target any: \(targetAny))")
            } catch {
                #expect(error.connectionLost)
                #expect(error.isTransient, "a client retries: the primary may be elsewhere shortly")
                if targetAny { #expect(error.isReadOnly, "\(error)") } else { #expect(error.message.contains("read-only"), "\(error)") }
            }
        }
        let writable = try PostgresConnection(url: url)
        defer { writable.close() }
        #expect(!writable.serverIsReadOnly)
    }

    /// A live session whose server stops taking writes (here the session itself turned read-only,
    /// as every session of a fenced primary does): the write fails with 25006 and a retryable error,
    /// the session is dropped instead of going back to the pool, and the next one writes.
    @Test func aSessionThatTurnsReadOnlyIsReplaced() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let connector = PostgresConnector(url: database.location)
        let pool = PostgresPool(connector: connector, capacity: 1)
        defer { pool.close() }
        let first = try pool.withConnection { db in
            try db.execute("CREATE TABLE writes (n int)")
            try db.execute("SET default_transaction_read_only = on")
            return db.backendPID
        }
        do {
            try pool.withConnection { db in
                #expect(db.backendPID == first, "the same pooled session")
                #expect(db.serverIsReadOnly, "libpq reported the setting")
                try db.execute("INSERT INTO writes VALUES (1)")
            }
            Issue.record("a read-only session wrote")
        } catch let error as PostgresError {
            #expect(error.isReadOnly && error.connectionLost && error.isTransient, "\(error)")
        }
        let second = try pool.withConnection { db in
            try db.execute("INSERT INTO writes VALUES (2)")
            return db.backendPID
        }
        #expect(second != first, "a new session replaced the read-only one")
        let statistics = connector.statistics
        #expect(statistics.readOnlySessions == 1)
        #expect(statistics.connects == 2)
        #expect(statistics.failures == 0)
    }

    /// While no server answers, attempts are bounded: after a failure, calls fail at once until the
    /// backoff has passed, with a message that says so; the failures are counted.
    @Test func attemptsWaitForTheBackoffAfterAFailure() throws {
        // Port 1 on 127.0.0.1: nothing listens, the connection is refused at once.
        let connector = PostgresConnector(url: "postgres://sheetd@127.0.0.1:1/sheetd", backoffMilliseconds: (60_000, 60_000))
        var messages: [String] = []
        for _ in 0..<5 {
            do {
                _ = try connector.connect()
                Issue.record("connected to port 1")
            } catch {
                #expect(error.connectionLost)
                messages.append(error.message)
            }
        }
        let statistics = connector.statistics
        #expect(statistics.failures == 1, "one attempt; the other four waited for the backoff")
        #expect(statistics.connects == 0)
        #expect(statistics.backoffMilliseconds == 60_000)
        #expect(messages.dropFirst().allSatisfy { $0.contains("retrying shortly") }, "\(messages)")
        // The listener keeps its own backoff: it may attempt at any time.
        #expect(throws: PostgresError.self) { _ = try connector.connect(honoringBackoff: false) }
        #expect(connector.statistics.failures == 2)
    }

    /// The backoff doubles from the first wait up to the longest, and a success resets it.
    @Test func theBackoffDoublesToItsLimitAndResets() throws {
        let url = try Backend.requirePostgresURL()
        let refused = PostgresConnector(url: "postgres://sheetd@127.0.0.1:1/sheetd", backoffMilliseconds: (1, 4))
        var seen: [Int] = []
        for _ in 0..<4 {
            usleep(10_000)  // past the last window, so that this failure starts the next one
            _ = try? refused.connect(honoringBackoff: false)
            seen.append(refused.statistics.backoffMilliseconds)
        }
        #expect(seen == [1, 2, 4, 4])
        let reachable = PostgresConnector(url: url)
        let db = try reachable.connect()
        db.close()
        #expect(reachable.statistics.backoffMilliseconds == 0)
        #expect(reachable.statistics.connects == 1)
    }

    /// The store's readiness (GET /readyz) fails on a read-only server and the store reports its
    /// connection statistics (GET /metrics).
    @Test func theStoreCountsItsConnections() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let store = try database.open()
        defer { store.close() }
        try store.ping()
        let statistics = try #require(store.connectionStatistics)
        #expect(statistics.connects >= 1)
        #expect(statistics.failures == 0)
        #expect(throws: StoreError.self) {
            _ = try PostgresSheetStore.open(url: Self.readOnly(database.location, targetAny: true), readerConnections: 1)
        }
    }
}

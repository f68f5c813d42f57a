import Dispatch
import Foundation
import PostgresKit
import SQLiteStore
import SheetPolicy
import SheetStore
import Synchronization
import TestSupport
import Testing

@testable import PostgresStore

/// What only the PostgreSQL backend does: migrations shared by replicas, replicas writing the same
/// users, connections lost and the database going away.
@Suite
struct PostgresStoreTests {
    static let key = ContainerKey(containerId: "c")

    /// An empty database gets every shipped migration with its checksum; a second run applies nothing.
    @Test func migratesOnceAndRecordsChecksums() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        #expect(try PostgresSheetStore.migrationStatus(url: database.location).allSatisfy { !$0.applied })
        #expect(try PostgresSheetStore.migrate(url: database.location) == shippedPostgresMigrations.map(\.version))
        #expect(try PostgresSheetStore.migrate(url: database.location) == [])
        let status = try PostgresSheetStore.migrationStatus(url: database.location)
        #expect(status.map(\.version) == shippedPostgresMigrations.map(\.version))
        #expect(status.allSatisfy { $0.applied && $0.checksumMatches == true && $0.appliedAt != nil })
        #expect(shippedPostgresMigrations.map(\.version) == shippedMigrations.map(\.version), "the same numbering as SQLite")
    }

    /// Replicas starting together: the advisory lock lets exactly one apply each migration.
    @Test func replicasStartingTogetherMigrateOnce() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let applied = ConcurrentCounter()
        runOnThreads(6) { _ in
            let versions = try! PostgresSheetStore.migrate(url: database.location)
            for _ in versions { applied.add() }
        }
        #expect(applied.value == shippedPostgresMigrations.count)
    }

    /// A changed checksum or a newer schema stops start-up, as on SQLite.
    @Test func refusesTamperedAndNewerSchemas() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        try PostgresSheetStore.migrate(url: database.location)
        let db = try PostgresConnection(url: database.location)
        defer { db.close() }
        try db.execute("UPDATE schema_migrations SET checksum = 'x' WHERE version = 1")
        #expect(throws: StoreError.checksumMismatch(version: 1, name: "initial")) {
            _ = try PostgresSheetStore.open(url: database.location, readerConnections: 1)
        }
        try db.execute(
            "UPDATE schema_migrations SET checksum = '\(try #require(PostgresSheetStore.migrationStatus(url: database.location).first).checksum)' WHERE version = 1"
        )
        try db.execute("INSERT INTO schema_migrations VALUES (999, 'future', 'abc', 'now')")
        #expect(throws: StoreError.schemaTooNew(database: 999, binary: shippedPostgresMigrations.map(\.version).max() ?? 0)) {
            _ = try PostgresSheetStore.open(url: database.location, readerConnections: 1)
        }
    }

    /// Two replicas updating the same users at once lose no update: the user's version row orders them.
    @Test func replicasWritingTheSameUsersLoseNothing() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let replicas = [try database.open(), try database.open()]
        defer { for replica in replicas { replica.close() } }
        runOnThreads(8) { t in
            for i in 0..<40 {
                _ = try! replicas[t % 2].update(userId: "u\(i % 4)", eventId: "t\(t)-\(i)") { state in
                    state.containers[Self.key, default: ContainerCount(count: 0)].count += 1
                    return []
                }
            }
        }
        let total = try (0..<4).map { try replicas[0].userState(userId: "u\($0)").count(for: Self.key) }.reduce(0, +)
        #expect(total == 8 * 40)
    }

    /// A batch is pipelined (two round trips); when one of its statements fails in the database
    /// (here a user id longer than the schema allows, which the service would have refused),
    /// the batch runs again one update at a time: only that update fails, the others commit.
    @Test func aStatementFailingInABatchFailsOnlyItsUpdate() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let store = try PostgresSheetStore.open(url: database.location, readerConnections: 2, writerConnections: 1)
        defer { store.close() }
        let done = DispatchGroup()
        let results = Mutex<[Int: Result<EventResult, any Error>]>([:])
        let before = store.writeStatistics.commits
        for i in 0..<40 {
            done.enter()
            let user = i == 17 ? String(repeating: "x", count: 200) : "u\(i % 5)"
            store.submit(
                userId: user, eventId: "e\(i)",
                { state in
                    state.containers[ContainerKey(containerId: "c"), default: ContainerCount(count: 0)].count += 1
                    return [UInt8(i)]
                }
            ) { result in
                results.withLock { $0[i] = result }
                done.leave()
            }
        }
        done.wait()
        let all = results.withLock { $0 }
        for i in 0..<40 {
            let result = try #require(all[i])
            if i == 17 {
                #expect(throws: StoreError.self) { try result.get() }
            } else {
                #expect(try result.get().outcome == [UInt8(i)])
            }
        }
        let total = try (0..<5).map { try store.userState(userId: "u\($0)").count(for: Self.key) }.reduce(0, +)
        #expect(total == 39)
        #expect(store.writeStatistics.commits - before < 40, "the updates shared transactions")
        // A replay of every event answers the first outcome, through the pipelined path again.
        for i in [0, 16, 18, 39] {
            let again = try store.update(userId: "u\(i % 5)", eventId: "e\(i)") { _ in [255] }
            #expect(again.replayed && again.outcome == [UInt8(i)])
        }
    }

    /// A password in the URL never shows in the error of a failed connection (libpq's message, the
    /// store's error, or what the service logs through `redacted`).
    @Test func passwordsStayOutOfErrors() throws {
        let password = "pw-Zq8Kx3-secret"
        // Port 1 on 127.0.0.1: nothing listens, the connection is refused.
        let url = "postgres://sheetd:\(password)@127.0.0.1:1/sheetd?connect_timeout=2"
        var seen: [String] = []
        do {
            _ = try PostgresSheetStore.open(url: url, readerConnections: 1)
            Issue.record("connected to port 1")
        } catch {
            seen.append("\(error)")
            seen.append(String(describing: error))
            if case .unavailable(let message) = error { seen.append(message) } else { Issue.record("expected unavailable, got \(error)") }
        }
        do {
            _ = try PostgresConnection(url: url + "&password=\(password)")
        } catch {
            seen.append("\(error)")
            seen.append(error.message)
        }
        seen.append(PostgresURL.redacted(url))
        seen.append(PostgresURL.redacted("postgresql://127.0.0.1/db?user=a&password=\(password)&sslmode=disable"))
        #expect(seen.count == 7)
        for text in seen { #expect(!text.contains(password), "password in: \(text)") }
        #expect(seen[0].contains("127.0.0.1"), "the error still says where: \(seen[0])")
    }

    /// Every connection of the store killed by the server: the calls in flight fail with
    /// `unavailable` at worst, and the next ones reconnect by themselves.
    @Test func lostConnectionsAreMadeAgain() throws {
        let database = try TestDatabase(.postgres)
        defer { database.remove() }
        let store = try database.open()
        defer { store.close() }
        _ = try store.update(userId: "u", eventId: "e0") { state in
            state.latches["l"] = 0; return []
        }
        _ = try store.userState(userId: "u")
        let schema = try #require(database.location.split(separator: "=").last.map(String.init))
        let admin = try PostgresConnection(url: try Backend.requirePostgresURL())
        defer { admin.close() }
        let killed = try admin.query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [.text(schema)])
        #expect(killed.count >= 2, "the reader and the writer were connected")
        var failures = 0
        for i in 1...4
        where failsUnavailable({
            _ = try store.update(userId: "u", eventId: "e\(i)") { state in
                state.latches["l"] = i; return []
            }
        }) {
            failures += 1
        }
        #expect(failures <= 1, "only the call that found the dead connection fails")
        #expect(
            try store.update(userId: "u", eventId: "e9") { state in
                state.latches["l"] = 9; return []
            }.replayed == false)
        var readFailures = 0
        for _ in 0..<3 where failsUnavailable({ _ = try store.userState(userId: "u") }) { readFailures += 1 }
        #expect(readFailures <= 1)
        #expect(try store.userState(userId: "u").latches["l"] == 9)
        try store.ping()
    }

    /// The database stopped: writes and ping fail with `unavailable` (503 with Retry-After), nothing
    /// acknowledged is lost, and the store answers again within 2 s of the database returning.
    @Test(.timeLimit(.minutes(2))) func recoversWithinTwoSecondsOfTheDatabaseReturning() throws {
        let cluster = try Cluster.start()
        defer { cluster.stop() }
        let store = try PostgresSheetStore.open(url: cluster.url, readerConnections: 2)
        defer { store.close() }
        var acknowledged: [Int] = []
        for i in 0..<20 {
            _ = try store.update(userId: "u\(i)", eventId: "e") { state in
                state.latches["l"] = i; return []
            }
            acknowledged.append(i)
        }
        try cluster.run("down")
        #expect { try store.ping() } throws: { error in if case StoreError.unavailable = error { true } else { false } }
        #expect {
            _ = try store.update(userId: "u0", eventId: "down") { _ in [] }
        } throws: { error in if case StoreError.unavailable = error { true } else { false } }
        #expect { _ = try store.userState(userId: "u0") } throws: { error in
            if case StoreError.unavailable = error { true } else { false }
        }
        try cluster.run("up")
        let back = ContinuousClock.now
        var recovered: Duration?
        while ContinuousClock.now - back < .seconds(10) {
            if (try? store.ping()) != nil, (try? store.update(userId: "u0", eventId: "after") { _ in [] }) != nil {
                recovered = ContinuousClock.now - back
                break
            }
            usleep(50_000)
        }
        let took = try #require(recovered, "the store did not recover")
        print("recovered \(took) after the database came back")
        #expect(took < .seconds(2))
        for i in acknowledged { #expect(try store.userState(userId: "u\(i)").latches["l"] == i) }
    }
}

/// True when `body` throws `StoreError.unavailable`; any other error is recorded as an issue.
func failsUnavailable(_ body: () throws -> Void) -> Bool {
    do {
        try body()
        return false
    } catch let error as StoreError {
        if case .unavailable = error { return true }
        Issue.record("expected unavailable, got \(error)")
        return false
    } catch {
        Issue.record("expected unavailable, got \(error)")
        return false
    }
}

/// A PostgreSQL cluster of its own (scripts/postgres.sh), for the tests that stop the server.
struct Cluster {
    let directory: String
    let url: String

    static var script: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "scripts/postgres.sh").path
    }

    static func start() throws -> Cluster {
        let directory = NSTemporaryDirectory() + "sheetd-pg-test-" + UUID().uuidString.prefix(8)
        try shell([script, "start", directory])
        let url = try String(contentsOfFile: directory + "/url", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return Cluster(directory: directory, url: url)
    }

    func run(_ command: String) throws { try Self.shell([Self.script, command, directory]) }

    func stop() { try? Self.shell([Self.script, "stop", directory]) }

    /// Runs the script through system(3): no pipes (the server it starts would keep one open),
    /// and a plain waitpid instead of Foundation's Process monitoring.
    static func shell(_ arguments: [String]) throws {
        let command = "bash " + arguments.map { "'\($0)'" }.joined(separator: " ") + " >/dev/null 2>&1"
        let status = system(command)
        guard status == 0 else { throw StoreError.failure("\(command) exited \(status)") }
    }
}

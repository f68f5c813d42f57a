import Concurrency
import PostgresKit
import SheetPolicy
import SheetStore
import Synchronization

/// PostgreSQL's side of the group-commit engine (`GroupCommitEngine`): one writer connection per
/// engine. `synchronous_commit` stays on: the commit that completes a batch's jobs is on disk.
struct PostgresWriterBackend: GroupCommitBackend {
    /// Shared with the store's other sessions: bounded, counted attempts on the writable server.
    let connector: PostgresConnector
    /// The writer's connection, made on first use and again after a loss; a session holds the lock
    /// for its batch (the engine's thread, or `prune` and `closeConnection` while the queue is idle).
    let connection = Locked<PostgresConnection?>(nil)
    /// Tells the other replicas which users each committed batch changed (one NOTIFY per batch).
    let notifier: ChangeNotifier
    /// Run with the catalog version read in each batch's transaction, before its bodies run.
    let catalogCheck: BatchCatalogVersionCheck

    func withSession<R, E: Error>(_ body: (inout PostgresBatchSession) throws(E) -> R) throws(E) -> R {
        try connection.withLock { (current: inout PostgresConnection?) throws(E) -> R in
            var session = PostgresBatchSession(backend: self, connection: current)
            defer { current = session.connection }
            return try body(&session)
        }
    }

    /// Closes the writer's connection (after the engine closed).
    func closeConnection() {
        connection.withLock { current in
            current?.close()
            current = nil
        }
    }
}

/// PostgreSQL's dialect of a batch, in two round trips (libpq pipeline mode): first BEGIN, one
/// locking upsert of the batch's `user_states` rows (in user order) that bumps each user's version and
/// returns their states, the event ids already seen and the catalog version; then the changed
/// states (one multi-row update), the event ids, the experiment facts, the rollups, the
/// notifications to the other replicas (delivered at COMMIT) and COMMIT.
struct PostgresBatchSession: GroupCommitSession {
    let backend: PostgresWriterBackend
    /// The writer's connection, borrowed for the session (`withSession` puts it back).
    private(set) var connection: PostgresConnection?
    /// The connection of the open transaction.
    private var db: PostgresConnection?
    /// The COMMIT itself failed (or its answer was lost): the outcome is unknown, nobody is acknowledged.
    private var commitFailed = false

    init(backend: PostgresWriterBackend, connection: PostgresConnection?) {
        self.backend = backend
        self.connection = connection
    }

    /// The writer's connection, connected again when it broke.
    private mutating func connected() throws(PostgresError) -> PostgresConnection {
        if let connection, connection.isHealthy { return connection }
        connection?.close()
        connection = nil
        let db = try backend.connector.connect()
        connection = db
        return db
    }

    /// Ends what is left of a transaction on the writer's connection; drops the connection if broken.
    private mutating func dropIfBroken() {
        if let current = connection, !current.isHealthy || current.inTransaction {
            current.rollbackIfNeeded()
            if !current.isHealthy {
                current.close()
                connection = nil
            }
        }
    }

    mutating func begin(users: [String], events: [EventKey]) throws -> BatchReads {
        commitFailed = false
        db = nil
        let db = try connected()
        self.db = db
        var read: [PostgresBatchSQL.Statement] = [
            ("BEGIN", []),
            // First, so that a replica updating the same users waits here, and reads the committed
            // state (and event ids) afterwards: READ COMMITTED takes a new snapshot per statement.
            (PostgresUserStateSQL.lockManySQL, [PostgresUserStateSQL.textArray(users)]),
        ]
        let replayIndex = events.isEmpty ? nil : read.count
        if replayIndex != nil {
            read.append(
                (
                    PostgresBatchSQL.replayManySQL,
                    [PostgresUserStateSQL.textArray(events.map(\.userId)), PostgresUserStateSQL.textArray(events.map(\.eventId))]
                ))
        }
        let check = backend.catalogCheck.current
        let catalogIndex = check == nil ? nil : read.count
        if catalogIndex != nil { read.append((PostgresBatchSQL.catalogVersionSQL, [])) }
        let results = try db.pipeline(read)
        for result in results {
            if case .failure(let error) = result { throw error }
        }
        guard results.count == read.count, case .success(let locked) = results[1], locked.affectedRows == users.count else {
            throw StoreError.failure("the batch's users were not all locked")
        }
        var reads = BatchReads()
        for row in locked { reads.states[row.string(at: 0)] = try PostgresUserStateSQL.state(row, at: 1) }
        if let replayIndex, case .success(let replays) = results[replayIndex] {
            for row in replays { reads.processed[EventKey(userId: row.string(at: 0), eventId: row.string(at: 1))] = row.bytes(at: 2) }
        }
        if let check, let catalogIndex, case .success(let rows) = results[catalogIndex] {
            check(Int64(rows.first?.string(at: 0) ?? "") ?? 0)
        }
        return reads
    }

    mutating func commit(_ writes: BatchWrites) throws {
        guard let db else { throw StoreError.failure("no open transaction") }
        var statements = PostgresBatchSQL.statements(writes)
        for payload in backend.notifier.userPayloads(writes.changedUsers) {
            statements.append((PostgresBatchSQL.notifySQL, [.text(backend.notifier.channel), .text(payload)]))
        }
        statements.append(("COMMIT", []))
        let results = try db.pipeline(statements)
        for result in results.dropLast() {
            if case .failure(let error) = result { throw error }
        }
        if case .failure(let error)? = results.last {
            commitFailed = true
            throw error
        }
    }

    mutating func abandon(after error: any Error) -> BatchFailure {
        defer { db = nil }
        guard let db, db.isHealthy, !commitFailed else {
            // The connection broke on the way, or the COMMIT failed: the outcome is unknown, and a
            // retry with the same event id answers the first outcome if it did commit.
            dropIfBroken()
            return .batch
        }
        db.rollbackIfNeeded()
        if case StoreError.unavailable = error { return .batch }
        return .statement
    }

    func jobError(for error: any Error) -> any Error { storeError(error) }

    mutating func committed() { db = nil }

    /// One prune step (see `StoreRetention`), in one short transaction.
    mutating func prune(now: Int64, retention: StoreRetention) throws {
        try StorePruning.step(now: now, retention: retention, PostgresSession(try connected()))
    }
}

/// What a store's writers run once per batch with the catalog version read in the batch's
/// transaction, before any of its bodies runs (nil: nothing, and no version is read).
final class BatchCatalogVersionCheck: Sendable {
    /// The closure in a class: a closure kept in `Mutex`'s generic storage came back wrapped in one
    /// more reabstraction thunk at every read, and calls to it grew ever deeper.
    private final class Check: Sendable {
        let run: @Sendable (Int64) -> Void
        init(_ run: @escaping @Sendable (Int64) -> Void) { self.run = run }
    }

    private let check = Mutex<Check?>(nil)

    var current: (@Sendable (Int64) -> Void)? { check.withLock { $0 }?.run }

    func set(_ new: @escaping @Sendable (Int64) -> Void) { check.withLock { $0 = Check(new) } }
}

import Dispatch
import PostgresKit
import SheetPolicy
import SheetStore
import Synchronization

/// One writer connection with group commit: callers queue updates, and the writer's serial queue
/// runs everything queued in one transaction, each update in its own SAVEPOINT (a failing body
/// rolls back only its own changes), commits once, and only then completes every update.
/// `synchronous_commit` stays on: the commit that completes them is on disk.
final class PostgresWriter: Sendable {
    private let url: String
    /// The batches run on its thread (see `GroupCommitQueue`, shared with the SQLite writer).
    private let queue: GroupCommitQueue<PostgresWriteJob>
    /// The connection, touched only by the queue's thread (and by `close` once the queue is idle).
    private let connection = ConnectionBox()
    private let statistics: SharedStatistics
    /// Tells the other replicas which users each committed batch changed (one NOTIFY per batch).
    private let notifier: ChangeNotifier
    private let retention: StoreRetention
    /// Run with the catalog version read in each batch's transaction, before its bodies run.
    private let catalogCheck: CatalogCheck

    init(
        url: String, index: Int, statistics: SharedStatistics, notifier: ChangeNotifier, catalogCheck: CatalogCheck, retention: StoreRetention
    ) {
        self.url = url
        self.retention = retention
        self.statistics = statistics
        self.notifier = notifier
        self.catalogCheck = catalogCheck
        weak var weakSelf: PostgresWriter?
        queue = GroupCommitQueue(label: "sheetd.postgres.writer.\(index)") { batch in
            guard let writer = weakSelf else {
                return { for job in batch { job.finish(.failure(StoreError.unavailable("the store is closed"))) } }
            }
            writer.run(batch)
            // The bodies were dropped by `runBatch`; the jobs carry only their results now.
            return { for job in batch { job.complete() } }
        }
        weakSelf = self
    }

    func enqueue(_ job: PostgresWriteJob) {
        if !queue.enqueue(job) { job.finish(.failure(StoreError.unavailable("the store is closed"))) }
    }

    /// Stops taking jobs, lets the queued ones finish, closes the connection.
    func close() {
        queue.close()
        connection.close()
    }

    private func run(_ batch: [PostgresWriteJob]) {
        guard runBatch(batch, now: currentUnixSeconds()) else { return }
        let commits = statistics.counters.withLock { s in
            s.updates += batch.count
            s.commits += 1
            s.largestBatch = max(s.largestBatch, batch.count)
            return s.commits
        }
        if commits % StoreRetention.pruneEveryCommits == 0 { try? prune(now: currentUnixSeconds()) }
    }

    /// Runs `batch` in one transaction; sets every job's result and drops every body. Returns true
    /// when the transaction committed.
    private func runBatch(_ batch: [PostgresWriteJob], now: Int64) -> Bool {
        defer { for job in batch { job.body = nil } }
        func failAll(_ error: any Error) {
            for job in batch { job.result = .failure(storeError(error)) }
            connection.dropIfBroken()
        }
        let db: PostgresConnection
        do {
            db = try connection.get(url: url)
        } catch {
            failAll(error)
            return false
        }
        // Users in one order on every replica: the user_versions row locks taken below can then never
        // deadlock across writers. A user's own updates keep their arrival order.
        let ordered = batch.indices.sorted { (batch[$0].userId, $0) < (batch[$1].userId, $1) }.map { batch[$0] }
        do {
            if let committed = try runPipelined(ordered, db, now: now) { return committed }
        } catch {
            // The connection broke on the way: the outcome is unknown, nobody is acknowledged.
            failAll(error)
            return false
        }
        // A statement failed inside the pipelined transaction (rolled back): do it again one update
        // at a time, each in its own savepoint, so that only the update at fault fails.
        db.rollbackIfNeeded()
        do {
            try db.execute("BEGIN")
            if let check = catalogCheck.current { check(Int64(try db.scalar(Self.catalogVersionSQL) ?? "0") ?? 0) }
        } catch {
            db.rollbackIfNeeded()
            failAll(error)
            return false
        }
        let single = ordered.count == 1
        var rollups = RollupDeltas()
        for job in ordered {
            guard let body = job.body else { continue }
            job.body = nil
            do {
                if !single { try db.execute("SAVEPOINT job") }
                let applied = try apply(job, body: body, db, now: now)
                if !single { try db.execute("RELEASE SAVEPOINT job") }
                if let change = applied.change { rollups.add(change.activity, from: change.old, to: change.new) }
                job.result = .success(applied.result)
            } catch {
                let isDatabaseError = error is PostgresError
                if !db.isHealthy {
                    failAll(error)
                    return false
                }
                job.result = .failure(isDatabaseError ? storeError(error) : error)
                if single {
                    db.rollbackIfNeeded()
                    return false
                }
                do {
                    try db.execute("ROLLBACK TO SAVEPOINT job")
                } catch {
                    db.rollbackIfNeeded()
                    failAll(error)
                    return false
                }
            }
        }
        do {
            if let statement = RowWrites.rollupsStatement(rollups) { try db.query(statement.sql, statement.parameters) }
            // The users whose state this batch changed (replays and failed bodies change nothing),
            // told to the other replicas by the commit itself.
            let changed = ordered.lazy.filter { if case .success(let r) = $0.result { !r.replayed } else { false } }.map(\.userId)
            // One round trip: the notifications and the COMMIT in one simple query.
            try db.execute(notifier.notifyingSQL(notifier.userPayloads(changed)) + "COMMIT")
        } catch {
            // A connection lost here may or may not have committed: nobody is acknowledged, and a
            // retry with the same event id answers the first outcome if it did.
            db.rollbackIfNeeded()
            failAll(error)
            return false
        }
        return true
    }

    /// The batch in two round trips (libpq pipeline mode): first BEGIN, the users' version locks
    /// (in user order), their rows, the event ids already seen and the catalog version (one statement
    /// each, whatever the batch's size); then, with every body run in memory against those states in
    /// arrival order, each user's changed rows (the difference between the loaded state and the
    /// state after the user's last event), the activity, the event ids and the totals, a few
    /// multi-row statements (`RowWrites`), the notifications and COMMIT.
    /// Returns whether the batch committed, with every job's result set; nil when a statement failed
    /// (the transaction is then failed and nothing was committed): the caller runs the batch the slow way.
    ///
    /// - Throws: when the connection broke (the commit's outcome is then unknown).
    private func runPipelined(_ ordered: [PostgresWriteJob], _ db: PostgresConnection, now: Int64) throws -> Bool? {
        var users: [String] = []
        for job in ordered where users.last != job.userId { users.append(job.userId) }
        let withEventIds = ordered.filter { $0.eventId != nil }
        let userArray = PostgresUserStateSQL.textArray(users)
        var read: [RowWrites.Statement] = [
            ("BEGIN", []),
            // First, so that a replica updating the same users waits here, and reads the committed
            // state (and event ids) afterwards: READ COMMITTED takes a new snapshot per statement.
            // The rows are locked in user order (the order of the array).
            (Self.lockManySQL, [userArray]),
            (PostgresUserStateSQL.loadManySQL, [userArray]),
        ]
        let replayIndex = withEventIds.isEmpty ? nil : read.count
        if replayIndex != nil {
            read.append(
                (
                    Self.replayManySQL,
                    [PostgresUserStateSQL.textArray(withEventIds.map(\.userId)), PostgresUserStateSQL.textArray(withEventIds.map { $0.eventId! })]
                ))
        }
        let check = catalogCheck.current
        let catalogIndex = check == nil ? nil : read.count
        if catalogIndex != nil { read.append((Self.catalogVersionSQL, [])) }
        let readResults = try db.pipeline(read)
        guard readResults.count == read.count, case .success(let locked) = readResults[1], locked.affectedRows == users.count,
            case .success(let loadedRows) = readResults[2]
        else { return nil }
        var seen: [String: [UInt8]] = [:]
        if let replayIndex {
            guard case .success(let replays) = readResults[replayIndex] else { return nil }
            for row in replays { seen[row.string(at: 0) + "\u{0}" + row.string(at: 1)] = row.bytes(at: 2) }
        }
        if let check, let catalogIndex {
            guard case .success(let rows) = readResults[catalogIndex] else { return nil }
            check(Int64(rows.first?.string(at: 0) ?? "") ?? 0)
        }
        let loaded = try PostgresUserStateSQL.states(from: loadedRows)
        var states = loaded
        var writes = RowWrites()
        var rollups = RollupDeltas()
        var experimentWrites: [RowWrites.Statement] = []
        for job in ordered {
            guard let body = job.body else { continue }
            let key = job.eventId.map { job.userId + "\u{0}" + $0 }
            if let key, let outcome = seen[key] {
                job.result = .success(EventResult(outcome: outcome, replayed: true))
                continue
            }
            let old = states[job.userId] ?? UserState()
            var new = old
            var activity: [SheetActivity] = []
            do {
                let outcome = try body(&new, &activity)
                rollups.add(activity, from: old, to: new)
                experimentWrites += RowWrites.experimentStatements(userId: job.userId, activity)
                if let eventId = job.eventId, let key {
                    writes.addProcessedEvent(userId: job.userId, eventId: eventId, outcome: outcome, at: now)
                    seen[key] = outcome
                }
                states[job.userId] = new
                job.result = .success(EventResult(outcome: outcome, replayed: false))
            } catch {
                job.result = .failure(error)
            }
        }
        for user in users {
            if let new = states[user] { writes.addChanges(userId: user, from: loaded[user] ?? UserState(), to: new) }
        }
        // Whatever the slow path runs just before its COMMIT belongs here too, in the same pipeline:
        // the rollups, and the notifications to the other replicas (delivered at COMMIT).
        var write = writes.statements(keepingEventIds: retention.eventIdsPerUser)
        if let rollupsStatement = RowWrites.rollupsStatement(rollups) { write.append(rollupsStatement) }
        write += experimentWrites
        let changed = ordered.lazy.filter { if case .success(let r) = $0.result { !r.replayed } else { false } }.map(\.userId)
        for payload in notifier.userPayloads(changed) {
            write.append((Self.notifySQL, [.text(notifier.channel), .text(payload)]))
        }
        write.append(("COMMIT", []))
        let writeResults = try db.pipeline(write)
        for result in writeResults.dropLast() {
            if case .failure = result { return nil }
        }
        if case .failure(let error) = writeResults.last! {
            // COMMIT itself failed: nothing is acknowledged.
            db.rollbackIfNeeded()
            for job in ordered { job.result = .failure(storeError(error)) }
            return false
        }
        return true
    }

    static let lockSQL = """
        INSERT INTO user_versions (user_id, version) VALUES ($1, nextval('user_versions_seq'))
        ON CONFLICT (user_id) DO UPDATE SET version = nextval('user_versions_seq')
        """
    /// The version locks of a batch's users, in one statement: rows are inserted (and locked) in the
    /// order of the array, which is user order. Should two writers ever deadlock anyway, the loser's
    /// batch fails here and runs again the slow way. An existing row takes the value the row to
    /// insert drew (one `nextval` per user).
    static let lockManySQL = """
        INSERT INTO user_versions (user_id, version)
        SELECT u, nextval('user_versions_seq') FROM unnest($1::text[]) WITH ORDINALITY AS t(u, n) ORDER BY n
        ON CONFLICT (user_id) DO UPDATE SET version = excluded.version
        """
    /// The event ids of a batch already processed: `$1` and `$2` are parallel arrays.
    static let replayManySQL = """
        SELECT p.user_id, p.event_id, p.outcome FROM processed_events p
        JOIN unnest($1::text[], $2::text[]) AS t(u, e) ON p.user_id = t.u AND p.event_id = t.e
        """
    static let notifySQL = "SELECT pg_notify($1, $2)"
    static let catalogVersionSQL = "SELECT version FROM catalog_version"

    /// One update inside the open transaction: lock the user (bumping their version), replay, or
    /// load, run the body, write the difference, record the event. Returns what the batch's rollups
    /// need (nothing for a replay).
    private func apply(
        _ job: PostgresWriteJob, body: (inout UserState, inout [SheetActivity]) throws -> [UInt8], _ db: PostgresConnection, now: Int64
    ) throws -> (result: EventResult, change: (activity: [SheetActivity], old: UserState, new: UserState)?) {
        let user = PostgresValue.text(job.userId)
        // First, so that a replica updating the same user waits here, and reads the committed
        // state (and event ids) afterwards: READ COMMITTED takes a new snapshot per statement.
        try db.query(Self.lockSQL, [user])
        if let eventId = job.eventId {
            let rows = try db.query(PostgresSQL.replay, [user, .text(eventId)])
            if let row = rows.first { return (EventResult(outcome: row.bytes(at: 0), replayed: true), nil) }
        }
        let old = try PostgresUserStateSQL.load(userId: job.userId, db)
        var new = old
        var activity: [SheetActivity] = []
        let outcome = try body(&new, &activity)
        var writes = RowWrites()
        writes.addChanges(userId: job.userId, from: old, to: new)
        if let eventId = job.eventId { writes.addProcessedEvent(userId: job.userId, eventId: eventId, outcome: outcome, at: now) }
        for statement in writes.statements(keepingEventIds: retention.eventIdsPerUser) { try db.query(statement.sql, statement.parameters) }
        for statement in RowWrites.experimentStatements(userId: job.userId, activity) { try db.query(statement.sql, statement.parameters) }
        return (EventResult(outcome: outcome, replayed: false), (activity, old, new))
    }

    /// One prune step (see `StoreRetention`), in one short transaction. Runs on the writer's queue
    /// or, in tests, while it is idle.
    func prune(now: Int64) throws {
        let db = try connection.get(url: url)
        let limit = PostgresValue.int(Int64(StoreRetention.pruneBatch))
        let kept = PostgresValue.int(RollupSQL.firstKeptBucket(now: now, retention: retention))
        try db.execute("BEGIN")
        do {
            try db.query(PostgresSQL.deleteExpiredEvents, [.int(now - retention.eventIdSeconds), limit])
            try db.query(PostgresSQL.foldExpiredRollups, [kept, limit])
            try db.query(PostgresSQL.deleteExpiredRollups, [kept, limit])
            try db.execute("COMMIT")
        } catch {
            db.rollbackIfNeeded()
            throw error
        }
    }
}

/// The writer's connection, made on first use and again after a loss.
final class ConnectionBox: @unchecked Sendable {
    // Invariant: only the owning writer's serial queue touches `current` (close runs once it is idle).
    private var current: PostgresConnection?

    func get(url: String) throws(PostgresError) -> PostgresConnection {
        if let current, current.isHealthy { return current }
        current?.close()
        current = nil
        let db = try PostgresConnection(url: url)
        current = db
        return db
    }

    func dropIfBroken() {
        if let current, !current.isHealthy || current.inTransaction {
            current.rollbackIfNeeded()
            if !current.isHealthy { current.close(); self.current = nil }
        }
    }

    func close() {
        current?.close()
        current = nil
    }
}

/// One queued update: run by a writer, completed after its batch's commit.
final class PostgresWriteJob: @unchecked Sendable {
    // Invariant: `body` and `result` are written only by the writer's queue before `complete()`;
    // the submitter reads `result` only after its completion ran.
    let userId: String
    let eventId: String?
    var body: ((inout UserState, inout [SheetActivity]) throws -> [UInt8])?
    var result: Result<EventResult, any Error>?
    private let completion: (Result<EventResult, any Error>) -> Void

    init(
        userId: String, eventId: String?, body: @escaping (inout UserState, inout [SheetActivity]) throws -> [UInt8],
        completion: @escaping (Result<EventResult, any Error>) -> Void
    ) {
        self.userId = userId; self.eventId = eventId; self.body = body; self.completion = completion
    }

    func complete() { completion(result!) }

    /// Completes a job that never reached a writer.
    func finish(_ result: Result<EventResult, any Error>) {
        body = nil
        self.result = result
        complete()
    }
}

/// The write counters all writers of a store add to.
final class SharedStatistics: Sendable {
    let counters = Mutex(WriteStatistics(updates: 0, commits: 0, largestBatch: 0))
}

/// What a store's writers run once per batch with the catalog version read in the batch's
/// transaction, before any of its bodies runs (nil: nothing, and no version is read).
final class CatalogCheck: Sendable {
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

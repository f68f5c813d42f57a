import Concurrency
import Dispatch
import SQLiteKit
import SheetPolicy
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One queued update. Immutable: the writer runs `body` once, inside the batch's transaction, and
/// hands the result to `completion` after the batch committed (or failed).
struct WriteJob: @unchecked Sendable {
    // Invariant that makes `@unchecked Sendable` sound: `body` (not Sendable for `update`, which
    // blocks until the completion ran) is called only by the writer thread, at most once, and the
    // writer drops the job before calling `completion`.
    let userId: String
    let eventId: String?
    let body: (inout UserState, inout [SheetActivity]) throws -> [UInt8]
    let completion: @Sendable (Result<EventResult, any Error>) -> Void
}

/// The single writer connection, reopened after a fault.
struct WriterConnection {
    var current: Connection?
    var commitsSincePurge = 0
    /// WAL frames at which the writer next checkpoints itself (moved on when readers held it up).
    var nextBlockingCheckpointFrames = GroupCommitWriter.blockingCheckpointFrames
    /// Set by `close()`: the connection is never reopened.
    var closed = false

    init(connection: Connection) { current = connection }

    mutating func connection(path: String, options: Connection.Options) throws(SQLiteError) -> Connection {
        try current.opened(path: path, flags: [.readWrite, .create, .noMutex], options: options) { db throws(SQLiteError) in
            try db.trackWALSize()
        }
    }

    /// One prune step, in one short transaction: event ids past the time window, and rollup hours
    /// past theirs folded into the archive rows, at most `StoreRetention.pruneBatch` rows each.
    mutating func prune(now: Int64, retention: StoreRetention) throws {
        guard let db = current else { return }
        let limit = SQLiteValue.integer(Int64(StoreRetention.pruneBatch))
        try db.transaction(.immediate) {
            try db.run(ProcessedEventSQL.deleteExpired, [.integer(now - retention.eventIdSeconds), limit])
            let kept = SQLiteValue.integer(RollupSQL.firstKeptBucket(now: now, retention: retention))
            try db.run(RollupSQL.foldExpired, [kept, limit])
            try db.run(RollupSQL.deleteExpired, [kept, limit])
        }
    }
}

/// The write side of the SQLite store: a queue of update jobs, group-committed by one writer thread,
/// plus the lock-held writer connection that catalog writes and erasures use directly.
///
/// Callers queue their updates; the writer runs everything queued in one `BEGIN IMMEDIATE`
/// transaction, each update inside its own SAVEPOINT (a failing body rolls back only its own
/// changes), commits once, and only then completes every update. Updates that arrive meanwhile form
/// the next batch, so the busier the writer, the more one commit carries. After commits it applies
/// the checkpoint policy (see `checkpointIfNeeded`) and purges expired event ids now and then.
final class GroupCommitWriter: Sendable {
    /// WAL frames after which a background checkpoint is requested (SQLite's own default threshold).
    static let checkpointFrames = 1000
    /// WAL frames after which the writer checkpoints itself (RESTART), so that the WAL file restarts
    /// and stays small: under steady writes a PASSIVE checkpoint beside the writer never catches the
    /// last frames, and the WAL would only grow. The background checkpoints have copied almost
    /// everything by then, so this is short.
    static let blockingCheckpointFrames = 4_000
    /// How long that checkpoint waits for readers; when they do not finish in time, the writer goes on
    /// and tries again `blockingCheckpointFrames` later (a long-lived reader never stalls writes for
    /// the busy timeout).
    static let blockingCheckpointWaitMilliseconds = 20
    /// Free space on the database's file system below which a store that hit SQLITE_FULL stays unready.
    static let minimumFreeBytes: UInt64 = 4 << 20

    let path: String
    let options: Connection.Options
    let retention: StoreRetention
    private let connection: Locked<WriterConnection>
    /// Runs the batches on one thread, so there is one writer.
    private let queue: GroupCommitQueue<WriteJob>
    private let checkpointer: Checkpointer
    private let readers: ReaderPool
    private let statistics = Mutex(WriteStatistics(updates: 0, commits: 0, largestBatch: 0))
    /// A write failed for a storage reason; `probe` writes for real until one succeeds again.
    private let writeFault = Atomic<Bool>(false)
    /// A write failed with SQLITE_FULL. Sticky until `probe` sees free space again: on a full disk some
    /// writes still fit in pages SQLite already has (the probe among them), so success proves nothing.
    private let diskFull = Atomic<Bool>(false)

    /// `readers` hear of every transaction on the writer connection before anything it wrote is
    /// acknowledged (their kept snapshots depend on it), and give up idle snapshots before checkpoints.
    init(path: String, options: Connection.Options, connection: Connection, readers: ReaderPool, retention: StoreRetention) {
        self.path = path
        self.options = options
        self.retention = retention
        self.readers = readers
        self.connection = Locked(WriterConnection(connection: connection))
        self.checkpointer = Checkpointer(path: path, options: options, beforeEach: { readers.releaseIdleSnapshots() })
        weak var weakSelf: GroupCommitWriter?
        queue = GroupCommitQueue(label: "sheetd.store.writer") { batch in
            let completions = weakSelf?.runBatch(batch) ?? []
            return { for (completion, result) in completions { completion(result) } }
        }
        weakSelf = self
    }

    /// The writer connection's state under its lock (tests and start-up maintenance).
    func withLock<R, E: Error>(_ body: (inout WriterConnection) throws(E) -> R) throws(E) -> R {
        defer { readers.writesEnded() }
        return try connection.withLock(body)
    }

    /// Counters of the write path so far.
    var writeStatistics: WriteStatistics {
        var s = statistics.withLock { $0 }
        s.checkpoints = checkpointer.completed
        return s
    }

    // MARK: - Group commit

    /// Queues a job (see `GroupCommitQueue`).
    func enqueue(_ job: WriteJob) {
        if !queue.enqueue(job) { job.completion(.failure(StoreError.unavailable("the store is closed"))) }
    }

    /// Runs one batch; returns each job's completion with its result, called by the queue outside
    /// the writer lock once the jobs (and their bodies) are released: `update` relies on that.
    private func runBatch(_ batch: [WriteJob]) -> [(@Sendable (Result<EventResult, any Error>) -> Void, Result<EventResult, any Error>)] {
        let now = currentUnixTime()
        let (committed, results) = connection.withLock { writer in
            let (committed, results) = runBatch(batch, writer: &writer, now: now)
            if committed {
                checkpointIfNeeded(&writer)
                writer.commitsSincePurge += 1
                if writer.commitsSincePurge >= StoreRetention.pruneEveryCommits {
                    writer.commitsSincePurge = 0
                    try? writer.prune(now: now, retention: retention)
                }
            }
            return (committed, results)
        }
        readers.writesEnded()  // before the completions acknowledge anything
        if committed {
            statistics.withLock { s in
                s.updates += batch.count
                s.commits += 1
                s.largestBatch = max(s.largestBatch, batch.count)
            }
        }
        return zip(batch.map(\.completion), results).map { ($0, $1) }
    }

    /// Runs `batch` in one transaction; returns whether it committed and each job's result, in order.
    private func runBatch(
        _ batch: [WriteJob], writer: inout WriterConnection, now: Int64
    ) -> (Bool, [Result<EventResult, any Error>]) {
        func failAll(_ error: any Error) -> (Bool, [Result<EventResult, any Error>]) {
            noteFault(error, writer: &writer)
            return (false, Array(repeating: .failure(Self.mapped(error)), count: batch.count))
        }
        if writer.closed {
            return (false, Array(repeating: .failure(StoreError.unavailable("the store is closed")), count: batch.count))
        }
        let db: Connection
        do {
            db = try writer.connection(path: path, options: options)
            try db.run("BEGIN IMMEDIATE")
        } catch {
            return failAll(error)
        }
        var results: [Result<EventResult, any Error>] = []
        results.reserveCapacity(batch.count)
        var rollups = RollupDeltas()
        for job in batch {
            do {
                // One update alone needs no savepoint: a failure rolls the whole transaction back.
                let applied =
                    batch.count == 1
                    ? try apply(job, db, now: now)
                    : try db.savepoint("job") { try apply(job, db, now: now) }
                // Counted only once its savepoint is released: a rolled-back update adds nothing.
                if let change = applied.change { rollups.add(change.activity, from: change.old, to: change.new) }
                results.append(.success(applied.result))
            } catch {
                if db.isAutocommit {
                    // SQLite ended the transaction itself (disk full, I/O error): nothing in this batch committed.
                    return failAll(error)
                }
                results.append(.failure(error is SQLiteError ? Self.mapped(error) : error))
                if batch.count == 1 {
                    // Without a savepoint the single update's partial writes are undone by rollback.
                    db.rollbackIfNeeded()
                    if error is SQLiteError { noteFault(error, writer: &writer) }
                    return (false, results)
                }
            }
        }
        do {
            try UserStateSQL.add(rollups, db)
            try db.run("COMMIT")
        } catch {
            db.rollbackIfNeeded()
            return failAll(error)
        }
        writeFault.store(false, ordering: .releasing)
        return (true, results)
    }

    /// One update inside the open transaction: replay, or load, run the body, write the difference,
    /// record the event (keeping the user's latest `eventIdsPerUser`). Returns what the batch's
    /// rollups need (nothing for a replay).
    private func apply(
        _ job: WriteJob, _ db: Connection, now: Int64
    ) throws -> (result: EventResult, change: (activity: [SheetActivity], old: UserState, new: UserState)?) {
        if let eventId = job.eventId,
            case .blob(let outcome)? = try db.scalar(ProcessedEventSQL.replay, [.text(job.userId), .text(eventId)])
        {
            return (EventResult(outcome: outcome, replayed: true), nil)
        }
        let old = try UserStateSQL.load(userId: job.userId, db)
        var new = old
        var activity: [SheetActivity] = []
        let outcome = try job.body(&new, &activity)
        try UserStateSQL.writeChanges(userId: job.userId, from: old, to: new, db)
        try UserStateSQL.writeExperimentFacts(userId: job.userId, activity, db)
        if let eventId = job.eventId {
            try UserStateSQL.recordEvent(userId: job.userId, eventId: eventId, outcome: outcome, now: now, keep: retention.eventIdsPerUser, db)
        }
        return (EventResult(outcome: outcome, replayed: false), (activity, old, new))
    }

    // MARK: - Checkpoint policy

    /// After a commit: a background checkpoint past `checkpointFrames`; the writer's own RESTART
    /// checkpoint past `blockingCheckpointFrames` (see there).
    private func checkpointIfNeeded(_ writer: inout WriterConnection) {
        guard let db = writer.current else { return }
        let frames = db.walFrames
        if frames >= writer.nextBlockingCheckpointFrames {
            // A background checkpoint still running holds the checkpoint lock: let it finish (the
            // next commit comes back here), and ask for no new one meanwhile.
            guard checkpointer.isIdle else { return }
            readers.releaseIdleSnapshots()
            let restarted = (try? db.checkpoint(.restart, busyTimeoutMilliseconds: Self.blockingCheckpointWaitMilliseconds)) != nil
            writer.nextBlockingCheckpointFrames = restarted ? Self.blockingCheckpointFrames : frames + Self.blockingCheckpointFrames
            if restarted { statistics.withLock { $0.walRestarts += 1 } }
        } else if frames >= Self.checkpointFrames {
            checkpointer.request()
        }
    }

    // MARK: - Direct writes, faults

    /// Runs `body` on the writer connection under its lock (catalog writes, erasure, probes), outside
    /// the group-commit queue; a storage error is noted as a fault.
    @discardableResult
    func write<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        defer { readers.writesEnded() }  // before the caller acknowledges anything
        return try connection.withLock { writer throws(StoreError) -> T in
            if writer.closed { throw .unavailable("the store is closed") }
            do {
                let db = try writer.connection(path: path, options: options)
                let result = try body(db)
                writeFault.store(false, ordering: .releasing)
                return result
            } catch {
                noteFault(error, writer: &writer)
                throw Self.storeError(error)
            }
        }
    }

    /// Readiness of the write side: after a storage fault (when a write failed) it probes the writer
    /// with a real commit, so readiness clears by itself once the fault does.
    func probe() throws(StoreError) {
        // A writer that fell back to read-only (the file was not writable when it opened) cannot write.
        if connection.withLock({ $0.current?.isReadOnly == true }) { writeFault.store(true, ordering: .releasing) }
        if diskFull.load(ordering: .acquiring) {
            let free = freeBytes(onFileSystemOf: path)
            guard free >= Self.minimumFreeBytes else {
                throw .unavailable("the disk is full (\(free) bytes free, \(Self.minimumFreeBytes) needed to resume)")
            }
            diskFull.store(false, ordering: .releasing)
        }
        if writeFault.load(ordering: .acquiring) {
            try write { db in
                // A committed no-op update writes a WAL frame: it fails while the file is read-only or
                // the disk is full.
                try db.transaction(.immediate) {
                    try db.run(
                        "UPDATE schema_migrations SET applied_at = applied_at WHERE version = (SELECT max(version) FROM schema_migrations)"
                    )
                }
            }
            writeFault.store(false, ordering: .releasing)
        }
    }

    /// After a storage error: no transaction may stay open, and a connection that may be stuck in the
    /// fault (opened read-only, I/O error) is dropped so the next write reopens the file.
    private func noteFault(_ error: any Error, writer: inout WriterConnection) {
        guard let error = error as? SQLiteError, error.isTransient else { return }
        writeFault.store(true, ordering: .releasing)
        if error.code == .full { diskFull.store(true, ordering: .releasing) }
        if let db = writer.current {
            db.rollbackIfNeeded()
            switch error.code {
            case .busy, .locked: if db.isAutocommit { return }
            default: break
            }
            db.close()
            writer.current = nil
        }
    }

    // MARK: - Closing

    /// Refuses new jobs, lets the writer finish what is queued, then stops the checkpointer. The
    /// connection stays open for `closeConnection` (the last connection to close removes the WAL files).
    func stopAccepting() {
        queue.close()
        checkpointer.close()
    }

    /// Checkpoints the WAL (TRUNCATE) and closes the writer connection for good.
    func closeConnection() {
        connection.withLock { writer in
            if let db = writer.current {
                db.rollbackIfNeeded()
                _ = try? db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.close()
            }
            writer.current = nil
            writer.closed = true
        }
    }

    static func storeError(_ error: any Error) -> StoreError {
        switch error {
        case let error as SQLiteError: StoreError(error)
        case let error as StoreError: error
        default: .failure("\(error)")
        }
    }

    static func mapped(_ error: any Error) -> any Error {
        switch error {
        case let error as SQLiteError: StoreError(error)
        default: error
        }
    }
}

import Concurrency
import SQLiteKit
import SheetPolicy
import SheetStore
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The single writer connection, reopened after a fault.
struct WriterConnection {
    var current: Connection?
    /// WAL frames at which the writer next checkpoints itself (moved on when readers held it up).
    var nextBlockingCheckpointFrames = SQLiteGroupCommitWriter.blockingCheckpointFrames
    /// WAL frames at which the next background checkpoint is asked for: one per `checkpointFrames`
    /// written, not one after every commit past the threshold (each one ends in an fsync).
    var nextBackgroundCheckpointFrames = SQLiteGroupCommitWriter.checkpointFrames
    /// Set by `close()`: the connection is never reopened.
    var closed = false
    /// The file's data version right after this writer's last commit, on that connection: while the
    /// file still has it, no one else has committed since (`RecentUserStates`, invariant 4).
    var lastCommit: (connection: ObjectIdentifier, dataVersion: UInt32)?
    /// Batch reads answered from `RecentUserStates` instead of a SELECT (tests).
    var rowsReadFromMemory = 0

    /// Whether no commit reached the file since this writer's last one (`db` is in a transaction
    /// begun IMMEDIATE, so its data version accounts for every commit before it).
    func nothingCommittedSinceLastCommit(_ db: Connection) -> Bool {
        guard let lastCommit, lastCommit.connection == ObjectIdentifier(db), let now = db.dataVersion else { return false }
        return now == lastCommit.dataVersion
    }

    init(connection: Connection) { current = connection }

    mutating func connection(path: String, options: Connection.Options) throws(SQLiteError) -> Connection {
        if current == nil { lastCommit = nil }  // a new connection counts its data versions afresh
        return try current.opened(path: path, flags: [.readWrite, .create, .noMutex], options: options) { db throws(SQLiteError) in
            try db.trackWALSize()
        }
    }

    /// One prune step, in one short transaction: event ids past the time window, and rollup hours
    /// past theirs folded into the archive rows, at most `StoreRetention.pruneBatch` rows each.
    mutating func prune(now: Int64, retention: StoreRetention) throws {
        guard let db = current else { return }
        try StorePruning.step(now: now, retention: retention, SQLiteSession(db))
    }
}

/// The write side of the SQLite store: the group-commit engine (`GroupCommitEngine`) over the single
/// writer connection, plus that lock-held connection for catalog writes and erasures.
///
/// Callers queue their updates; the engine runs everything queued in one `BEGIN IMMEDIATE`
/// transaction (`SQLiteBatchSession`), commits once, and only then completes every update. Updates
/// that arrive meanwhile form the next batch, so the busier the writer, the more one commit carries.
/// After commits the session applies the checkpoint policy (see `checkpointIfNeeded`); the engine
/// prunes now and then.
final class SQLiteGroupCommitWriter: Sendable {
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

    let engine: GroupCommitEngine<SQLiteWriterBackend>
    private var backend: SQLiteWriterBackend { engine.backend }
    /// Batch reads answered from memory so far (tests).
    var rowsReadFromMemory: Int { backend.connection.withLock { $0.rowsReadFromMemory } }
    var retention: StoreRetention { engine.retention }

    /// `readers` hear of every transaction on the writer connection before anything it wrote is
    /// acknowledged (their kept snapshots depend on it), and give up idle snapshots before checkpoints.
    init(path: String, options: Connection.Options, connection: Connection, readers: ReaderPool, retention: StoreRetention) {
        let counters = WriteCounters()
        let backend = SQLiteWriterBackend(
            path: path, options: options, connection: Locked(WriterConnection(connection: connection)), readers: readers,
            checkpointer: Checkpointer(path: path, options: options, beforeEach: { readers.releaseIdleSnapshots() }),
            faults: WriterFaults(), counters: counters)
        engine = GroupCommitEngine(backend: backend, retention: retention, counters: counters, commitsAtTurnEnd: true)
    }

    /// The writer connection's state under its lock (tests and start-up maintenance).
    func withLock<R, E: Error>(_ body: (inout WriterConnection) throws(E) -> R) throws(E) -> R {
        defer { backend.readers.writesEnded() }
        return try backend.connection.withLock { writer throws(E) -> R in
            defer { backend.readers.recentStates.forgetAll() }
            return try body(&writer)
        }
    }

    /// Counters of the write path so far.
    var writeStatistics: WriteStatistics {
        var s = engine.counters.current
        s.checkpoints = backend.checkpointer.completed
        return s
    }

    /// Queues a job (see `GroupCommitEngine`).
    func enqueue(_ job: GroupCommitJob) { engine.enqueue(job) }

    // MARK: - Direct writes, faults

    /// Runs `body` on the writer connection under its lock (catalog writes, erasure, probes), outside
    /// the group-commit queue; a storage error is noted as a fault.
    @discardableResult
    func write<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        let backend = self.backend
        defer { backend.readers.writesEnded() }  // before the caller acknowledges anything
        return try backend.connection.withLock { writer throws(StoreError) -> T in
            // Any row may have changed: no recently committed state is trusted after this write.
            defer { backend.readers.recentStates.forgetAll() }
            if writer.closed { throw .unavailable("the store is closed") }
            do {
                let db = try writer.connection(path: backend.path, options: backend.options)
                let result = try body(db)
                backend.faults.writeFault.store(false, ordering: .releasing)
                return result
            } catch {
                backend.noteFault(error, writer: &writer)
                throw Self.storeError(error)
            }
        }
    }

    /// Readiness of the write side: after a storage fault (when a write failed) it probes the writer
    /// with a real commit, so readiness clears by itself once the fault does.
    func probe() throws(StoreError) {
        let faults = backend.faults
        // A writer that fell back to read-only (the file was not writable when it opened) cannot write.
        if backend.connection.withLock({ $0.current?.isReadOnly == true }) { faults.writeFault.store(true, ordering: .releasing) }
        if faults.diskFull.load(ordering: .acquiring) {
            let free = DatabaseFiles.freeBytes(onFileSystemOf: backend.path)
            guard free >= Self.minimumFreeBytes else {
                throw .unavailable("the disk is full (\(free) bytes free, \(Self.minimumFreeBytes) needed to resume)")
            }
            faults.diskFull.store(false, ordering: .releasing)
        }
        if faults.writeFault.load(ordering: .acquiring) {
            try write { db in
                // A committed no-op update writes a WAL frame: it fails while the file is read-only or
                // the disk is full.
                try db.transaction(.immediate) {
                    try db.run(
                        "UPDATE schema_migrations SET applied_at = applied_at WHERE version = (SELECT max(version) FROM schema_migrations)"
                    )
                }
            }
            faults.writeFault.store(false, ordering: .releasing)
        }
    }

    // MARK: - Closing

    /// Refuses new jobs, lets the writer finish what is queued, then stops the checkpointer. The
    /// connection stays open for `closeConnection` (the last connection to close removes the WAL files).
    func stopAccepting() {
        engine.close()
        backend.checkpointer.close()
    }

    /// Checkpoints the WAL (TRUNCATE) and closes the writer connection for good.
    func closeConnection() {
        backend.connection.withLock { writer in
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

/// The writer's storage faults, read by readiness (`probe`).
final class WriterFaults: Sendable {
    /// A write failed for a storage reason; `probe` writes for real until one succeeds again.
    let writeFault = Atomic<Bool>(false)
    /// A write failed with SQLITE_FULL. Sticky until `probe` sees free space again: on a full disk some
    /// writes still fit in pages SQLite already has (the probe among them), so success proves nothing.
    let diskFull = Atomic<Bool>(false)
}

/// SQLite's side of the group-commit engine: the writer connection under its lock, lent for a batch.
struct SQLiteWriterBackend: GroupCommitBackend {
    let path: String
    let options: Connection.Options
    let connection: Locked<WriterConnection>
    let readers: ReaderPool
    let checkpointer: Checkpointer
    let faults: WriterFaults
    let counters: WriteCounters

    /// The batch runs under the writer lock; the readers hear of its transactions before the engine
    /// completes (acknowledges) anything.
    func withSession<R, E: Error>(_ body: (inout SQLiteBatchSession) throws(E) -> R) throws(E) -> R {
        defer { readers.writesEnded() }
        return try connection.withLock { writer throws(E) -> R in
            var session = SQLiteBatchSession(backend: self, writer: writer)
            defer { writer = session.writer }
            return try body(&session)
        }
    }

    /// After a storage error: no transaction may stay open, and a connection that may be stuck in the
    /// fault (opened read-only, I/O error) is dropped so the next write reopens the file.
    func noteFault(_ error: any Error, writer: inout WriterConnection) {
        guard let error = error as? SQLiteError, error.isTransient else { return }
        faults.writeFault.store(true, ordering: .releasing)
        if error.code == .full { faults.diskFull.store(true, ordering: .releasing) }
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

    /// After a commit: a background checkpoint past `checkpointFrames`; the writer's own RESTART
    /// checkpoint past `blockingCheckpointFrames` (see there).
    func checkpointIfNeeded(_ writer: inout WriterConnection) {
        guard let db = writer.current else { return }
        let frames = db.walFrames
        if frames >= writer.nextBlockingCheckpointFrames {
            // A background checkpoint still running holds the checkpoint lock: let it finish (the
            // next commit comes back here), and ask for no new one meanwhile.
            guard checkpointer.isIdle else { return }
            readers.releaseIdleSnapshots()
            let restarted =
                (try? db.checkpoint(.restart, busyTimeoutMilliseconds: SQLiteGroupCommitWriter.blockingCheckpointWaitMilliseconds)) != nil
            writer.nextBlockingCheckpointFrames =
                restarted ? SQLiteGroupCommitWriter.blockingCheckpointFrames : frames + SQLiteGroupCommitWriter.blockingCheckpointFrames
            if restarted { counters.walRestarted() }
            writer.nextBackgroundCheckpointFrames = SQLiteGroupCommitWriter.checkpointFrames
        } else {
            // The WAL started over by itself (a passive checkpoint had copied everything).
            if frames + SQLiteGroupCommitWriter.checkpointFrames < writer.nextBackgroundCheckpointFrames {
                writer.nextBackgroundCheckpointFrames = SQLiteGroupCommitWriter.checkpointFrames
            }
            // Close to the writer's own checkpoint, after every commit: what the background copies
            // now, the blocking one does not (its pause is most of a count PUT's p99).
            let catchingUp = frames + SQLiteGroupCommitWriter.checkpointFrames >= writer.nextBlockingCheckpointFrames
            if catchingUp || frames >= writer.nextBackgroundCheckpointFrames {
                checkpointer.request()
                writer.nextBackgroundCheckpointFrames = frames + SQLiteGroupCommitWriter.checkpointFrames
            } else if frames > 0 {
                checkpointer.requestSoon()
            }
        }
    }
}

/// SQLite's dialect of a batch: `BEGIN IMMEDIATE` (the single writer needs no row locks), one key
/// lookup per user and per event id, the changed rows, `COMMIT`. All in process, so cheap.
struct SQLiteBatchSession: GroupCommitSession {
    let backend: SQLiteWriterBackend
    var writer: WriterConnection
    /// The connection of the open transaction.
    private var db: Connection?

    init(backend: SQLiteWriterBackend, writer: WriterConnection) {
        self.backend = backend
        self.writer = writer
    }

    mutating func begin(users: [String], events: [EventKey]) throws -> BatchReads {
        if writer.closed { throw StoreError.unavailable("the store is closed") }
        db = nil
        let db = try writer.connection(path: backend.path, options: backend.options)
        self.db = db
        try db.run("BEGIN IMMEDIATE")
        var reads = BatchReads()
        // Rows this process committed last are in memory; they are the stored rows when nothing has
        // committed since this writer's last commit and no batch is still publishing (invariant 4
        // of `RecentUserStates`). Under a steady mix this skips most of the batch's SELECTs
        // (docs/benchmarks-history.md, "The writer's reads").
        let recent = backend.readers.recentStates
        let memoryIsStored = writer.nothingCommittedSinceLastCommit(db) && !recent.isPublishing
        for user in users {
            let state: UserState
            if memoryIsStored, let bytes = recent.bytes(of: user), let held = try? UserStateCodec.decode(bytes) {
                state = held
                writer.rowsReadFromMemory += 1
            } else {
                state = try UserStateSQL.load(userId: user, db)
            }
            if state != UserState() { reads.states[user] = state }
        }
        if !events.isEmpty {
            let replay = try db.cachedStatement(UserStateSQL.replay)
            for event in events {
                defer { replay.reset() }
                try replay.bind(event.userId, at: 1)
                try replay.bind(event.eventId, at: 2)
                if try replay.step() { reads.processed[event] = replay.blob(at: 0) }
            }
        }
        return reads
    }

    mutating func commit(_ writes: BatchWrites) throws {
        guard let db else { throw StoreError.failure("no open transaction") }
        var written: [(userId: String, bytes: [UInt8])] = []
        written.reserveCapacity(writes.states.count)
        for change in writes.states {
            if let bytes = try UserStateSQL.writeChanges(userId: change.userId, from: change.old, to: change.new, db) {
                written.append((change.userId, bytes))
            }
        }
        for event in writes.events {
            try UserStateSQL.recordEvent(
                userId: event.userId, eventId: event.eventId, outcome: event.outcome, now: writes.now, keep: writes.eventIdsPerUser, db)
        }
        try UserStateSQL.writeExperimentFacts(writes.experimentFacts, db)
        try UserStateSQL.add(writes.rollups, db)
        let recent = backend.readers.recentStates
        writer.lastCommit = nil
        let ticket = recent.beginPublication()  // inside the transaction: tickets follow commit order
        defer { recent.endPublication() }
        try db.run("COMMIT")
        for (userId, bytes) in written { recent.committed(bytes, of: userId, ticket: ticket) }
        if let version = db.dataVersion { writer.lastCommit = (ObjectIdentifier(db), version) }
    }

    mutating func abandon(after error: any Error) -> BatchFailure {
        defer { db = nil }
        guard let db else {
            backend.noteFault(error, writer: &writer)
            return .batch
        }
        // SQLite ended the transaction itself (disk full, I/O error): nothing in this batch committed.
        let ended = db.isAutocommit
        db.rollbackIfNeeded()
        backend.noteFault(error, writer: &writer)
        // A storage fault (busy, read-only, disk full, I/O) is no job's own: rerunning the jobs in
        // smaller transactions would only meet it again.
        if ended || (error as? SQLiteError)?.isTransient == true { return .batch }
        if case StoreError.unavailable = error { return .batch }
        return .statement
    }

    func jobError(for error: any Error) -> any Error { SQLiteGroupCommitWriter.mapped(error) }

    mutating func committed() {
        db = nil
        backend.faults.writeFault.store(false, ordering: .releasing)
        backend.checkpointIfNeeded(&writer)
    }

    mutating func prune(now: Int64, retention: StoreRetention) throws {
        try writer.prune(now: now, retention: retention)
    }
}

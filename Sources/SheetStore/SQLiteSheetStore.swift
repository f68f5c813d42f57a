public import SheetPolicy
import SQLiteKit
import Crypto
import Concurrency
import Synchronization
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `PRAGMA synchronous` for the store's connections (WAL mode).
public enum SynchronousMode: String, Sendable, CaseIterable {
    /// A commit survives a crash of the process; a power loss may lose the last commits (never corrupts).
    case normal
    /// Every commit is fsynced: it survives a power loss too. Slower writes.
    case full

    /// Parses `normal` / `full` in any case (e.g. `SHEETD_SYNCHRONOUS`).
    public init?(configValue: String) {
        self.init(rawValue: configValue.lowercased())
    }

    var level: SynchronousLevel { self == .full ? .full : .normal }
}

/// Counters of the write path (`update`): how many updates committed in how many transactions.
/// Under concurrent writers `commits < updates` shows group commit at work.
public struct WriteStatistics: Sendable, Equatable {
    /// Updates run in committed transactions (replays and failed bodies included).
    public var updates: Int
    /// Write transactions committed by the update path.
    public var commits: Int
    /// The largest number of updates one transaction carried.
    public var largestBatch: Int
    /// Background WAL checkpoints run (see `Checkpointer`).
    public var checkpoints: Int = 0
    /// The writer's own RESTART checkpoints that completed (each lets the WAL start over).
    public var walRestarts: Int = 0
}

/// The embedded SheetStore: one SQLite file in WAL mode, a single writer connection and one
/// reader connection per thread.
///
/// Writes (`submit`, `update`) are group-committed: callers queue their updates, and a writer thread
/// runs everything queued in one `BEGIN IMMEDIATE` transaction, each update inside its own SAVEPOINT
/// (a failing body rolls back only its own changes), commits once, and only then completes every
/// update. Updates that arrive meanwhile form the next batch, so the busier the writer, the more one
/// commit carries. Reads use per-thread connections (`SQLITE_OPEN_NOMUTEX`) and never wait for writes.
public final class SQLiteSheetStore: SheetStore {
    public let path: String
    let options: Connection.Options
    let writer: Locked<Writer>
    private let queue = Mutex(WriteQueue())
    /// Runs the batches (see `drainQueue`); serial, so there is one writer.
    private let writerQueue = DispatchQueue(label: "sheetd.store.writer")
    private let checkpointer: Checkpointer
    private let readers: ThreadLocal<ReaderSlot, any Error>
    private let readerRegistry: ReaderRegistry
    private let closed = Atomic<Bool>(false)
    /// A write failed for a storage reason; `ping` probes the writer until one succeeds again.
    private let writeFault = Atomic<Bool>(false)
    /// A write failed with SQLITE_FULL. Sticky until `ping` sees free space again: on a full disk some
    /// writes still fit in pages SQLite already has (the probe among them), so success proves nothing.
    private let diskFull = Atomic<Bool>(false)
    /// Free space on the database's file system below which a store that hit SQLITE_FULL stays unready.
    static let minimumFreeBytes: UInt64 = 4 << 20
    private let statistics = Mutex(WriteStatistics(updates: 0, commits: 0, largestBatch: 0))

    /// Processed event ids are kept this long (the API promises at least 24 h).
    static let eventRetentionSeconds: Int64 = 48 * 3600
    /// Purge expired event ids every this many committed write transactions.
    static let purgeEvery = 512
    /// At most this many updates share one transaction.
    static let maxBatch = 256
    /// WAL frames after which a background checkpoint is requested (SQLite's own default threshold).
    static let checkpointFrames = 1000
    /// WAL frames after which the writer checkpoints itself (RESTART), so that the WAL file restarts
    /// and stays small: under steady writes a PASSIVE checkpoint beside the writer never catches the
    /// last frames, and the WAL would only grow (measured: 80 MB in a few seconds of count PUTs).
    /// The background checkpoints have copied almost everything by then, so this is short.
    static let blockingCheckpointFrames = 4_000
    /// How long that checkpoint waits for readers; when they do not finish in time, the writer goes on
    /// and tries again `blockingCheckpointFrames` later (a long-lived reader never stalls writes for
    /// the busy timeout).
    static let blockingCheckpointWaitMilliseconds = 20

    private init(path: String, options: Connection.Options, writer: Writer) {
        self.path = path
        self.options = options
        self.writer = Locked(writer)
        self.checkpointer = Checkpointer(path: path, options: options)
        let registry = ReaderRegistry()
        self.readerRegistry = registry
        let readerOptions = Connection.Options(
            walJournal: false, synchronous: options.synchronous,
            busyTimeoutMilliseconds: options.busyTimeoutMilliseconds, foreignKeys: options.foreignKeys)
        self.readers = ThreadLocal { [path] in
            let slot = ReaderSlot(path: path, options: readerOptions)
            registry.slots.withLock { slots in
                slots.removeAll { $0.slot == nil }
                slots.append(WeakSlot(slot: slot))
            }
            return slot
        }
    }

    deinit { close() }

    // MARK: - Opening, migrating

    /// Opens (creating it and its directory if needed) the database at `path`, applies pending
    /// migrations, and returns the store.
    ///
    /// - Throws: `.schemaTooNew`, `.checksumMismatch`, `.unavailable` (cannot open or write), `.failure`.
    public static func open(
        path: String, synchronous: SynchronousMode = .normal, busyTimeoutMilliseconds: Int = 5000
    ) throws(StoreError) -> SQLiteSheetStore {
        try createParentDirectory(of: path)
        let options = Connection.Options(
            walJournal: true, synchronous: synchronous.level, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let connection = try mapErrors { try Connection(path: path, flags: [.readWrite, .create, .noMutex], options: options) }
        try Migrator().migrate(connection)
        try mapErrors { try connection.trackWALSize() }
        let store = SQLiteSheetStore(path: path, options: options, writer: Writer(connection: connection))
        // Expired event ids are purged at start and then every `purgeEvery` commits. A read-only
        // database still opens (reads keep working); its writes report `unavailable`.
        try? store.writer.withLock { writer throws in try writer.purgeExpiredEvents(now: currentUnixTime()) }
        return store
    }

    /// The migration listing of the database at `path` (`sheetd migrate --status`); a missing file
    /// lists every migration as pending. Never writes.
    public static func migrationStatus(path: String) throws(StoreError) -> [MigrationStatus] {
        guard access(path, F_OK) == 0 else { return try Migrator().statusOfEmptyDatabase() }
        let connection = try mapErrors {
            try Connection(path: path, flags: [.readOnly, .noMutex], options: .init(walJournal: false))
        }
        defer { connection.close() }
        return try Migrator().status(connection)
    }

    /// Applies the pending migrations to the database at `path` (creating it); returns the versions applied.
    @discardableResult
    public static func migrate(
        path: String, synchronous: SynchronousMode = .normal, busyTimeoutMilliseconds: Int = 5000
    ) throws(StoreError) -> [Int] {
        try createParentDirectory(of: path)
        let options = Connection.Options(
            walJournal: true, synchronous: synchronous.level, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        let connection = try mapErrors { try Connection(path: path, flags: [.readWrite, .create, .noMutex], options: options) }
        defer {
            _ = try? connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            connection.close()
        }
        return try Migrator().migrate(connection)
    }

    // MARK: - Catalog

    public func catalog() throws(StoreError) -> [StoredSheet] {
        try read { db in
            try db.query("SELECT id, definition FROM sheets ORDER BY id") { row in
                StoredSheet(id: row.string(at: 0), json: row.string(at: 1))
            }
        }
    }

    public func putSheet(_ sheet: StoredSheet) throws(StoreError) -> Bool {
        try write { db in
            try db.transaction(.immediate) { try Self.upsertSheet(sheet, db) }
        }
    }

    public func putSheets(_ sheets: [StoredSheet]) throws(StoreError) {
        try write { db in
            try db.transaction(.immediate) { for sheet in sheets { _ = try Self.upsertSheet(sheet, db) } }
        }
    }

    private static func upsertSheet(_ sheet: StoredSheet, _ db: Connection) throws -> Bool {
        let existed = try db.scalar("SELECT 1 FROM sheets WHERE id = ?1", [.text(sheet.id)]) != nil
        try db.run(
            """
            INSERT INTO sheets (id, definition, created_at, updated_at)
            VALUES (?1, ?2, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
            ON CONFLICT (id) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at
            """, [.text(sheet.id), .text(sheet.json)])
        return !existed
    }

    public func deleteSheet(id: String) throws(StoreError) -> Bool {
        try write { db in
            try db.transaction(.immediate) { try db.run("DELETE FROM sheets WHERE id = ?1", [.text(id)]) > 0 }
        }
    }

    // MARK: - Users

    public func userState(userId: String) throws(StoreError) -> UserState {
        try read { db in try UserStateSQL.load(userId: userId, db) }
    }

    public func update(
        userId: String, eventId: String?, _ body: (inout UserState) throws -> [UInt8]
    ) throws -> EventResult {
        try withoutActuallyEscaping(body) { body in
            let done = DispatchSemaphore(value: 0)
            let job = WriteJob(userId: userId, eventId: eventId, body: body) { _ in done.signal() }
            enqueue(job)
            done.wait()
            // The closure must not outlive this call: the writer dropped it before completing the job.
            precondition(job.body == nil)
            return try job.result!.get()
        }
    }

    public func submit(
        userId: String, eventId: String?, _ body: @escaping @Sendable (inout UserState) throws -> [UInt8],
        completion: @escaping @Sendable (Result<EventResult, any Error>) -> Void
    ) {
        enqueue(WriteJob(userId: userId, eventId: eventId, body: body, completion: completion))
    }

    /// Queues a job; the first job of an idle queue starts the writer, which then runs batches until
    /// the queue is empty (jobs queued meanwhile form the next batch).
    private func enqueue(_ job: WriteJob) {
        guard !closed.load(ordering: .acquiring) else {
            job.body = nil
            job.result = .failure(StoreError.unavailable("the store is closed"))
            job.complete()
            return
        }
        let startWriter = queue.withLock { queue in
            queue.jobs.append(job)
            if queue.writerActive { return false }
            queue.writerActive = true
            return true
        }
        if startWriter { writerQueue.async { [self] in drainQueue() } }
    }

    /// The writer: one transaction per batch of queued jobs; each job completes after its batch's
    /// commit (or failure), outside the writer lock, while newer jobs queue up for the next batch.
    private func drainQueue() {
        while true {
            let batch = queue.withLock { queue in
                let batch = Array(queue.jobs.prefix(Self.maxBatch))
                queue.jobs.removeFirst(batch.count)
                if batch.isEmpty { queue.writerActive = false }
                return batch
            }
            if batch.isEmpty { return }
            let now = currentUnixTime()
            let committed = writer.withLock { writer in
                let committed = runBatch(batch, writer: &writer, now: now)
                if committed {
                    checkpointIfNeeded(&writer)
                    writer.commitsSincePurge += 1
                    if writer.commitsSincePurge >= Self.purgeEvery {
                        writer.commitsSincePurge = 0
                        try? writer.purgeExpiredEvents(now: now)
                    }
                }
                return committed
            }
            if committed {
                statistics.withLock { s in
                    s.updates += batch.count
                    s.commits += 1
                    s.largestBatch = max(s.largestBatch, batch.count)
                }
            }
            for job in batch { job.complete() }
        }
    }

    /// After a commit: a background checkpoint past `checkpointFrames`; the writer's own RESTART
    /// checkpoint past `blockingCheckpointFrames` (see there).
    private func checkpointIfNeeded(_ writer: inout Writer) {
        guard let db = writer.current else { return }
        let frames = db.walFrames
        if frames >= writer.nextBlockingCheckpointFrames {
            // A background checkpoint still running holds the checkpoint lock: let it finish (the
            // next commit comes back here), and ask for no new one meanwhile.
            guard checkpointer.isIdle else { return }
            let restarted = (try? db.checkpoint(.restart, busyTimeoutMilliseconds: Self.blockingCheckpointWaitMilliseconds)) != nil
            writer.nextBlockingCheckpointFrames = restarted ? Self.blockingCheckpointFrames : frames + Self.blockingCheckpointFrames
            if restarted { statistics.withLock { $0.walRestarts += 1 } }
        } else if frames >= Self.checkpointFrames {
            checkpointer.request()
        }
    }

    /// Runs `batch` in one transaction. Sets every job's result and drops every body. Returns true
    /// when the transaction committed.
    private func runBatch(_ batch: [WriteJob], writer: inout Writer, now: Int64) -> Bool {
        defer { for job in batch { job.body = nil } }
        func failAll(_ error: any Error) {
            let mapped = Self.mapped(error)
            for job in batch { job.result = .failure(mapped) }
            noteFault(error, writer: &writer)
        }
        if writer.closed {
            for job in batch { job.result = .failure(StoreError.unavailable("the store is closed")) }
            return false
        }
        let db: Connection
        do {
            db = try writer.connection(path: path, options: options)
            try db.run("BEGIN IMMEDIATE")
        } catch {
            failAll(error)
            return false
        }
        for job in batch {
            guard let body = job.body else { continue }
            job.body = nil
            do {
                // One update alone needs no savepoint: a failure rolls the whole transaction back.
                let result =
                    batch.count == 1
                    ? try Self.apply(job, body: body, db, now: now)
                    : try db.savepoint("job") { try Self.apply(job, body: body, db, now: now) }
                job.result = .success(result)
            } catch {
                if db.isAutocommit {
                    // SQLite ended the transaction itself (disk full, I/O error): nothing in this batch committed.
                    failAll(error)
                    return false
                }
                job.result = .failure(error is SQLiteError ? Self.mapped(error) : error)
                if batch.count == 1 {
                    // Without a savepoint the single update's partial writes are undone by rollback.
                    db.rollbackIfNeeded()
                    if let sqliteError = error as? SQLiteError { noteFault(sqliteError, writer: &writer) }
                    return false
                }
            }
        }
        do {
            try db.run("COMMIT")
        } catch {
            db.rollbackIfNeeded()
            failAll(error)
            return false
        }
        writeFault.store(false, ordering: .releasing)
        return true
    }

    /// One update inside the open transaction: replay, or load, run the body, write the difference,
    /// record the event.
    private static func apply(
        _ job: WriteJob, body: (inout UserState) throws -> [UInt8], _ db: Connection, now: Int64
    ) throws -> EventResult {
        if let eventId = job.eventId,
            case .blob(let outcome)? = try db.scalar(
                "SELECT outcome FROM processed_events WHERE user_id = ?1 AND event_id = ?2",
                [.text(job.userId), .text(eventId)])
        {
            return EventResult(outcome: outcome, replayed: true)
        }
        let old = try UserStateSQL.load(userId: job.userId, db)
        var new = old
        let outcome = try body(&new)
        try UserStateSQL.writeChanges(userId: job.userId, from: old, to: new, db)
        if let eventId = job.eventId {
            try db.run(
                "INSERT INTO processed_events (user_id, event_id, outcome, processed_at) VALUES (?1, ?2, ?3, ?4)",
                [.text(job.userId), .text(eventId), .blob(outcome), .integer(now)])
        }
        return EventResult(outcome: outcome, replayed: false)
    }

    public func deleteUser(userId: String) throws(StoreError) {
        try write { db in
            try db.transaction(.immediate) {
                for table in ["container_counts", "latches", "stack", "content_heights", "processed_events"] {
                    try db.run("DELETE FROM \(table) WHERE user_id = ?1", [.text(userId)])
                }
            }
        }
    }

    // MARK: - Operations

    /// Reads through this thread's connection; after a storage fault (when a write failed) also
    /// probes the writer with a real commit, so readiness clears by itself once the fault does.
    public func ping() throws(StoreError) {
        try read { db in _ = try db.scalar("SELECT count(*) FROM schema_migrations") }
        // A writer that fell back to read-only (the file was not writable when it opened) cannot write.
        if writer.withLock({ $0.current?.isReadOnly == true }) { writeFault.store(true, ordering: .releasing) }
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

    /// How many updates committed in how many transactions so far.
    public var writeStatistics: WriteStatistics {
        var s = statistics.withLock { $0 }
        s.checkpoints = checkpointer.completed
        return s
    }

    /// Checkpoints the WAL (TRUNCATE) and closes every connection, readers first so that closing the
    /// writer (the last connection) removes the `-wal` and `-shm` files. Idempotent.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // Let the writer finish what is queued (no new jobs are accepted now). Polled rather than
        // `writerQueue.sync`, which would deadlock when the last reference drops on the writer thread.
        while queue.withLock({ $0.writerActive }) { usleep(1_000) }
        let slots = readerRegistry.slots.withLock { slots in
            defer { slots.removeAll() }
            return slots.compactMap(\.slot)
        }
        for slot in slots { slot.close() }
        checkpointer.close()
        writer.withLock { writer in
            if let db = writer.current {
                db.rollbackIfNeeded()
                _ = try? db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.close()
            }
            writer.current = nil
            writer.closed = true
        }
    }

    // MARK: - Plumbing

    private func read<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        guard !closed.load(ordering: .acquiring) else { throw .unavailable("the store is closed") }
        let slot: ReaderSlot
        do { slot = try readers.get() } catch { throw .failure("\(error)") }
        return try slot.use(body)
    }

    @discardableResult
    private func write<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        guard !closed.load(ordering: .acquiring) else { throw .unavailable("the store is closed") }
        return try writer.withLock { writer throws(StoreError) -> T in
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

    /// After a storage error: no transaction may stay open, and a connection that may be stuck in the
    /// fault (opened read-only, I/O error) is dropped so the next write reopens the file.
    private func noteFault(_ error: any Error, writer: inout Writer) {
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

// MARK: - Writer

/// The single writer connection, reopened after a fault.
struct Writer {
    var current: Connection?
    var commitsSincePurge = 0
    /// WAL frames at which the writer next checkpoints itself (moved on when readers held it up).
    var nextBlockingCheckpointFrames = SQLiteSheetStore.blockingCheckpointFrames
    /// Set by `close()`: the connection is never reopened.
    var closed = false

    init(connection: Connection) { current = connection }

    mutating func connection(path: String, options: Connection.Options) throws(SQLiteError) -> Connection {
        try current.opened(path: path, flags: [.readWrite, .create, .noMutex], options: options) { db throws(SQLiteError) in
            try db.trackWALSize()
        }
    }

    /// Deletes event ids older than the retention, at most 1000 per call (bounded time under the lock).
    mutating func purgeExpiredEvents(now: Int64) throws {
        guard let db = current else { return }
        try db.transaction(.immediate) {
            try db.run(
                """
                DELETE FROM processed_events WHERE (user_id, event_id) IN (
                    SELECT user_id, event_id FROM processed_events WHERE processed_at < ?1 LIMIT 1000)
                """, [.integer(now - SQLiteSheetStore.eventRetentionSeconds)])
        }
    }
}

/// One queued update: run by the writer, completed after its batch's commit.
final class WriteJob: @unchecked Sendable {
    // Invariant: `body` and `result` are written only by the writer thread before `complete()`; the
    // submitter reads `result` only after its completion ran (which orders the writes before the reads).
    let userId: String
    let eventId: String?
    var body: ((inout UserState) throws -> [UInt8])?
    var result: Result<EventResult, any Error>?
    private let completion: (Result<EventResult, any Error>) -> Void

    init(userId: String, eventId: String?, body: @escaping (inout UserState) throws -> [UInt8],
         completion: @escaping (Result<EventResult, any Error>) -> Void) {
        self.userId = userId; self.eventId = eventId; self.body = body; self.completion = completion
    }

    /// Hands the result to the submitter (exactly once, after `result` is set).
    func complete() { completion(result!) }
}

struct WriteQueue {
    var jobs: [WriteJob] = []
    /// A drain of the queue is scheduled or running on the writer queue.
    var writerActive = false
}

// MARK: - Readers

/// A thread's reader connection, behind a lock only so that `close()` on another thread is safe.
final class ReaderSlot: Sendable {
    private let connection: Locked<Connection?>
    private let closed = Atomic<Bool>(false)
    private let path: String
    private let options: Connection.Options

    init(path: String, options: Connection.Options) {
        self.path = path
        self.options = options
        self.connection = Locked(nil)
    }

    func use<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        try connection.withLock { current throws(StoreError) -> T in
            if closed.load(ordering: .relaxed) { throw .unavailable("the store is closed") }
            do {
                return try body(try current.opened(path: path, flags: [.readOnly, .noMutex], options: options))
            } catch let error as SQLiteError {
                // A reader that hit an I/O or open error is reopened next time.
                if error.isTransient, error.code != .busy, error.code != .locked {
                    current?.close()
                    current = nil
                }
                throw StoreError(error)
            } catch let error as StoreError {
                throw error
            } catch {
                throw .failure("\(error)")
            }
        }
    }

    func close() {
        connection.withLock { current in
            closed.store(true, ordering: .relaxed)
            current?.close()
            current = nil
        }
    }
}

final class ReaderRegistry: Sendable {
    let slots = Mutex<[WeakSlot]>([])
}

struct WeakSlot: Sendable {
    weak var slot: ReaderSlot?
}

// MARK: - Helpers

extension Optional where Wrapped == Connection {
    /// The connection held here, or a new one to `path` (set up by `prepare`) that is kept here from
    /// now on. A connection dropped after a fault (`nil`) is reopened this way on next use.
    mutating func opened(
        path: String, flags: OpenFlags, options: Connection.Options,
        prepare: (Connection) throws(SQLiteError) -> Void = { _ in }
    ) throws(SQLiteError) -> Connection {
        if let self { return self }
        let db = try Connection(path: path, flags: flags, options: options)
        try prepare(db)
        self = db
        return db
    }
}

func currentUnixTime() -> Int64 { Int64(time(nil)) }

/// Bytes available to this process on the file system holding `path` (UInt64.max when unknown).
func freeBytes(onFileSystemOf path: String) -> UInt64 {
    var info = statvfs()
    guard statvfs(path, &info) == 0 else { return .max }
    return UInt64(info.f_bavail) &* UInt64(info.f_frsize)
}

func createParentDirectory(of path: String) throws(StoreError) {
    guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return }
    let directory = String(path[..<slash])
    var prefix = path.hasPrefix("/") ? "" : "."
    for component in directory.split(separator: "/") {
        prefix += "/" + component
        if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
            throw .unavailable("cannot create the database directory \(prefix): \(String(cString: strerror(errno)))")
        }
    }
}

extension Migrator {
    func statusOfEmptyDatabase() throws(StoreError) -> [MigrationStatus] {
        migrations.map {
            MigrationStatus(
                version: $0.version, name: $0.name, applied: false, appliedAt: nil, checksum: Crypto.SHA256.hex($0.bytes),
                shipped: true, checksumMatches: nil)
        }
    }
}

import Concurrency
import SQLiteKit
import SheetStore
import Synchronization

/// The read side of the SQLite store: one read-only connection per thread (`SQLITE_OPEN_NOMUTEX`),
/// opened on first use. In WAL mode readers never wait for the writer, and each read statement sees
/// one committed snapshot.
///
/// **Snapshots kept between reads.** Beginning a read transaction costs three system calls (SQLite
/// locks and unlocks a read mark of the WAL index with `fcntl` and checks the database file's size;
/// docs/benchmarks-history.md, eighth pass, has what that weighs). The writer is in this process and bumps `writeGeneration`
/// after each of its transactions, before anything it wrote is acknowledged; so a read transaction
/// begun at generation *g* still shows every acknowledged write while the generation is *g*, and
/// `readSnapshot` keeps it open for the thread's next read. Kept snapshots do not hold back
/// checkpoints: the idle ones are ended before each (`releaseIdleSnapshots`), and a read that saw a
/// write end while it ran ends its own. This holds because the database has one writer, the one in
/// this process (the store's contract: one sheetd process per database file).
final class ReaderPool: Sendable {
    private let slots: ThreadLocal<ReaderSlot, any Error>
    /// This pool's slots (for `close()`).
    private let registry: ReaderRegistry
    /// Shared with every other pool on the same file in this process (see `SnapshotCoordination`).
    private let shared: SnapshotCoordination
    /// Read transactions begun by `readSnapshot` (a kept one that served a read is not counted again).
    private let snapshotsBegun = Atomic<Int>(0)

    init(path: String, options: Connection.Options, shared: SnapshotCoordination) {
        let registry = ReaderRegistry()
        self.registry = registry
        self.shared = shared
        let readerOptions = Connection.Options(
            walJournal: false, synchronous: options.synchronous,
            busyTimeoutMilliseconds: options.busyTimeoutMilliseconds, foreignKeys: options.foreignKeys)
        self.slots = ThreadLocal {
            let slot = ReaderSlot(path: path, options: readerOptions)
            registry.add(slot)
            shared.slots.add(slot)
            return slot
        }
    }

    /// Runs `body` on this thread's connection outside any transaction (so it may open its own);
    /// each of its statements reads the latest committed snapshot.
    func read<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        try slot().use(body)
    }

    /// Runs `body` on this thread's connection inside a read transaction that shows every write
    /// acknowledged before the call: the one kept from this thread's last read when no write ended
    /// since it began, otherwise a new one, kept for the next read.
    func readSnapshot<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        try slot().useSnapshot(writeGeneration: shared.writeGeneration, begun: snapshotsBegun, body)
    }

    /// The user rows committed lately by any store of this file in this process.
    var recentStates: RecentUserStates { shared.recentStates }

    /// How many read transactions `readSnapshot` began so far.
    var readSnapshotsBegun: Int { snapshotsBegun.load(ordering: .relaxed) }

    /// The writer calls this after each of its transactions (committed or not), before anything it
    /// wrote is acknowledged: later `readSnapshot`s begin new transactions.
    func writesEnded() {
        shared.writeGeneration.wrappingAdd(1, ordering: .releasing)
    }

    /// Ends the kept read transactions of the threads not reading right now, before a checkpoint: a
    /// kept snapshot would hold back the copy of the WAL frames after it (a running read ends its
    /// own when it sees that a write ended). Readers begin new ones when they next read.
    func releaseIdleSnapshots() {
        for slot in shared.slots.all { slot.endSnapshotIfIdle() }
    }

    /// Closes every thread's connection (from any thread); later reads are refused.
    func close() {
        for slot in registry.all { slot.close() }
    }

    private func slot() throws(StoreError) -> ReaderSlot {
        do { return try slots.get() } catch { throw .failure("\(error)") }
    }
}

/// A thread's reader connection, behind a lock only so that `close()` and `releaseIdleSnapshots()`
/// on other threads are safe.
final class ReaderSlot: Sendable {
    private struct Reader {
        var connection: Connection?
        /// The write generation at which the kept read transaction began; nil: none is open.
        var snapshot: UInt64?
    }

    private let reader: Locked<Reader>
    private let closed = Atomic<Bool>(false)
    private let path: String
    private let options: Connection.Options

    init(path: String, options: Connection.Options) {
        self.path = path
        self.options = options
        self.reader = Locked(Reader())
    }

    func use<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        try withConnection { reader, db in
            Self.endSnapshot(&reader, db)
            return try body(db)
        }
    }

    func useSnapshot<T>(
        writeGeneration: borrowing Atomic<UInt64>, begun: borrowing Atomic<Int>, _ body: (Connection) throws -> T
    ) throws(StoreError) -> T {
        try withConnection { reader, db in
            let generation = writeGeneration.load(ordering: .acquiring)
            if reader.snapshot != generation {
                Self.endSnapshot(&reader, db)
                // Deferred: the transaction takes its snapshot at the body's first read, which is
                // after `generation` was read, so it shows at least every write before it.
                try db.run("BEGIN")
                reader.snapshot = generation
                begun.wrappingAdd(1, ordering: .relaxed)
            }
            do {
                let result = try body(db)
                // A write ended during the read: the snapshot is stale already. End it now, or a
                // checkpoint that found this slot busy would wait for this thread's next read.
                if writeGeneration.load(ordering: .acquiring) != generation { Self.endSnapshot(&reader, db) }
                return result
            } catch {
                Self.endSnapshot(&reader, db)
                throw error
            }
        }
    }

    /// Ends the kept read transaction unless a read is running on the slot.
    func endSnapshotIfIdle() {
        _ = reader.withLockIfAvailable { reader in
            guard let db = reader.connection else { return }
            Self.endSnapshot(&reader, db)
        }
    }

    func close() {
        reader.withLock { reader in
            closed.store(true, ordering: .relaxed)
            reader.connection?.close()
            reader.connection = nil
            reader.snapshot = nil
        }
    }

    /// Runs `body` with this thread's connection (opened on first use) under the slot's lock.
    private func withConnection<T>(_ body: (inout Reader, Connection) throws -> T) throws(StoreError) -> T {
        try reader.withLock { reader throws(StoreError) -> T in
            if closed.load(ordering: .relaxed) { throw .unavailable("the store is closed") }
            do {
                let db = try reader.connection.opened(path: path, flags: [.readOnly, .noMutex], options: options)
                return try body(&reader, db)
            } catch let error as SQLiteError {
                // A reader that hit an I/O or open error is reopened next time.
                if error.isTransient, error.code != .busy, error.code != .locked {
                    reader.connection?.close()
                    reader.connection = nil
                    reader.snapshot = nil
                }
                throw StoreError(error)
            } catch let error as StoreError {
                throw error
            } catch {
                throw .failure("\(error)")
            }
        }
    }

    /// Ends the kept read transaction, if any (a read-only transaction: COMMIT only releases its
    /// snapshot; if even that fails, ROLLBACK does).
    private static func endSnapshot(_ reader: inout Reader, _ db: Connection) {
        guard reader.snapshot != nil else { return }
        reader.snapshot = nil
        if (try? db.run("COMMIT")) == nil { db.rollbackIfNeeded() }
    }
}

/// Slots made so far, weakly (a thread's slot goes when the thread exits).
final class ReaderRegistry: Sendable {
    let slots = Mutex<[WeakSlot]>([])

    func add(_ slot: ReaderSlot) {
        slots.withLock { slots in
            slots.removeAll { $0.slot == nil }
            slots.append(WeakSlot(slot: slot))
        }
    }

    var all: [ReaderSlot] { slots.withLock { $0.compactMap(\.slot) } }
}

struct WeakSlot: Sendable {
    weak var slot: ReaderSlot?
}

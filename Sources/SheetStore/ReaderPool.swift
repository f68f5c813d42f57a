import Concurrency
import SQLiteKit
import Synchronization

/// The read side of the SQLite store: one read-only connection per thread (`SQLITE_OPEN_NOMUTEX`),
/// opened on first use. In WAL mode readers never wait for the writer, and each read statement sees
/// one committed snapshot.
final class ReaderPool: Sendable {
    private let slots: ThreadLocal<ReaderSlot, any Error>
    private let registry: ReaderRegistry

    init(path: String, options: Connection.Options) {
        let registry = ReaderRegistry()
        self.registry = registry
        let readerOptions = Connection.Options(
            walJournal: false, synchronous: options.synchronous,
            busyTimeoutMilliseconds: options.busyTimeoutMilliseconds, foreignKeys: options.foreignKeys)
        self.slots = ThreadLocal {
            let slot = ReaderSlot(path: path, options: readerOptions)
            registry.slots.withLock { slots in
                slots.removeAll { $0.slot == nil }
                slots.append(WeakSlot(slot: slot))
            }
            return slot
        }
    }

    /// Runs `body` on this thread's connection.
    func read<T>(_ body: (Connection) throws -> T) throws(StoreError) -> T {
        let slot: ReaderSlot
        do { slot = try slots.get() } catch { throw .failure("\(error)") }
        return try slot.use(body)
    }

    /// Closes every thread's connection (from any thread); later reads are refused.
    func close() {
        let slots = registry.slots.withLock { slots in
            defer { slots.removeAll() }
            return slots.compactMap(\.slot)
        }
        for slot in slots { slot.close() }
    }
}

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

/// Every slot made so far (weakly: a thread's slot goes when the thread exits), for `close()`.
final class ReaderRegistry: Sendable {
    let slots = Mutex<[WeakSlot]>([])
}

struct WeakSlot: Sendable {
    weak var slot: ReaderSlot?
}

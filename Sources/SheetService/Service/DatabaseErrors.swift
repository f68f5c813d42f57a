import MicroHTTP
import SheetStore
import Synchronization

/// Storage operations that failed (`sheetd_database_errors_total`), and the one place a store error
/// becomes the route's problem.
final class DatabaseErrors: Sendable {
    private let failures = Atomic<Int>(0)

    /// Failures counted so far.
    var count: Int { failures.load(ordering: .relaxed) }

    /// Counts one failure.
    func record() { failures.add(1, ordering: .relaxed) }

    /// Runs a storage operation; a failure is counted and answered as the storage problem.
    func guarding<T>(_ operation: () throws(StoreError) -> T) throws(Problem) -> T {
        do {
            return try operation()
        } catch {
            record()
            throw Problems.storage(error)
        }
    }
}

/// Whether the service is draining (SIGTERM): readiness turns 503 and no new stream opens.
final class Draining: Sendable {
    private let flag = Atomic<Bool>(false)

    var isDraining: Bool { flag.load(ordering: .relaxed) }

    func begin() { flag.store(true, ordering: .relaxed) }
}

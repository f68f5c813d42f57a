#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value only reachable under a lock. Used for the SQLite connections, which are not Sendable:
/// `Synchronization.Mutex` asks the compiler to prove the connection never escapes its region,
/// which it cannot for a connection handed to a caller's closure.
///
/// Invariant that makes `@unchecked Sendable` sound: `value` is only read or written inside
/// `withLock`, and callers never keep what it hands them after their closure returns.
final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        let rc = pthread_mutex_init(mutex, nil)
        precondition(rc == 0, "pthread_mutex_init failed (\(rc))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A value under a lock, with a condition threads wait on until the value is what they need: the one
/// mutex-and-condition type of the project (worker queues, connection pools, test drivers). Waits
/// measure time on the monotonic clock, so a change of the wall clock does not shorten or stretch them.
///
/// `@unchecked Sendable` invariant: `value` is only touched with `mutex` held (inside `withLock` or
/// `wait`), and callers keep nothing it hands them after their closure returns.
public final class ConditionLock<Value>: @unchecked Sendable {
    /// Whom a change made under the lock wakes.
    public enum Wakeup: Sendable {
        case none
        /// One waiter (any one): for a change one of them can use (a job queued, a connection returned).
        case one
        /// Every waiter: for a change all of them must see (shutdown).
        case all
    }

    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var value: Value

    public init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        precondition(pthread_mutex_init(mutex, nil) == 0, "pthread_mutex_init failed")
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if !canImport(Darwin)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        precondition(pthread_cond_init(condition, &attributes) == 0, "pthread_cond_init failed")
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value, then wakes waiters as `wake` says.
    public func withLock<R, E: Error>(wake: Wakeup = .none, _ body: (inout Value) throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer {
            notify(wake)
            pthread_mutex_unlock(mutex)
        }
        return try body(&value)
    }

    /// Waits until `ready` holds for the value (checked under the lock, again after every wakeup),
    /// then runs `body` with exclusive access and wakes waiters as `wake` says. Returns nil, without
    /// running `body`, when `timeout` passes first.
    public func wait<R, E: Error>(
        until ready: (inout Value) -> Bool, timeout: Duration? = nil, wake: Wakeup = .none, _ body: (inout Value) throws(E) -> R
    ) throws(E) -> R? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        let deadline = timeout.map { Self.deadline(after: $0) }
        while !ready(&value) {
            if var deadline {
                if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT && !ready(&value) { return nil }
            } else {
                pthread_cond_wait(condition, mutex)
            }
        }
        defer { notify(wake) }
        return try body(&value)
    }

    private func notify(_ wake: Wakeup) {
        switch wake {
        case .none: break
        case .one: pthread_cond_signal(condition)
        case .all: pthread_cond_broadcast(condition)
        }
    }

    /// The absolute time `after` from now on the condition's clock.
    private static func deadline(after: Duration) -> timespec {
        var now = timespec()
        #if canImport(Darwin)
        clock_gettime(CLOCK_REALTIME, &now)
        #else
        clock_gettime(CLOCK_MONOTONIC, &now)
        #endif
        let (seconds, attoseconds) = max(after, .zero).components
        var nanos = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var secs = Int(now.tv_sec) + Int(seconds)
        if nanos >= 1_000_000_000 {
            secs += nanos / 1_000_000_000
            nanos %= 1_000_000_000
        }
        return timespec(tv_sec: secs, tv_nsec: nanos)
    }
}

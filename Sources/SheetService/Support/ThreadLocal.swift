#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One lazily made object per OS thread (a pthread key), released when the thread exits. For state
/// that the HTTP workers read on every request and that must not be behind a shared lock (a
/// contended `Mutex` costs futex system calls on the hot path).
final class ThreadLocal<T: AnyObject>: @unchecked Sendable {
    // Invariant: `key` is written once in init; each value is only touched by its own thread.
    private var key = pthread_key_t()
    private let make: @Sendable () -> T

    init(_ make: @escaping @Sendable () -> T) {
        self.make = make
        let rc = pthread_key_create(&key) { value in
            if let value { Unmanaged<AnyObject>.fromOpaque(value).release() }
        }
        precondition(rc == 0, "pthread_key_create failed (\(rc))")
    }

    /// Values of threads still alive are released here (deleting the key runs no destructors); the
    /// calling thread's own value is released too. Other live threads' values leak, which only
    /// happens when a service is torn down while its worker threads live on (tests).
    deinit {
        if let value = pthread_getspecific(key) {
            pthread_setspecific(key, nil)
            Unmanaged<AnyObject>.fromOpaque(value).release()
        }
        pthread_key_delete(key)
    }

    /// This thread's object, made on first use.
    var value: T {
        if let existing = pthread_getspecific(key) {
            return Unmanaged<T>.fromOpaque(existing).takeUnretainedValue()
        }
        let made = make()
        pthread_setspecific(key, Unmanaged.passRetained(made as AnyObject).toOpaque())
        return made
    }
}

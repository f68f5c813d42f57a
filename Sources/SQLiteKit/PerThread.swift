#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One lazily made value per OS thread (Swift has no `thread_local`), released when the thread exits.
///
/// Made for per-worker SQLite reader connections: the libmicrohttpd workers are plain threads, each
/// gets its own value, and the pthread key destructor releases it when `MHD_stop_daemon` joins them.
public final class PerThread<T: AnyObject>: @unchecked Sendable {
    // Invariant: `key` is written once in init; the values are only touched by their own thread.
    private var key = pthread_key_t()
    private let make: @Sendable () throws -> T

    public init(_ make: @escaping @Sendable () throws -> T) {
        self.make = make
        let rc = pthread_key_create(&key) { value in
            if let value { Unmanaged<AnyObject>.fromOpaque(value).release() }
        }
        precondition(rc == 0, "pthread_key_create failed (\(rc)): too many PerThread values alive")
    }

    /// Deleting the key does not run the destructors: values of threads still alive are leaked, so
    /// callers release what they hold (e.g. close the connections) before dropping a PerThread.
    deinit { pthread_key_delete(key) }

    /// This thread's value, made on first use. A throwing `make` leaves nothing stored.
    public func get() throws -> T {
        if let existing = pthread_getspecific(key) {
            return Unmanaged<T>.fromOpaque(existing).takeUnretainedValue()
        }
        let value = try make()
        let rc = pthread_setspecific(key, Unmanaged.passRetained(value as AnyObject).toOpaque())
        precondition(rc == 0, "pthread_setspecific failed (\(rc))")
        return value
    }

    /// This thread's value if it was made already.
    public var current: T? {
        pthread_getspecific(key).map { Unmanaged<T>.fromOpaque($0).takeUnretainedValue() }
    }
}

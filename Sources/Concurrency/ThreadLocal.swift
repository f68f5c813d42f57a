#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One lazily made object per OS thread (Swift has no `thread_local`), released when the thread
/// exits. For state the HTTP workers use on every request without a shared lock (a contended lock
/// costs futex system calls), and for per-worker SQLite reader connections (libmicrohttpd's workers
/// are plain threads; the key's destructor releases their values when `MHD_stop_daemon` joins them).
///
/// `@unchecked Sendable` invariant: `key` is written once in `init`, and each thread's value is
/// only touched by that thread.
public final class ThreadLocal<Value: AnyObject, Failure: Error>: @unchecked Sendable {
    private var key = pthread_key_t()
    private let make: @Sendable () throws(Failure) -> Value

    /// `make` runs on a thread's first `get()`; when it throws, nothing is stored.
    public init(_ make: @escaping @Sendable () throws(Failure) -> Value) {
        self.make = make
        let rc = pthread_key_create(&key) { value in
            if let value { Unmanaged<AnyObject>.fromOpaque(value).release() }
        }
        precondition(rc == 0, "pthread_key_create failed (\(rc)): too many thread-local values alive")
    }

    /// Releases the calling thread's value. Deleting the key runs no destructors: values of other
    /// threads still alive leak, so owners release what those hold (close connections) first.
    deinit {
        if let value = pthread_getspecific(key) {
            pthread_setspecific(key, nil)
            Unmanaged<AnyObject>.fromOpaque(value).release()
        }
        pthread_key_delete(key)
    }

    /// This thread's value, made on first use.
    public func get() throws(Failure) -> Value {
        if let existing = pthread_getspecific(key) {
            return Unmanaged<Value>.fromOpaque(existing).takeUnretainedValue()
        }
        let made = try make()
        let rc = pthread_setspecific(key, Unmanaged.passRetained(made as AnyObject).toOpaque())
        precondition(rc == 0, "pthread_setspecific failed (\(rc))")
        return made
    }

    /// This thread's value if it was made already.
    public var current: Value? {
        pthread_getspecific(key).map { Unmanaged<Value>.fromOpaque($0).takeUnretainedValue() }
    }
}

extension ThreadLocal where Failure == Never {
    /// This thread's value, made on first use.
    public var value: Value { self.get() }
}

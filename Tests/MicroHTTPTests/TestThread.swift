#if canImport(Glibc)
import Glibc
#endif

/// A joinable OS thread (the server's behaviour under real parallel clients, not the cooperative pool).
final class TestThread {
    private var thread = pthread_t()

    init(_ body: @escaping @Sendable () -> Void) {
        final class Payload { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
        let payload = Unmanaged.passRetained(Payload(body)).toOpaque()
        let rc = pthread_create(
            &thread, nil,
            { p in
                let payload = Unmanaged<AnyObject>.fromOpaque(p!).takeRetainedValue()
                (payload as! Payload).body()
                return nil
            }, payload)
        precondition(rc == 0, "pthread_create failed")
    }

    func join() { pthread_join(thread, nil) }
}

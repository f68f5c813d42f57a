#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A fixed number of plain threads running queued jobs in arrival order.
///
/// For blocking work that must not grow the process: a concurrent `DispatchQueue` adds a thread each
/// time its jobs block (on a database read), and every new thread opens its own thread-local reader
/// connection. Here the threads, and so the connections they open, are exactly `count`, for the
/// life of the pool. `shutDown()` (or the last release) lets the threads finish the queue and exit.
public final class WorkerThreads: Sendable {
    private let state: WorkerQueue

    /// The cores online now (at least one).
    public static var onlineCores: Int {
        let n = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return n > 0 ? n : 1
    }

    /// Starts `count` threads (at least one).
    public init(count: Int) {
        state = WorkerQueue()
        for _ in 0..<max(1, count) {
            let queue = state
            startDetachedThread { queue.run() }
        }
    }

    deinit { state.shutDown() }

    /// Queues `job`; one of the threads runs it. Dropped after `shutDown()`.
    public func run(_ job: @escaping @Sendable () -> Void) { state.push(job) }

    /// Stops taking jobs; the threads finish what is queued and exit.
    public func shutDown() { state.shutDown() }
}

/// The queue the worker threads share: a pthread mutex and condition variable around an array.
final class WorkerQueue: @unchecked Sendable {
    // Invariant: `jobs`, `head` and `stopped` are only touched with `mutex` held.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let ready = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var jobs: [(@Sendable () -> Void)?] = []
    private var head = 0
    private var stopped = false

    init() {
        mutex.initialize(to: pthread_mutex_t())
        ready.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(ready, nil)
    }

    deinit {
        pthread_cond_destroy(ready)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        ready.deallocate()
    }

    func push(_ job: @escaping @Sendable () -> Void) {
        pthread_mutex_lock(mutex)
        if !stopped {
            jobs.append(job)
            pthread_cond_signal(ready)
        }
        pthread_mutex_unlock(mutex)
    }

    func shutDown() {
        pthread_mutex_lock(mutex)
        stopped = true
        pthread_cond_broadcast(ready)
        pthread_mutex_unlock(mutex)
    }

    /// A worker thread's loop: until shut down and drained.
    func run() {
        while let job = next() { job() }
    }

    private func next() -> (@Sendable () -> Void)? {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while head == jobs.count {
            if stopped { return nil }
            pthread_cond_wait(ready, mutex)
        }
        let job = jobs[head]
        jobs[head] = nil
        head += 1
        // Compact once the consumed prefix dominates, so the array does not grow for ever.
        if head > 64 && head * 2 > jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }
}

/// Starts a detached thread running `body`.
public func startDetachedThread(_ body: @escaping @Sendable () -> Void) {
    final class Box: @unchecked Sendable {
        // Handed to exactly one new thread, which takes it back with takeRetainedValue.
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    defer { pthread_attr_destroy(&attributes) }
    #if canImport(Darwin)
    var thread: pthread_t?
    #else
    var thread = pthread_t()
    #endif
    let rc = pthread_create(
        &thread, &attributes,
        { raw in
            #if canImport(Darwin)
            let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
            #else
            let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
            #endif
            box.body()
            return nil
        }, box)
    precondition(rc == 0, "pthread_create failed (\(rc))")
}

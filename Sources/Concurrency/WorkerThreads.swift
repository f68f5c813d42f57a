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

/// The queue the worker threads share.
final class WorkerQueue: Sendable {
    private struct State {
        var jobs: [(@Sendable () -> Void)?] = []
        var head = 0
        var stopped = false
    }
    private let state = ConditionLock(State())

    func push(_ job: @escaping @Sendable () -> Void) {
        state.withLock(wake: .one) { s in
            if !s.stopped { s.jobs.append(job) }
        }
    }

    func shutDown() {
        state.withLock(wake: .all) { $0.stopped = true }
    }

    /// A worker thread's loop: until shut down and drained.
    func run() {
        while let job = next() { job() }
    }

    private func next() -> (@Sendable () -> Void)? {
        let job = state.wait(until: { $0.head < $0.jobs.count || $0.stopped }) { s -> (@Sendable () -> Void)? in
            guard s.head < s.jobs.count else { return nil }  // stopped and drained
            let job = s.jobs[s.head]
            s.jobs[s.head] = nil
            s.head += 1
            // Compact once the consumed prefix dominates, so the array does not grow for ever.
            if s.head > 64 && s.head * 2 > s.jobs.count {
                s.jobs.removeFirst(s.head)
                s.head = 0
            }
            return job
        }
        return job ?? nil
    }
}

/// Starts a detached thread running `body`.
public func startDetachedThread(_ body: @escaping @Sendable () -> Void) {
    let rc = startDetachedThreadIfPossible(body)
    precondition(rc == 0, "pthread_create failed (\(rc))")
}

/// `startDetachedThread`, for a caller that copes without the thread: 0 when it started, else
/// `pthread_create`'s error (and `body` is released without running).
public func startDetachedThreadIfPossible(_ body: @escaping @Sendable () -> Void) -> Int32 {
    final class Box: @unchecked Sendable {
        // Handed to exactly one new thread, which takes it back with takeRetainedValue.
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    // Like libdispatch's workers, the toolbox's threads block the asynchronous signals (SIGTERM,
    // SIGINT, …), whenever they start: a process-directed signal then stays pending for the thread
    // that waits for it (`sigwait`). A thread inherits its starter's mask, so it is set around the
    // start. Faults (SIGSEGV, SIGBUS, …) still reach the thread at fault.
    var blocked = sigset_t()
    var previous = sigset_t()
    sigfillset(&blocked)
    for fault in [SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGABRT, SIGSYS] { sigdelset(&blocked, fault) }
    pthread_sigmask(SIG_BLOCK, &blocked, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
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
    if rc != 0 { Unmanaged<Box>.fromOpaque(box).release() }
    return rc
}

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
/// Which thread runs what: `Sources/Concurrency/THREADS.md`.
public final class WorkerThreads: Sendable {
    private let state: WorkerQueue

    /// The process's background pool: occasional work that must leave the request path and the
    /// timer thread but needs no thread of its own (WAL checkpoints, impact analyses, key reloads and
    /// fetches, giving free memory back). Two threads, so that one long job (an impact analysis runs
    /// up to its time budget) never holds up the others; started on first use, never stopped (its
    /// threads wait on a condition, idle, when there is nothing to do). A job that can wait behind
    /// another's block (a checkpoint behind a JWKS fetch) belongs here; one on a request's path does not.
    public static let background = WorkerThreads(count: 2, name: "background")

    /// The cores online now (at least one).
    public static var onlineCores: Int {
        let n = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return n > 0 ? n : 1
    }

    /// Starts `count` threads (at least one), named `name` (`ps -L`, `top -H`; at most 15 bytes are kept).
    public init(count: Int, name: String = "workers") {
        state = WorkerQueue()
        for _ in 0..<max(1, count) {
            let queue = state
            startDetachedThread(named: name) { queue.run() }
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

/// Starts a detached thread running `body`, named `name` (at most 15 bytes are kept).
public func startDetachedThread(named name: String, _ body: @escaping @Sendable () -> Void) {
    let rc = startDetachedThreadIfPossible(named: name, body)
    precondition(rc == 0, "pthread_create failed (\(rc))")
}

/// `startDetachedThread`, for a caller that copes without the thread: 0 when it started, else
/// `pthread_create`'s error (and `body` is released without running).
public func startDetachedThreadIfPossible(named name: String, _ body: @escaping @Sendable () -> Void) -> Int32 {
    final class Box: @unchecked Sendable {
        // Handed to exactly one new thread, which takes it back with takeRetainedValue.
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
    let box = Unmanaged.passRetained(Box(name, body)).toOpaque()
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
            nameThisThread(box.name)
            box.body()
            return nil
        }, box)
    if rc != 0 { Unmanaged<Box>.fromOpaque(box).release() }
    return rc
}

/// Names the calling thread (Linux keeps 15 bytes; the rest is cut at a UTF-8 boundary). Through
/// `/proc/thread-self/comm`: glibc's `pthread_setname_np` is not visible to Swift without _GNU_SOURCE.
func nameThisThread(_ name: String) {
    var bytes = Array(name.utf8.prefix(15))
    while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
    if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
    #if canImport(Darwin)
    bytes.append(0)
    bytes.withUnsafeBufferPointer { $0.withMemoryRebound(to: CChar.self) { _ = pthread_setname_np($0.baseAddress!) } }
    #else
    let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { return }
    _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    close(fd)
    #endif
}

/// The calling thread's name (empty when unknown).
public func currentThreadName() -> String {
    var buffer = [UInt8](repeating: 0, count: 16)
    #if canImport(Darwin)
    buffer.withUnsafeMutableBufferPointer { $0.withMemoryRebound(to: CChar.self) { _ = pthread_getname_np(pthread_self(), $0.baseAddress!, 16) } }
    #else
    let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    _ = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, 15) }
    close(fd)
    #endif
    var name = buffer.prefix { $0 != 0 }
    if name.last == 0x0A { name.removeLast() }
    return String(decoding: name, as: UTF8.self)
}

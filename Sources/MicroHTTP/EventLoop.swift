internal import CMicroHTTPD
import Concurrency
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One libmicrohttpd daemon in external mode, and the thread that runs its loop: each turn
/// (`LoopTurn`) is one MHD_run_wait, which waits until the daemon has work (or must time a connection
/// out) and runs the daemon's callbacks. Work asked for during a turn (a group commit of the events it
/// received) runs when the turn ends, on this thread, before the loop waits again.
///
/// In external mode, MHD_resume_connection from another thread does not wake the daemon's loop:
/// resumes go through `EventLoop.resume`, which wakes the connection's loop through an eventfd in the
/// daemon's epoll set (at most one write per turn however many resume). On the loop's own thread
/// nothing more is needed: MHD_run_wait resumes pending connections before it waits, and then does
/// not wait.
///
/// `@unchecked Sendable` invariant: the daemon is used by the loop's thread while it runs, and by
/// `HTTPServer` only for thread-safe calls (`MHD_get_daemon_info`, `MHD_resume_connection`) until
/// `stop()` returned; then it is stopped once, by its owner.
final class EventLoop: @unchecked Sendable {
    let daemon: OpaquePointer
    private let wakeup: Int32
    /// A wake-up was written since the turn began: later resumes need not write again.
    private let woken = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let finished = Latch<Void>()
    /// Runs after each turn, on the loop's thread; returns the longest the next wait may take
    /// (milliseconds, -1: as long as the daemon allows).
    private let afterTurn: @Sendable () -> Int32

    /// The running loops by daemon, for `resume` from other threads.
    private static let running = Mutex<[Int: EventLoop]>([:])
    /// The loop whose thread this is.
    private static let current = ThreadLocal<Current, Never> { Current() }
    private final class Current { var loop: EventLoop? }

    /// Starts the loop's thread; nil (and the daemon is left to the caller) when the descriptors or
    /// the thread cannot be had.
    init?(daemon: OpaquePointer, name: String, afterTurn: @escaping @Sendable () -> Int32) {
        self.daemon = daemon
        self.afterTurn = afterTurn
        wakeup = cmhd_eventfd()
        guard wakeup >= 0 else { return nil }
        guard cmhd_daemon_add_wakeup(daemon, wakeup) == 0 else {
            close(wakeup)
            return nil
        }
        Self.running.withLock { $0[Int(bitPattern: daemon)] = self }
        let started = startDetachedThreadIfPossible(named: name) { [self] in
            Self.current.value.loop = self
            run()
            Self.current.value.loop = nil
        }
        guard started == 0 else {
            Self.running.withLock { _ = $0.removeValue(forKey: Int(bitPattern: daemon)) }
            close(wakeup)
            return nil
        }
    }

    /// MHD_resume_connection, and the connection's loop told (from any thread).
    static func resume(_ connection: OpaquePointer) {
        MHD_resume_connection(connection)
        guard let daemon = cmhd_connection_daemon(connection) else { return }
        let key = Int(bitPattern: daemon)
        if let here = current.current?.loop, Int(bitPattern: here.daemon) == key { return }
        // Under the registry's lock: `stop` removes the loop under it before closing the eventfd.
        running.withLock { loops in
            if let loop = loops[key] { loop.wake() }
        }
    }

    /// Ends the loop's current or next wait (any thread; under the registry's lock, see `resume`).
    private func wake() {
        if !woken.exchange(true, ordering: .acquiringAndReleasing) { cmhd_loop_wake(wakeup) }
    }

    /// Connections this loop's daemon has open.
    var connections: Int { Int(cmhd_current_connections(daemon)) }

    private func run() {
        // The longest the next wait may take (ms, -1: until the daemon has work or a timeout).
        var cap: Int32 = -1
        while !stopping.load(ordering: .acquiring) {
            // Before the wait: a resume from now on writes a wake-up again (one MHD sees, or that
            // ends the wait).
            woken.store(false, ordering: .releasing)
            LoopTurn.run { _ = MHD_run_wait(daemon, cap) }
            cap = afterTurn()
        }
        finished.open(with: ())
    }

    /// Ends the loop after its current turn and waits for that; the daemon is not stopped. Once.
    func stop() {
        precondition(!stopping.exchange(true, ordering: .acquiringAndReleasing), "the loop was stopped already")
        cmhd_loop_wake(wakeup)
        finished.wait()
        Self.running.withLock { _ = $0.removeValue(forKey: Int(bitPattern: daemon)) }
        close(wakeup)
    }
}

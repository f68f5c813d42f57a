internal import CMicroHTTPD
import Concurrency
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One libmicrohttpd daemon in external mode, and the thread that runs its loop: wait until the
/// daemon has work (or must time a connection out), then one turn (`LoopTurn`) of MHD_run, in which
/// the daemon's callbacks run. Work asked for during a turn (a group commit of the events it
/// received) runs when the turn ends, on this thread, before the loop waits again.
///
/// In external mode, MHD_resume_connection from another thread does not wake the daemon's loop:
/// resumes go through `EventLoop.resume`, which wakes the connection's loop (or, on that loop's own
/// thread, has its next wait return at once).
///
/// `@unchecked Sendable` invariant: the daemon is used by the loop's thread while it runs, and by
/// `HTTPServer` only for thread-safe calls (`MHD_get_daemon_info`, `MHD_resume_connection`) until
/// `stop()` returned; then it is stopped once, by its owner.
final class EventLoop: @unchecked Sendable {
    let daemon: OpaquePointer
    private let poll: Int32
    private let wakeup: Int32
    private let stopping = Atomic<Bool>(false)
    private let finished = Latch<Void>()
    /// Set on the loop's thread when it resumed a connection itself: the next wait must not block.
    private var resumedHere = false
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
        let daemonPoll = cmhd_daemon_epoll_fd(daemon)
        wakeup = cmhd_eventfd()
        poll = daemonPoll >= 0 && wakeup >= 0 ? cmhd_loop_create(daemonPoll, wakeup) : -1
        guard poll >= 0 else {
            if wakeup >= 0 { close(wakeup) }
            return nil
        }
        Self.running.withLock { $0[Int(bitPattern: daemon)] = self }
        let started = startDetachedThreadIfPossible { [self] in
            name.withCString { cmhd_name_this_thread($0) }
            Self.current.value.loop = self
            run()
            Self.current.value.loop = nil
        }
        guard started == 0 else {
            Self.running.withLock { _ = $0.removeValue(forKey: Int(bitPattern: daemon)) }
            close(poll)
            close(wakeup)
            return nil
        }
    }

    /// MHD_resume_connection, and the connection's loop told (from any thread).
    static func resume(_ connection: OpaquePointer) {
        MHD_resume_connection(connection)
        guard let daemon = cmhd_connection_daemon(connection) else { return }
        let key = Int(bitPattern: daemon)
        if let here = current.current?.loop, Int(bitPattern: here.daemon) == key {
            here.resumedHere = true
            return
        }
        // Under the registry's lock: `stop` removes the loop under it before closing the eventfd.
        running.withLock { loops in
            if let loop = loops[key] { cmhd_loop_wake(loop.wakeup) }
        }
    }

    /// Connections this loop's daemon has open.
    var connections: Int { Int(cmhd_current_connections(daemon)) }

    private func run() {
        var cap: Int32 = -1
        while !stopping.load(ordering: .acquiring) {
            var timeout = resumedHere ? 0 : cmhd_daemon_timeout_ms(daemon)
            if cap >= 0 && (timeout < 0 || timeout > cap) { timeout = cap }
            resumedHere = false
            cmhd_loop_wait(poll, wakeup, timeout)
            if stopping.load(ordering: .acquiring) { break }
            LoopTurn.run { _ = MHD_run(daemon) }
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
        close(poll)
        close(wakeup)
    }
}

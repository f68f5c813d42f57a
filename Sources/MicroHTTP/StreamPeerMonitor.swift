internal import CMicroHTTPD
import Concurrency
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A parked connection's owner, told when its client goes away.
protocol PeerWatcher: AnyObject, Sendable {
    /// The client closed its end; runs on the monitor's thread, with no lock of the monitor held.
    func peerClosed()
}

/// Notices at once when the client of a suspended connection goes away: a stream waiting for its next
/// event, or a long-poll waiting for a change.
///
/// MHD takes suspended sockets out of its epoll set: a client's close would go unseen until the next
/// write (a heartbeat, seconds later; for a long-poll, the end of its wait), holding its descriptor,
/// its memory, its place in the connection limit and its place under the per-user limit. This monitor
/// keeps every such socket in its own epoll set, asking only for the peer's close (EPOLLRDHUP), and
/// on one tells the owner, which ends the connection now (a stream shuts its socket down, a long-poll
/// answers) and resumes it, so MHD finishes it.
final class StreamPeerMonitor: Sendable {
    private struct Watched {
        var streams: [UInt: any PeerWatcher] = [:]
        var nextToken: UInt = 1
    }

    private let epoll: Int32
    private let wakeup: Int32
    private let watched = Mutex(Watched())
    private let running = Atomic<Bool>(false)
    private let stopped = Atomic<Bool>(false)

    init() {
        epoll = cmhd_monitor_create()
        wakeup = cmhd_eventfd()
        if epoll >= 0 && wakeup >= 0 { _ = cmhd_monitor_add_wakeup(epoll, wakeup) }
    }

    deinit {
        if epoll >= 0 { close(epoll) }
        if wakeup >= 0 { close(wakeup) }
    }

    /// Starts watching `socket` for `stream`; the token to `unwatch` with (0: not watched).
    func watch(_ socket: Int32, _ stream: any PeerWatcher) -> UInt {
        guard epoll >= 0, socket >= 0, !stopped.load(ordering: .relaxed) else { return 0 }
        startThreadOnce()
        let token = watched.withLock { w -> UInt in
            let token = w.nextToken
            w.nextToken &+= 1
            w.streams[token] = stream
            return token
        }
        guard cmhd_monitor_add(epoll, socket, UnsafeMutableRawPointer(bitPattern: token)) == 0 else {
            _ = watched.withLock { $0.streams.removeValue(forKey: token) }
            return 0
        }
        return token
    }

    /// Stops watching (NOTIFY_COMPLETED, before MHD closes the socket).
    func unwatch(_ socket: Int32, token: UInt) {
        guard token != 0 else { return }
        _ = cmhd_monitor_remove(epoll, socket)
        _ = watched.withLock { $0.streams.removeValue(forKey: token) }
    }

    /// Ends the thread (after the daemon stopped).
    func stop() {
        stopped.store(true, ordering: .relaxed)
        guard wakeup >= 0 else { return }
        var one: UInt64 = 1
        _ = write(wakeup, &one, 8)
    }

    private func startThreadOnce() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        // The thread holds the monitor until it returns. Without it, the next watch tries again.
        if startDetachedThreadIfPossible(named: "peer-monitor", { [self] in run() }) != 0 {
            running.store(false, ordering: .relaxed)
        }
    }

    private func run() {
        var contexts = [UnsafeMutableRawPointer?](repeating: nil, count: 64)
        while !stopped.load(ordering: .relaxed) {
            // No timeout: a close of a watched peer or `stop()` (the wake-up eventfd) ends the wait.
            let n = contexts.withUnsafeMutableBufferPointer { cmhd_monitor_wait(epoll, $0.baseAddress, 64, -1) }
            guard n > 0 else { continue }
            for i in 0..<Int(n) {
                guard let context = contexts[i] else { continue }  // the wake-up eventfd
                let token = UInt(bitPattern: context)
                if let stream = watched.withLock({ $0.streams[token] }) { stream.peerClosed() }
            }
        }
    }
}

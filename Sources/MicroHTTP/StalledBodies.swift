internal import CMicroHTTPD
import Concurrency

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Requests whose body libmicrohttpd can no longer read, answered instead of left hanging.
///
/// When the head filled the connection's memory without the head check seeing it (empty lines
/// before the request line: MHD skips them but keeps their bytes), MHD has no room left to read the
/// body into. With its own polling thread MHD then answers 500 itself; run from an external loop (as
/// here) it waits for a socket event that never comes, until the idle timeout. So each loop watches
/// its requests that wait for body bytes: one that made no progress over two turn ends while bytes
/// wait unread in its socket is stalled (a healthy one is read at the next turn: the bytes' arrival
/// wakes the loop and MHD reads them), and gets a 431 written to the socket, which is then shut down
/// so that MHD closes the connection.
///
/// Confined to each loop's thread (`ThreadLocal`); `RequestState` is too. An entry holds its request,
/// never touches the connection after the request finished (NOTIFY_COMPLETED), and is checked on the
/// thread whose MHD calls completed it.
final class StalledBodies {
    private struct Entry {
        let request: RequestState
        let connection: OpaquePointer
        var calls: Int
        var strikes: Int
    }

    private var entries: [Entry] = []
    private static let perThread = ThreadLocal<StalledBodies, Never> { StalledBodies() }

    /// After a call of the connection: watches the request while it waits for the body its head
    /// announced (a request without one is answered within the same MHD pass: not worth a watch).
    static func watchIfWaiting(_ request: RequestState, _ connection: OpaquePointer) {
        guard request.bodyAnnounced, !request.watched,
            request.machine.phase == .receivingBody || request.machine.phase == .discardingBody
        else { return }
        request.watched = true
        perThread.value.entries.append(Entry(request: request, connection: connection, calls: request.calls, strikes: 0))
    }

    /// At the end of each turn of this thread's loop: returns how soon (milliseconds) the loop must
    /// look again, -1 when nothing is watched.
    static func check(core: ServerCore) -> Int32 {
        guard let watch = perThread.current, !watch.entries.isEmpty else { return -1 }
        watch.entries.removeAll { entry in
            // A finished request's connection may be freed already (and its memory reused).
            let phase = entry.request.machine.phase
            let waiting = !entry.request.finished && (phase == .receivingBody || phase == .discardingBody)
            if !waiting { entry.request.watched = false }
            return !waiting
        }
        var index = 0
        while index < watch.entries.count {
            var entry = watch.entries[index]
            if entry.request.calls != entry.calls {
                entry.calls = entry.request.calls
                entry.strikes = 0
            } else {
                let fd = cmhd_connection_fd(entry.connection)
                entry.strikes = fd >= 0 && cmhd_unread_bytes(fd) > 0 ? entry.strikes + 1 : 0
                if entry.strikes >= 2 {
                    core.answerStalled(fd: fd, requestId: entry.request.machine.answeredRequestId)
                    entry.request.watched = false
                    watch.entries.remove(at: index)
                    continue
                }
            }
            watch.entries[index] = entry
            index += 1
        }
        return watch.entries.isEmpty ? -1 : 2
    }
}

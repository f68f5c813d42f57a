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
/// its requests that wait for body bytes, and at each turn's end tells each request's machine whether
/// bytes wait unread in its socket (`RequestStateMachine.stallChecked`): the machine decides when the
/// body is stalled and returns the 431 to write to the socket, which is then shut down so that MHD
/// closes the connection.
///
/// Confined to each loop's thread (`ThreadLocal`); `RequestState` is too. An entry holds its request,
/// never touches the connection once the request no longer waits for its body (a finished request's
/// connection may be freed already), and is checked on the thread whose MHD calls completed it.
final class StalledBodies {
    private struct Entry {
        let request: RequestState
        let connection: OpaquePointer
    }

    private var entries: [Entry] = []
    private static let perThread = ThreadLocal<StalledBodies, Never> { StalledBodies() }

    /// Watches `request` (its machine asked for it: `startStallWatch`).
    static func watch(_ request: RequestState, _ connection: OpaquePointer) {
        perThread.value.entries.append(Entry(request: request, connection: connection))
    }

    /// At the end of each turn of this thread's loop: returns how soon (milliseconds) the loop must
    /// look again, -1 when nothing is watched.
    static func check(core: ServerCore) -> Int32 {
        guard let watch = perThread.current, !watch.entries.isEmpty else { return -1 }
        watch.entries.removeAll { entry in
            let request = entry.request
            guard request.machine.awaitsBody else { return true }
            let fd = cmhd_connection_fd(entry.connection)
            let action = request.machine.stallChecked(bytesUnread: fd >= 0 && cmhd_unread_bytes(fd) > 0)
            guard case .answerOnSocket = action else { return false }
            core.answerOnSocket(action, socket: fd)
            return true
        }
        return watch.entries.isEmpty ? -1 : 2
    }
}

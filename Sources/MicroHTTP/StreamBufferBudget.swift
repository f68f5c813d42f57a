import Concurrency
import Synchronization

/// The bytes every event stream of a server may hold together, waiting for their readers.
///
/// Each stream is capped on its own (`EventStream.maxPendingBytes`), but the worst case over all of
/// them (the stream limit times the cap) is far more memory than a server should give to clients that
/// do not read. A stream takes from this budget before it buffers and gives back as MHD takes its bytes
/// (or when it closes); a stream that cannot take is cut, like a reader that fell behind its own cap.
/// A reader that keeps up holds next to nothing, so only slow readers are ever refused.
public final class StreamBufferBudget: Sendable {
    /// The most all streams may hold.
    public let limit: Int
    private let used = Atomic<Int>(0)
    /// Streams cut because the budget was spent (for /metrics).
    private let refusals = Atomic<Int>(0)

    public init(limit: Int) {
        self.limit = limit
    }

    /// Takes `count` bytes; false (nothing taken) when that would go over the limit.
    func take(_ count: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current + count <= limit else {
                refusals.add(1, ordering: .relaxed)
                return false
            }
            let (exchanged, original) = used.compareExchange(
                expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back `count` bytes taken before.
    func give(_ count: Int) {
        guard count > 0 else { return }
        used.subtract(count, ordering: .relaxed)
    }

    /// Bytes held by all streams now.
    public var usedBytes: Int { used.load(ordering: .relaxed) }

    /// Streams cut since start because the budget was spent.
    public var refusedStreams: Int { refusals.load(ordering: .relaxed) }
}

/// A note, on the worker thread that is about to make MHD close a stream's connection on purpose,
/// that MHD's own warning for it ("Closing connection (application error generating response)") is
/// expected: MHD logs it on the same thread right after the stream's reader returns. A client that
/// closes its stream is a normal disconnect, not a warning; a stream cut for falling behind gets a
/// line of its own saying so.
enum ExpectedConnectionClose {
    /// MHD's message after a reader callback ends a body with an error (connection.c).
    static let daemonMessage = "Closing connection (application error generating response)"

    private final class Note {
        var reason: EventStream.CutReason?
    }
    private static let note = ThreadLocal<Note, Never> { Note() }

    /// The stream's reader is about to end its body with an error, on purpose.
    static func note(_ reason: EventStream.CutReason) {
        note.value.reason = reason
    }

    /// Whether MHD's `message` is the one a purposeful close on this thread expects (and forgets the
    /// note), with the reason noted.
    static func take(for message: String) -> EventStream.CutReason? {
        guard let held = note.current, let reason = held.reason else { return nil }
        held.reason = nil
        return message.hasPrefix(daemonMessage) ? reason : nil
    }
}

import Concurrency

/// A Server-Sent Events reader over a raw connection: sends one GET, then hands out the events of its
/// chunked `text/event-stream` body one at a time.
///
/// Used by one thread at a time, like `RawConnection`; its state sits behind a lock all the same.
public final class EventStreamClient: Sendable {
    /// One event: its fields (`event`, `id`, `data`, `retry`), or a comment line (`: heartbeat`).
    public struct Event: Sendable, Equatable {
        public var fields: [String: String] = [:]
        public var comment: String?
        public var event: String? { fields["event"] }
        public var id: String? { fields["id"] }
        public var data: String? { fields["data"] }
    }

    public let connection: RawConnection
    public let head: RawResponse
    private struct State {
        var pending: [UInt8] = []
        var ended = false
    }
    private let state = Locked(State())
    /// Body bytes received and not handed out yet.
    private var pending: [UInt8] {
        get { state.withLock { $0.pending } }
        set { state.withLock { $0.pending = newValue } }
    }
    /// True once the server ended the body (or closed the connection).
    public private(set) var ended: Bool {
        get { state.withLock { $0.ended } }
        set { state.withLock { $0.ended = newValue } }
    }

    public init(port: Int, target: String, headers: [(String, String)]) throws {
        connection = try RawConnection(port: port)
        var text = "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        text += "\r\n"
        try connection.send(text)
        head = try connection.readHead()
    }

    /// The next event (blocks up to `timeoutMilliseconds`); nil when the stream ended first. Throws on timeout.
    public func next(timeoutMilliseconds: Int = 5000) throws -> Event? {
        connection.setReadTimeout(milliseconds: timeoutMilliseconds)
        while true {
            let pending = pending
            if let end = Self.blockEnd(pending) {
                let block = String(decoding: pending[0..<end], as: UTF8.self)
                self.pending.removeFirst(end + 2)
                return Self.parse(block)
            }
            if ended { return nil }
            do {
                guard let chunk = try connection.readChunk() else {
                    ended = true
                    continue
                }
                self.pending.append(contentsOf: chunk)
            } catch let error as ClientError where error.description != "read timed out" {
                ended = true
            }
        }
    }

    /// Every event until the stream ends or nothing arrives for `quietMilliseconds`.
    public func drain(quietMilliseconds: Int) -> [Event] {
        var events: [Event] = []
        while let event = try? next(timeoutMilliseconds: quietMilliseconds) { events.append(event) }
        return events
    }

    private static func blockEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 2 else { return nil }
        for i in 0..<(bytes.count - 1) where bytes[i] == 10 && bytes[i + 1] == 10 { return i }
        return nil
    }

    private static func parse(_ block: String) -> Event {
        var event = Event()
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                event.comment = String(line.dropFirst()).trimmingSpaces()
                continue
            }
            guard let colon = line.firstIndex(of: ":") else { continue }
            var value = line[line.index(after: colon)...]
            if value.first == " " { value = value.dropFirst() }
            event.fields[String(line[..<colon])] = String(value)
        }
        return event
    }
}

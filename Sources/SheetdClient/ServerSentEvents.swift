/// One Server-Sent Event (WHATWG HTML, "Server-sent events": interpreting an event stream).
public struct ServerSentEvent: Sendable, Equatable {
    /// The `event:` type (`message` when the event named none).
    public var event: String
    /// The `data:` lines joined with newlines.
    public var data: String
    /// The last event id at dispatch (`id:` of this event or an earlier one), if any.
    public var id: String?

    /// An event.
    public init(event: String = "message", data: String, id: String? = nil) {
        self.event = event
        self.data = data
        self.id = id
    }
}

/// A pure, incremental parser of `text/event-stream` bytes: feed chunks as they arrive, take the events.
///
/// Lines end with LF, CRLF or CR (also split across chunks); comment lines (`: heartbeat`) are ignored;
/// a blank line dispatches the event when it has data; `retry:` updates ``retryMilliseconds``.
public struct ServerSentEventParser: Sendable {
    /// The last `retry:` hint, in milliseconds.
    public private(set) var retryMilliseconds: Int?
    /// The last event id seen (what a reconnect sends as `Last-Event-ID`).
    public private(set) var lastEventId: String?

    private var line: [UInt8] = []
    private var lastWasCR = false
    private var eventType = ""
    private var data: [UInt8] = []
    private var hasData = false

    /// An empty parser.
    public init() {}

    /// Parses `bytes` and returns the events they completed.
    public mutating func feed<Bytes: Sequence>(_ bytes: Bytes) -> [ServerSentEvent] where Bytes.Element == UInt8 {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if lastWasCR {
                lastWasCR = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0D:
                lastWasCR = true
                if let event = endLine() { events.append(event) }
            case 0x0A:
                if let event = endLine() { events.append(event) }
            default:
                line.append(byte)
            }
        }
        return events
    }

    private mutating func endLine() -> ServerSentEvent? {
        defer { line.removeAll(keepingCapacity: true) }
        if line.isEmpty { return dispatch() }
        if line.first == UInt8(ascii: ":") { return nil }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = String(decoding: line[..<(colon ?? line.endIndex)], as: UTF8.self)
        var value = colon.map { line[line.index(after: $0)...] } ?? line[line.endIndex...]
        if value.first == UInt8(ascii: " ") { value = value.dropFirst() }
        switch name {
        case "event": eventType = String(decoding: value, as: UTF8.self)
        case "data":
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case "id" where !value.contains(0): lastEventId = String(decoding: value, as: UTF8.self)
        case "retry": if let ms = Int(String(decoding: value, as: UTF8.self)), ms >= 0 { retryMilliseconds = ms }
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventType = ""
            data.removeAll(keepingCapacity: true)
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(event: eventType.isEmpty ? "message" : eventType, data: String(decoding: data, as: UTF8.self), id: lastEventId)
    }
}

import Concurrency
@_spi(Testing) public import MicroHTTP

/// Runs requests through the server's own request lifecycle (`ServerCore`: the state machine, routing,
/// handlers, deferred answers and their parking) over a fake connection instead of a socket, calling
/// it as libmicrohttpd does: the request line, the head, the body, the end of the body, and again after
/// each resume. For handler tests that need no socket (Hummingbird's `.router` test mode).
public struct FakeConnectionDriver {
    private let core: ServerCore

    /// A driver for the routes `router` has now (it does not freeze the router).
    public init(router: Router, configuration: HTTPServerConfiguration = HTTPServerConfiguration()) {
        core = ServerCore(router: router, configuration: configuration)
    }

    /// One request; `target` is the raw path with an optional `?query`. Waits (at most `timeout`) for a
    /// deferred answer. A HEAD answer has no body, as on the wire.
    public func respond(
        _ method: HTTPMethod, _ target: String, headers: [(String, String)] = [], body: [UInt8] = [],
        timeout: Duration = .seconds(10)
    ) -> FakeAnswer {
        let bytes = Array(target.utf8)
        let q = bytes.firstIndex(of: UInt8(ascii: "?"))
        let path = String(decoding: bytes[..<(q ?? bytes.count)], as: UTF8.self)
        let query = q.map { Array(bytes[($0 + 1)...]) } ?? []
        let connection = FakeConnection(headers: headers, headOnly: method == .HEAD)
        let request = core.begin(query: query)
        defer { core.completed(request) }
        return method.rawValue.withCString { m in
            path.withCString { url in
                func call(_ upload: UnsafeRawBufferPointer?) -> Bool {
                    core.handle(connection, request, method: m, url: url, version: "HTTP/1.1", upload: upload)
                }
                guard call(nil) else { return connection.dropped() }
                if !body.isEmpty {
                    guard body.withUnsafeBytes({ call($0) }) else { return connection.dropped() }
                }
                guard call(nil) else { return connection.dropped() }
                // Parked: called again after each resume, until answered.
                while connection.answer == nil {
                    guard connection.waitForResume(timeout: timeout) else { return .timedOut }
                    guard call(nil) else { return connection.dropped() }
                }
                return connection.answer ?? .timedOut
            }
        }
    }
}

/// What a fake connection saw of one request.
public enum FakeAnswer: Sendable {
    /// A queued answer: status, headers as sent, body as sent (none for HEAD and 304).
    case response(status: Int, headers: [(String, String)], body: [UInt8])
    /// The server dropped the connection without an answer.
    case dropped
    /// A deferred answer did not come in time.
    case timedOut

    public var status: Int {
        if case .response(let status, _, _) = self { return status }
        return 0
    }
    public var body: [UInt8] {
        if case .response(_, _, let body) = self { return body }
        return []
    }
    public var text: String { String(decoding: body, as: UTF8.self) }
    /// The first value of a header (case-insensitive).
    public func header(_ name: String) -> String? {
        guard case .response(_, let headers, _) = self else { return nil }
        return headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// A connection without a socket: headers as given, suspend and resume as flags, the queued answer
/// recorded.
final class FakeConnection: HTTPConnection {
    typealias Answer = FakeAnswer

    private struct State {
        var suspended = false
        var resumes = 0
        var answer: Answer?
    }

    private let headers: [(String, String)]
    private let headOnly: Bool
    private let state = ConditionLock(State())

    init(headers: [(String, String)], headOnly: Bool) {
        self.headers = headers
        self.headOnly = headOnly
    }

    var answer: Answer? { state.withLock { $0.answer } }

    func dropped() -> Answer {
        state.withLock { s in
            if s.answer == nil { s.answer = .dropped }
            return s.answer ?? .dropped
        }
    }

    /// Waits for a resume of the suspended connection; false after `timeout`.
    func waitForResume(timeout: Duration) -> Bool {
        state.wait(until: { $0.resumes > 0 }, timeout: timeout) { $0.resumes -= 1 } != nil
    }

    func withHeader(_ name: String, _ body: (Span<UInt8>?) -> Void) {
        guard var value = headers.first(where: { $0.0.lowercased() == name.lowercased() })?.1 else { return body(nil) }
        value.withUTF8 { body($0.span) }
    }

    var socket: Int32 { -1 }

    func headMemoryUsed() -> Int { 0 }

    func framingProblem(method: UnsafePointer<CChar>, version: UnsafePointer<CChar>?) -> String? { nil }

    func suspend() {
        state.withLock { s in
            precondition(!s.suspended, "suspended twice")
            s.suspended = true
        }
    }

    func resume() {
        state.withLock(wake: .all) { s in
            precondition(s.suspended, "resumed without a suspend")
            s.suspended = false
            s.resumes += 1
        }
    }

    func queue(status: Int, headers: SentHeaders, body: SentBody) -> Bool {
        var sent: [(String, String)] = []
        headers.forEachLine { sent.append(($0, $1)) }
        let bytes: [UInt8]
        switch body {
        case .bytes(let b): bytes = headOnly ? [] : b
        case .lengthOnly: bytes = []
        case .stream(let stream):
            // No reader drains it here: end it, so its owner sees it closed.
            stream.finish()
            bytes = []
        }
        state.withLock { $0.answer = .response(status: status, headers: sent, body: bytes) }
        return true
    }
}

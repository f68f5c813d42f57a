import Foundation
import FoundationNetworking
import MicroHTTP

/// A tiny HTTP stub in front of a live sheetd, for the retry tests. For the first `failures` requests
/// it answers `status` with `Retry-After` (a 503 or 429 problem): either without forwarding (the
/// server never saw the request), or after forwarding it (the server applied it and the answer was
/// lost on the way back). Later requests are forwarded and answered as sheetd answered.
final class FlakyProxy: @unchecked Sendable {
    // @unchecked Sendable: `seen` is only touched under `lock`; the rest is set once.
    enum Mode { case refuse, forwardThenFail }

    let server: HTTPServer
    private let lock = NSLock()
    private var seen = 0

    var baseURL: URL { URL(string: "http://127.0.0.1:\(server.port)")! }
    /// Requests received so far.
    var requests: Int {
        lock.lock()
        defer { lock.unlock() }
        return seen
    }

    init(upstream: URL, failures: Int, mode: Mode, status: Int = 503, retryAfter: String = "0", templates: [(HTTPMethod, String)]) throws {
        let router = Router()
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threads = 2
        configuration.accessLog = false
        server = HTTPServer(configuration: configuration, router: router, metrics: HTTPMetrics())
        for (method, template) in templates {
            router.add(method, template) { [unowned self] request in
                let n = self.next()
                let failing = n <= failures
                if failing && mode == .refuse { return Self.problem(status, retryAfter: retryAfter) }
                let answer = try Self.forward(request, to: upstream)
                return failing ? Self.problem(status, retryAfter: retryAfter) : answer
            }
        }
        try server.start()
    }

    deinit { server.stop(drainTimeout: .seconds(1)) }

    private func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        seen += 1
        return seen
    }

    static func problem(_ status: Int, retryAfter: String) -> HTTPResponse {
        let slug = status == 429 ? "too-many-requests" : "unavailable"
        let body = #"{"type":"urn:sheetd:problem:\#(slug)","title":"Stub","status":\#(status),"detail":"a stub answer"}"#
        return HTTPResponse(
            status: status, headers: [("Content-Type", "application/problem+json"), ("Retry-After", retryAfter)], body: Array(body.utf8))
    }

    /// Forwards the request (path, Authorization, body) to sheetd and copies its answer (blocking this
    /// worker thread, which MHD lets us do).
    static func forward(_ request: HTTPRequest, to upstream: URL) throws -> HTTPResponse {
        var forwarded = URLRequest(url: URL(string: upstream.absoluteString + request.path)!)
        forwarded.httpMethod = request.method.rawValue
        for name in ["Authorization", "Content-Type", "If-None-Match"] {
            if let value = request.header(name) { forwarded.setValue(value, forHTTPHeaderField: name) }
        }
        if !request.body.isEmpty { forwarded.httpBody = Data(request.body) }
        let box = Box()
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: forwarded) { data, response, _ in
            box.set(data, response as? HTTPURLResponse)
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + 10) == .success, let (data, response) = box.get(), let response else {
            return problem(502, retryAfter: "0")
        }
        var headers: [(String, String)] = []
        for (name, value) in response.allHeaderFields {
            let name = "\(name)"
            if ["content-type", "idempotent-replayed", "etag"].contains(name.lowercased()) { headers.append((name, "\(value)")) }
        }
        return HTTPResponse(status: response.statusCode, headers: headers, body: Array(data ?? Data()))
    }

    private final class Box: @unchecked Sendable {
        // @unchecked Sendable: written before the semaphore signals, read after the wait, under `lock`.
        private let lock = NSLock()
        private var value: (Data?, HTTPURLResponse?)?
        func set(_ data: Data?, _ response: HTTPURLResponse?) {
            lock.lock()
            value = (data, response)
            lock.unlock()
        }
        func get() -> (Data?, HTTPURLResponse?)? {
            lock.lock()
            defer { lock.unlock() }
            return value
        }
    }
}

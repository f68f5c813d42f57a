import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback HTTP/1.1 proxy on a raw TCP socket (127.0.0.1, port 0) in front of a live sheetd, for
/// the retry paths. Each connection carries one request: the proxy records its head, then answers it
/// with the next scripted ``Step`` (a canned status, closing the connection), or, once the script is
/// used up, forwards it to sheetd with `Connection: close` and pipes the answer back byte for byte (a
/// decision stream included) until sheetd closes it or ``cutForwarded()`` cuts it.
final class ScriptedProxy: @unchecked Sendable {
    // @unchecked Sendable: `script`, `seen` and `open` are only touched under `lock`; the rest is set once.
    enum Step: Sendable {
        /// Answers `status` with these headers and a problem+json body, then closes.
        case answer(Int, headers: [(String, String)] = [], contentType: String = "application/problem+json")
        /// Forwards to sheetd.
        case forward
    }

    /// One request's head as it arrived.
    struct Request: Sendable {
        var method: String
        var target: String
        /// Lower-cased names.
        var headers: [String: String]
        var isStream: Bool { target.contains("/decision/stream") }
    }

    let port: Int
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    private let listener: Int32
    private let upstreamPort: Int
    private let scripted: @Sendable (Request) -> Bool
    private let lock = NSLock()
    private var script: [Step]
    private var seen: [Request] = []
    private var open: Set<Int32> = []

    /// A proxy answering the requests `scripted` selects with `script`'s steps in turn (others, and
    /// all once the script is used up, are forwarded to `upstream`).
    init(upstream: URL, script: [Step], scripted: @escaping @Sendable (Request) -> Bool = { _ in true }) throws {
        upstreamPort = upstream.port ?? 80
        self.script = script
        self.scripted = scripted
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: 0)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 64) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard ok else {
            close(listener)
            throw CollectorTimeout(description: "the proxy could not listen: errno \(errno)")
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [weak self] in
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }  // the listener was shut down
                guard let self else {
                    close(connection)
                    return
                }
                Thread.detachNewThread { self.serve(connection) }
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))  // wakes the accept loop
        close(listener)
        cutForwarded()
    }

    /// The requests received so far, in order.
    var requests: [Request] { locked { seen } }

    /// Appends steps to the script (answered before forwarding resumes).
    func append(_ steps: [Step]) { locked { script += steps } }

    /// Cuts every forwarded connection in progress, as a network failure or a crashed load balancer
    /// would (the client sees its stream end without `event: shutdown`).
    func cutForwarded() {
        for fd in locked({ open }) { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        guard let (head, rest) = Self.readHead(client), let request = Self.parse(head) else { return }
        let step: Step = locked {
            seen.append(request)
            return scripted(request) && !script.isEmpty ? script.removeFirst() : .forward
        }
        switch step {
        case .answer(let status, let headers, let contentType):
            let body = #"{"type":"urn:sheetd:problem:stub","title":"Stub","status":\#(status),"detail":"a scripted answer"}"#
            var text = "HTTP/1.1 \(status) Stub\r\nContent-Type: \(contentType)\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            Self.sendAll(client, Array((text + "\r\n" + body).utf8))
        case .forward:
            forward(head, rest, from: client)
        }
    }

    /// Sends the request on to sheetd (`Connection: close`, so sheetd ends the answer by closing) and
    /// pipes the answer back until either side closes.
    private func forward(_ head: String, _ rest: [UInt8], from client: Int32) {
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(upstream) }
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { return }
        locked { _ = open.insert(client) }
        defer { locked { _ = open.remove(client) } }
        var lines = head.components(separatedBy: "\r\n").filter { !$0.lowercased().hasPrefix("connection:") }
        lines.insert("Connection: close", at: 1)
        Self.sendAll(upstream, Array((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8) + rest)
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(upstream, $0.baseAddress, $0.count, 0) }
            guard n > 0, Self.sendAll(client, Array(buffer[..<n])) else { return }
        }
    }

    /// The request head (without its blank line) and the bytes read after it (the body, as far as
    /// it came; a request's small body comes with its head or right after it).
    private static func readHead(_ fd: Int32) -> (String, [UInt8])? {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let end: [UInt8] = Array("\r\n\r\n".utf8)
        while true {
            if let range = bytes.firstRange(of: end) {
                let head = String(decoding: bytes[..<range.lowerBound], as: UTF8.self)
                var rest = Array(bytes[range.upperBound...])
                let length =
                    head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                while rest.count < length {
                    let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    guard n > 0 else { return nil }
                    rest += buffer[..<n]
                }
                return (head, rest)
            }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return nil }
            bytes += buffer[..<n]
        }
    }

    private static func parse(_ head: String) -> Request? {
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count == 3 else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return Request(method: String(parts[0]), target: String(parts[1]), headers: headers)
    }

    /// Writes all of `bytes`; false when the peer is gone (MSG_NOSIGNAL: no SIGPIPE).
    @discardableResult
    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            sent += n
        }
        return true
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }
}

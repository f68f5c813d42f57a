#if canImport(Glibc)
import Concurrency
import Glibc
#endif

/// A parsed HTTP/1.1 response.
public struct RawResponse: Sendable {
    public var status: Int
    public var headers: [(String, String)]
    public var body: [UInt8]

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    public var text: String { String(decoding: body, as: UTF8.self) }
}

public struct ClientError: Error, CustomStringConvertible {
    public let description: String
    public init(description: String) { self.description = description }
}

/// A blocking raw-socket HTTP/1.1 client: exact control over bytes on the wire, keep-alive reuse,
/// chunked uploads and odd headers.
/// Used by one thread at a time (handed over, never shared); the bytes read ahead sit behind a lock
/// all the same, so handing it over needs no promise.
public final class RawConnection: Sendable {
    private let fd: Int32
    private let received = Locked<[UInt8]>([])
    /// Bytes read and not consumed yet.
    private var buffer: [UInt8] {
        get { received.withLock { $0 } }
        set { received.withLock { $0 = newValue } }
    }

    public init(port: Int, timeoutSeconds: Int = 10) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError(description: "socket failed") }
        var tv = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port).bigEndian)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            throw ClientError(description: "connect failed: errno \(errno)")
        }
    }

    deinit { close(fd) }

    /// Makes closing the connection send a reset instead of a FIN (SO_LINGER 0).
    public func resetOnClose() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw ClientError(description: "send failed: errno \(errno)") }
            offset += n
        }
    }

    public func send(_ s: String) throws { try send(Array(s.utf8)) }

    /// Reads more bytes into the buffer; false on EOF or error.
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 {
            buffer.append(contentsOf: chunk[0..<n])
            return true
        }
        if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { throw ClientError(description: "read timed out") }
        return false
    }

    /// Everything the server sends until it closes the connection (or a read fails or times out).
    public func readToEnd() -> [UInt8] {
        while (try? fill()) == true {}
        defer { buffer = [] }
        return buffer
    }

    /// True when the server closed the connection (EOF or reset) without sending anything more.
    public func isClosedByServer() -> Bool {
        do { return try !fill() && buffer.isEmpty } catch { return false }
    }

    /// Reads the status line and headers of the next response, leaving its body unread (for streams).
    public func readHead() throws -> RawResponse {
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = findHeaderEnd()
            if headerEnd == nil {
                guard try fill() else { throw ClientError(description: "connection closed before a response") }
            }
        }
        let headText = String(decoding: buffer[0..<headerEnd!], as: UTF8.self)
        buffer.removeFirst(headerEnd! + 4)
        var lines = headText.split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { throw ClientError(description: "bad status line") }
        var headers: [(String, String)] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingSpaces()))
        }
        return RawResponse(status: status, headers: headers, body: [])
    }

    /// Reads one response. `head`: the request was HEAD (no body follows whatever the headers say).
    public func readResponse(head: Bool = false) throws -> RawResponse {
        var response = try readHead()
        let status = response.status
        if head || status == 204 || status == 304 || (100..<200).contains(status) { return response }
        if let cl = response.header("Content-Length"), let n = Int(cl) {
            while buffer.count < n {
                guard try fill() else { throw ClientError(description: "short body") }
            }
            response.body = Array(buffer[0..<n])
            buffer.removeFirst(n)
        } else if response.header("Transfer-Encoding")?.lowercased() == "chunked" {
            response.body = try readChunked()
        } else {
            while try fill() {}
            response.body = buffer
            buffer = []
        }
        return response
    }

    private func findHeaderEnd() -> Int? {
        let buffer = buffer
        guard buffer.count >= 4 else { return nil }
        for i in 0...(buffer.count - 4) where buffer[i] == 13 && buffer[i + 1] == 10 && buffer[i + 2] == 13 && buffer[i + 3] == 10 {
            return i
        }
        return nil
    }

    private func readLine() throws -> String {
        while true {
            let buffer = buffer
            if let i = buffer.indices.dropLast().first(where: { buffer[$0] == 13 && buffer[$0 + 1] == 10 }) {
                let line = String(decoding: buffer[0..<i], as: UTF8.self)
                self.buffer.removeFirst(i + 2)
                return line
            }
            guard try fill() else { throw ClientError(description: "closed in chunk") }
        }
    }

    private func readChunked() throws -> [UInt8] {
        var body: [UInt8] = []
        while let chunk = try readChunk() { body.append(contentsOf: chunk) }
        return body
    }

    /// The data of the next chunk of a chunked body; nil after the last (empty) chunk.
    public func readChunk() throws -> [UInt8]? {
        let sizeLine = try readLine()
        guard let size = Int(sizeLine.split(separator: ";")[0], radix: 16) else { throw ClientError(description: "bad chunk") }
        if size == 0 {
            _ = try readLine()
            return nil
        }
        while buffer.count < size + 2 {
            guard try fill() else { throw ClientError(description: "short chunk") }
        }
        defer { buffer.removeFirst(size + 2) }
        return Array(buffer[0..<size])
    }

    /// Changes how long one read may wait.
    public func setReadTimeout(milliseconds: Int) {
        var tv = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends a request and reads its response.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws -> RawResponse {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (k, v) in headers { text += "\(k): \(v)\r\n" }
        if let body { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        try send(Array(text.utf8) + (body ?? []))
        return try readResponse(head: method == "HEAD")
    }
}

extension String {
    public func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}

extension Substring {
    public func trimmingSpaces() -> String { String(self).trimmingSpaces() }
}

/// One request on a fresh connection.
public func fetch(_ port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil) throws -> RawResponse {
    let c = try RawConnection(port: port)
    return try c.request(method, target, headers: headers, body: body)
}

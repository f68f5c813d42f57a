import Foundation
import SheetdClient
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The client takes gzip answers on every platform (URLSession asks for them by itself): a gzip 200
/// and the 304s that revalidate it are read whole and the connection stays usable. Each request has a
/// bounded timeout and no retry, so a stalled read fails the test instead of passing late.
///
/// Until 0.3.0 the Linux client asked for identity after stalls under the full suite's parallel load.
/// `aStaleContentLengthOn304DoesNotStallTheClient` replays what the server then sent (a 304 to a gzip
/// request carrying the identity body's Content-Length): libcurl, under URLSession on Linux, reads a
/// 304 as bodiless whatever its Content-Length (RFC 9110 §15.4.5), so that was not the stall.
@Suite struct GzipAnswerTests {
    static let homeAccounts = SheetContext(screen: "home", tab: "accounts", platform: .ios)
    static let noRetry = RetryPolicy(maxAttempts: 1, baseDelay: 0.05, maxDelay: 0.05)

    /// A card decision answered gzip-encoded (its ETag is the `-gzip` one), then revalidated twice
    /// with that tag: 304s that return the cached decision, over the same client.
    @Test func aGzipAnswerAndThe304sAfterItAreRead() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let log = ExchangeLog()
        let client = live.client(log: log, retry: Self.noRetry)
        try await client.reportCount(3, container: "offers-home")
        log.clear()
        let first = try await client.decision(for: Self.homeAccounts)
        #expect(first.present)
        #expect(first.sheet?.id == "offers")
        let etag = try #require(log.all.first?.headers["etag"])
        #expect(etag.hasSuffix("-gzip\""), "the answer was not gzip-encoded: \(etag)")
        let second = try await client.decision(for: Self.homeAccounts)
        let third = try await client.decision(for: Self.homeAccounts)
        #expect(second == first && third == first)
        #expect(log.statuses == [200, 304, 304])
        // A change after the 304s: a new gzip 200.
        try await client.reportCount(0, container: "offers-home")
        log.clear()
        let emptied = try await client.decision(for: Self.homeAccounts)
        #expect(!emptied.present)
        #expect(log.statuses == [200])
    }

    /// Many clients at once, each alternating changes (gzip 200s) and revalidations (304s), and a
    /// long-poll that waits out (304) then takes a change: every answer arrives and is right.
    @Test func manyClientsReadGzipAnswersAndRevalidationsAtOnce() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let users = (0..<8).map { "gz\($0)" }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for user in users {
                group.addTask {
                    let log = ExchangeLog()
                    let client = live.client(user, log: log, retry: Self.noRetry)
                    for round in 1...6 {
                        let count = round % 2 == 0 ? 0 : round
                        try await client.reportCount(count, container: "offers-home", seq: round)
                        log.clear()
                        let changed = try await client.decision(for: Self.homeAccounts)
                        let same = try await client.decision(for: Self.homeAccounts)
                        #expect(changed.present == (count > 0), "\(user) round \(round)")
                        #expect(same == changed)
                        #expect(log.statuses == [200, 304], "\(user) round \(round)")
                    }
                }
            }
            try await group.waitForAll()
        }
        let log = ExchangeLog()
        let polling = live.client("gz-poll", log: log, retry: Self.noRetry, liveUpdates: .longPoll, longPollWait: 1)
        try await polling.reportCount(2, container: "offers-home")
        let collector = DecisionCollector(polling.decisions(for: Self.homeAccounts))
        defer { collector.cancel() }
        let first = try await collector.waitFor(count: 1)
        #expect(first[0].present)
        try await Task.sleep(nanoseconds: 1_300_000_000)  // at least one wait ran out (a 304 to a gzip request)
        try await polling.reportCount(0, container: "offers-home")
        let second = try await collector.waitFor(count: 2)
        #expect(!second[1].present)
        #expect(log.statuses.contains(304))
        #expect(log.all.contains { $0.headers["etag"]?.hasSuffix("-gzip\"") == true })
    }

    /// The server's answers before the 304 fix, replayed on one keep-alive connection: a gzip 200, a
    /// 304 whose Content-Length is the identity body's (none of those bytes follow), another 304 and
    /// a 200. The client reads each at once, on the one connection (the 304 left it in step).
    @Test func aStaleContentLengthOn304DoesNotStallTheClient() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let token = LiveSheetd.userToken("u1")
        let counted = try fetch(
            live.port, "PUT", "/v1/users/u1/containers/offers-home/count",
            headers: [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")], body: Array(#"{"count":2}"#.utf8))
        #expect(counted.status == 200, "\(counted.text)")
        let target = "/v1/users/u1/decision?screen=home&tab=accounts&platform=ios"
        let gzip = try fetch(live.port, "GET", target, headers: [("Authorization", "Bearer \(token)"), ("Accept-Encoding", "gzip")])
        let identity = try fetch(live.port, "GET", target, headers: [("Authorization", "Bearer \(token)")])
        let etag = try #require(gzip.header("ETag"))
        #expect(gzip.status == 200 && gzip.header("Content-Encoding") == "gzip")
        #expect(identity.body.count > gzip.body.count)
        let ok =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nVary: Accept-Encoding\r\nETag: \(etag)\r\n"
            + "Content-Length: \(gzip.body.count)\r\n\r\n"
        let stale = "HTTP/1.1 304 Not Modified\r\nVary: Accept-Encoding\r\nETag: \(etag)\r\nContent-Length: \(identity.body.count)\r\n\r\n"
        let replay = try ReplayServer { head in
            head.lowercased().contains("if-none-match:") ? Array(stale.utf8) : Array(ok.utf8) + gzip.body
        }
        defer { replay.stop() }
        let log = ExchangeLog()
        let client = live.client(log: log, retry: Self.noRetry, baseURL: replay.baseURL)
        let first = try await client.decision(for: Self.homeAccounts)
        let second = try await client.decision(for: Self.homeAccounts)
        let third = try await client.decision(for: Self.homeAccounts)
        #expect(first.present && first.sheet?.id == "offers")
        #expect(second == first && third == first)
        #expect(log.statuses == [200, 304, 304])
        #expect(replay.requests == 3)
        #expect(replay.connections == 1)
    }
}

/// A loopback HTTP/1.1 server (port 0) that answers every request head with the bytes `answer`
/// returns and keeps the connection open: what a server sent, replayed byte for byte.
final class ReplayServer: @unchecked Sendable {
    // @unchecked Sendable: the counters are only touched under `lock`; the rest is set once.
    let port: Int
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    private let listener: Int32
    private let answer: @Sendable (String) -> [UInt8]
    private let lock = NSLock()
    private var counts = (requests: 0, connections: 0)
    private var sockets: [Int32] = []

    var requests: Int { lock.withLock { counts.requests } }
    var connections: Int { lock.withLock { counts.connections } }

    init(answer: @escaping @Sendable (String) -> [UInt8]) throws {
        self.answer = answer
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 16) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        guard ok else {
            close(listener)
            throw ClientError(description: "the replay server could not listen: errno \(errno)")
        }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        lock.withLock { for s in sockets { shutdown(s, Int32(SHUT_RDWR)) } }
    }

    deinit {
        stop()
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            lock.withLock {
                counts.connections += 1
                sockets.append(connection)
            }
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return }
            pending += buffer[0..<n]
            // GETs only: a request is its head.
            while let end = Self.headEnd(pending) {
                let head = String(decoding: pending[0..<end], as: UTF8.self)
                pending.removeFirst(end)
                lock.withLock { counts.requests += 1 }
                let bytes = answer(head)
                _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    /// The index just past the first `\r\n\r\n`.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i + 4
        }
        return nil
    }
}

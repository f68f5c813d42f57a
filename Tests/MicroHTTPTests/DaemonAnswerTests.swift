import Foundation
@_spi(Testing) import Observability
import TestSupport
import Testing

@testable import MicroHTTP

/// What libmicrohttpd answers and logs by itself, at a live server on port 0 over raw sockets.
@Suite struct DaemonAnswerTests {
    /// Requests libmicrohttpd refuses before the access handler sees them (or mid-body), each with
    /// the status MHD chose: the answer is problem+json all the same, and closes the connection.
    static let refusals: [(name: String, request: String, status: Int, slug: String)] = [
        ("HTTP/2.0 request line", "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505, "http-version-not-supported"),
        ("HTTP/0.9 request line", "GET /healthz HTTP/0.9\r\nHost: x\r\n\r\n", 505, "http-version-not-supported"),
        ("bad chunk size", "POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400, "bad-request"),
        (
            "chunk size beyond 64 bits", "POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nhello\r\n",
            413, "payload-too-large"
        ),
        ("Content-Length not a number", "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\nhello", 400, "bad-request"),
        (
            "Content-Length beyond 64 bits", "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\nhello", 413,
            "payload-too-large"
        ),
        ("HTTP/1.1 without Host", "GET /healthz HTTP/1.1\r\n\r\n", 400, "bad-request"),
    ]

    @Test(arguments: refusals.indices)
    func libmicrohttpdsOwnRefusalsAreProblemJSON(_ index: Int) throws {
        let refusal = Self.refusals[index]
        try withServer { (server, _) throws in
            let c = try RawConnection(port: server.port, timeoutSeconds: 5)
            try c.send(refusal.request)
            let r = try c.readResponse()
            #expect(r.status == refusal.status, "\(refusal.name)")
            #expect(r.header("Content-Type") == "application/problem+json", "\(refusal.name)")
            #expect(r.header("Connection")?.lowercased() == "close", "\(refusal.name)")
            #expect(r.header("X-Request-Id") != nil, "\(refusal.name)")
            let o = try jsonObject(r.body)
            #expect(o["status"] as? Int == refusal.status, "\(refusal.name)")
            #expect(o["type"] as? String == "urn:sheetd:problem:\(refusal.slug)", "\(refusal.name)")
            let detail = try #require(o["detail"] as? String, "\(refusal.name)")
            #expect(!detail.contains("<"), "\(refusal.name): \(detail)")
            // One answer, then the close (libmicrohttpd alone sent some header sections twice).
            #expect(c.isClosedByServer(), "\(refusal.name)")
            // The server goes on serving.
            #expect(try fetch(server.port, "GET", "/healthz").status == 200)
        }
        #expect(DaemonAnswers.replaced > 0)
    }

    /// MHD's HTML fragments become plain sentences.
    @Test func mhdTextBecomesPlain() {
        #expect(
            DaemonAnswers.plainText("Your HTTP request has wrong value for <b>Content-Length</b> header.")
                == "Your HTTP request has wrong value for Content-Length header.")
        #expect(DaemonAnswers.plainText("a &quot;Host:&quot; header") == "a \"Host:\" header")
        #expect(DaemonAnswers.problem(status: 505, mhdText: "x").title == "HTTP Version Not Supported")
    }

    /// Clients that connect, send part of a request and reset make libmicrohttpd log a line each:
    /// they are counted (`http_daemon_messages_total{kind="client"}`) and written as one summary line
    /// (at the latest when the server stops), not one warning each.
    @Test func resettingClientsAreCountedNotLoggedOneByOne() throws {
        Log.startCapture()
        let before = Log.captured().count
        let started = ContinuousClock.now
        let resets = 200
        let metrics = HTTPMetrics()
        let server = try startTestServer(metrics: metrics)
        for i in 0..<resets {
            try connectSendAndReset(port: server.port, "GET /v1/users/u\(i)/profile HTTP/1.1\r\nHost: x\r\n")
        }
        // Each reset is counted once MHD has read it. A reset that arrives before MHD read the partial
        // head is silent (MHD logs nothing for a connection that sent it nothing); on a loaded machine
        // that is a few in a hundred, hence the margin.
        let expected = resets / 2
        let deadline = ContinuousClock.now + .seconds(20)
        while metrics.daemonMessages(.client) < expected && ContinuousClock.now < deadline { usleep(10_000) }
        #expect(metrics.daemonMessages(.client) >= expected)
        #expect(metrics.renderPrometheus().contains("http_daemon_messages_total{kind=\"client\"}"))
        server.stop(drainTimeout: .seconds(2))
        let lines = Log.captured().dropFirst(before)
        // Other suites' servers log through the same process-wide limit meanwhile: at most `burst`
        // warnings per interval; never a line per reset.
        let intervals = Int((ContinuousClock.now - started) / DaemonLog.interval) + 2
        let warnings = lines.filter { $0.contains(#""msg":"libmicrohttpd""#) }
        #expect(warnings.count <= intervals * DaemonLog.burst, "\(warnings.prefix(8))")
        #expect(lines.allSatisfy { !$0.contains("Socket has been disconnected") && !$0.contains("closed by remote side") })
        let summaries = lines.filter { $0.contains(#""msg":"libmicrohttpd messages""#) }
        let counted = summaries.compactMap { try? jsonObject(Array($0.utf8)) }.reduce(0) { $0 + (($1["client_caused"] as? Int) ?? 0) }
        #expect(counted >= metrics.daemonMessages(.client))
    }

    /// Which MHD lines count as a client's doing.
    @Test func clientCausedMessagesAreRecognised() {
        #expect(DaemonLog.kind(of: "Socket has been disconnected when reading request.") == .client)
        #expect(DaemonLog.kind(of: "Error processing request (HTTP response code is 505 ('x')). Closing connection.") == .client)
        #expect(DaemonLog.kind(of: "Server reached connection limit. Closing inbound connection.") == .other)
    }

    /// Connects, sends `text` and closes with a reset (SO_LINGER 0).
    func connectSendAndReset(port: Int, _ text: String) throws {
        let client = try RawConnection(port: port)
        try client.send(text)
        // Let the server read the partial head first, so that the reset comes mid-request.
        usleep(1_000)
        client.resetOnClose()
    }
}

import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MicroHTTP

final class Calls: Sendable {
    let count = Mutex(0)
}

/// Request framing two parsers could read differently (RFC 9112 §3.2, 5.1, 5.2, 6.3): each is a 400
/// with `Connection: close`, and nothing sent after it on the connection is served.
@Suite struct FramingTests {
    /// A router whose POST /v1/items counts calls and whose GET /v1/secret answers a marker that must
    /// never appear after a refused request.
    static func router(_ created: Calls) -> Router {
        let router = makeTestRouter()
        router.add(.POST, "/v1/items") { _ in
            created.count.withLock { $0 += 1 }
            return .empty(201)
        }
        router.add(.GET, "/v1/secret") { _ in .text(200, "SMUGGLED-ANSWER", contentType: "text/plain") }
        return router
    }

    static let smuggled = "GET /v1/secret HTTP/1.1\r\nHost: x\r\n\r\n"
    static let smuggledPost = "POST /v1/items HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"

    /// The malformed heads, each followed by a body that is itself a request.
    static let cases: [(String, String)] = [
        (
            "space before the colon of Content-Length",
            "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length : \(smuggled.utf8.count)\r\n\r\n\(smuggled)"
        ),
        (
            "space before the colon of Transfer-Encoding",
            "POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding : chunked\r\n\r\n0\r\n\r\n\(smuggled)"
        ),
        (
            "tab before the colon",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Thing\t: 1\r\n\r\n\(smuggled)"
        ),
        (
            "obs-folded Content-Length",
            "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length:\r\n \(smuggledPost.utf8.count)\r\n\r\n\(smuggledPost)"
        ),
        (
            "obs-folded other header",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: 1\r\n 2\r\n\r\n\(smuggled)"
        ),
        (
            "two Transfer-Encoding lines",
            "POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n\(smuggledPost)"
        ),
        (
            "two Host headers",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n\(smuggled)"
        ),
        (
            "two Authorization headers",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n\(smuggled)"
        ),
        (
            "NUL in a header value",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}b\r\n\r\n\(smuggled)"
        ),
        (
            "NUL at the end of the last header value",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u{0}\r\n\r\n\(smuggled)"
        ),
        (
            "NUL in a header value before another header",
            "GET /healthz HTTP/1.1\r\nX-A: a\u{0}b\r\nHost: x\r\n\r\n\(smuggled)"
        ),
        (
            "bare CR in a header value",
            "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n\(smuggled)"
        ),
        (
            "Content-Length with Transfer-Encoding",
            "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n\(smuggledPost)"
        ),
        (
            "two Content-Length headers",
            "POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: \(smuggledPost.utf8.count)\r\n\r\n\(smuggledPost)"
        ),
    ]

    /// Each malformed head is a 400 problem with `Connection: close`; the request after it is not
    /// executed and its answer never appears.
    @Test(arguments: cases.indices)
    func malformedFramingIs400AndClosed(_ index: Int) throws {
        let (name, text) = Self.cases[index]
        let created = Calls()
        try withServer(router: Self.router(created)) { (server, _) throws in
            let c = try RawConnection(port: server.port, timeoutSeconds: 5)
            try c.send(Array(text.utf8))
            let r = try c.readResponse()
            #expect(r.status == 400, "\(name)")
            #expect(r.header("Connection")?.lowercased() == "close", "\(name)")
            #expect(r.header("Content-Type") == "application/problem+json", "\(name)")
            let rest = c.readToEnd()
            #expect(!String(decoding: rest, as: UTF8.self).contains("HTTP/1.1"), "\(name): \(String(decoding: rest, as: UTF8.self))")
            #expect(created.count.withLock { $0 } == 0, "\(name)")
            #expect(try fetch(server.port, "GET", "/healthz").status == 200)
        }
    }

    /// Well-formed heads the checks must not refuse: bare-LF line ends, empty and padded values,
    /// tabs, a leading empty line, a body after the last header, and keep-alive afterwards.
    @Test func wellFormedHeadsPass() throws {
        try withServer { (server, _) throws in
            let c = try RawConnection(port: server.port, timeoutSeconds: 5)
            try c.send("GET /healthz HTTP/1.1\nHost: x\nX-C: r\n\n")
            #expect(try c.readResponse().status == 200)
            try c.send("\r\nGET /healthz HTTP/1.1\r\nHost: x\r\nX-E:\r\nX-F: \r\nX-G:  \t\r\nX-H:\t v \r\nUser-Agent: u\r\n\r\n")
            #expect(try c.readResponse().status == 200)
            try c.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nX-B: q  \r\nContent-Length: 5\r\n\r\nhello")
            let echo = try c.readResponse()
            #expect(echo.status == 200)
            #expect(echo.text == "hello")
            try c.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
            #expect(try c.readResponse().text == "hello")
            try c.send("GET /healthz HTTP/1.0\r\n\r\n")
            #expect(try c.readResponse().status == 200)
        }
    }

    /// An HTTP/1.1 request without Host is a 400 that closes.
    @Test func missingHostIs400() throws {
        try withServer { (server, _) throws in
            let c = try RawConnection(port: server.port, timeoutSeconds: 5)
            try c.send("GET /healthz HTTP/1.1\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 400)
            #expect(r.header("Connection")?.lowercased() == "close")
        }
    }
}

/// Query parameters beyond the cap, and oversize heads: every request gets an answer at once.
@Suite struct RequestLimitTests {
    /// Sends `text` and returns the first response and how long it took; fails on a hang.
    func answer(_ port: Int, _ text: String) throws -> (RawResponse, Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        let c = try RawConnection(port: port, timeoutSeconds: 5)
        try c.send(Array(text.utf8))
        let r = try c.readResponse()
        return (r, clock.now - start)
    }

    /// 230 parameters (which exhausted MHD's pool before) are a 400 naming the limit, answered at once
    /// on a connection that stays usable.
    @Test func manyQueryParametersAre400NamingTheLimit() throws {
        try withServer { (server, _) throws in
            let query = (0..<230).map { "p\($0)=1" }.joined(separator: "&")
            let c = try RawConnection(port: server.port, timeoutSeconds: 5)
            try c.send("GET /v1/query?\(query) HTTP/1.1\r\nHost: x\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 400)
            let o = try jsonObject(r.body)
            let cap = HTTPServerConfiguration().maxQueryParameters
            #expect((o["detail"] as? String)?.contains("at most \(cap)") == true)
            #expect((o["detail"] as? String)?.contains("230") == true)
            #expect(try fetch(server.port, "GET", "/healthz").status == 200)
        }
    }

    /// Exactly the cap is served; one more is refused.
    @Test func theCapIsInclusive() throws {
        try withServer { (server, _) throws in
            let at = (0..<HTTPServerConfiguration().maxQueryParameters).map { "p\($0)=1" }.joined(separator: "&")
            #expect(try fetch(server.port, "GET", "/v1/query?\(at)").status == 200)
            #expect(try fetch(server.port, "GET", "/v1/query?\(at)&z=1").status == 400)
        }
    }

    /// 1 200 parameters (about 8.5 KB, the request line near the 10 KiB pool) are still answered 400:
    /// MHD stores no argument, and the head leaves the 1 KiB the answer needs.
    @Test func twelveHundredParametersAreAnswered() throws {
        try withServer { (server, _) throws in
            let query = (0..<1200).map { "p\($0)=v" }.joined(separator: "&")
            let c = try RawConnection(port: server.port, timeoutSeconds: 5)
            try c.send("GET /v1/query?\(query) HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer 0123456789abcdef0123456789abcdef\r\n\r\n")
            #expect(try c.readResponse().status == 400)
        }
    }

    /// 5000 parameters (a request line over the header limit) and a huge header are answered at
    /// once, never left waiting.
    @Test func oversizeRequestLinesAndHeadersAreAnswered() throws {
        try withServer { (server, _) throws in
            let query = (0..<5000).map { "p\($0)=1" }.joined(separator: "&")
            let (long, t1) = try answer(server.port, "GET /v1/query?\(query) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect([400, 414, 431].contains(long.status))
            #expect(t1 < .seconds(2))
            let (huge, t2) = try answer(server.port, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "y", count: 40_000))\r\n\r\n")
            #expect(huge.status == 431)
            // libmicrohttpd's own refusal, made problem+json (DaemonAnswers).
            #expect(huge.header("Content-Type") == "application/problem+json")
            #expect(t2 < .seconds(2))
            let dense = (0..<3000).map { _ in "a" }.joined(separator: "&")
            let (many, t3) = try answer(server.port, "GET /v1/query?\(dense) HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(many.status == 400)
            #expect(t3 < .seconds(2))
        }
    }

    /// A 304 carries no `Content-Length: 0`: its Content-Length is the 200's.
    @Test func notModifiedCarriesTheRepresentationLength() throws {
        let router = makeTestRouter()
        router.add(.GET, "/v1/tagged") { req in
            let body = Array(#"{"tagged":true}"#.utf8)
            if req.header("If-None-Match") == "\"t\"" { return .notModified(headers: [("ETag", "\"t\"")], representation: body) }
            return .json(200, body, headers: [("ETag", "\"t\"")])
        }
        try withServer(router: router) { (server, _) throws in
            let c = try RawConnection(port: server.port, timeoutSeconds: 5)
            let full = try c.request("GET", "/v1/tagged")
            let not = try c.request("GET", "/v1/tagged", headers: [("If-None-Match", "\"t\"")])
            #expect(not.status == 304)
            #expect(not.header("Content-Length") == full.header("Content-Length"))
            #expect(not.header("Content-Length") != "0")
            #expect(not.body.isEmpty)
            // No body bytes followed: the next response parses on the same connection.
            #expect(try c.request("GET", "/healthz").status == 200)
        }
    }
}

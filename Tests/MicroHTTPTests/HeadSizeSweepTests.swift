import Foundation
import TestSupport
import Testing

@testable import MicroHTTP

/// Every request head gets an answer (issue 19): heads swept in small steps across the edge of the
/// connection's memory pool (libmicrohttpd 0.9.75 keeps the request line and header fields in it, and
/// builds the answer's header section in what is left), in every shape, each answered within a second
/// on a connection the client keeps open.
@Suite struct HeadSizeSweepTests {
    static let token = "eyJhbGciOiJIUzI1NiJ9." + String(repeating: "p", count: 180) + "." + String(repeating: "s", count: 43)

    /// (name, build(filler) -> (prefix, request line target, extra header lines)).
    static let shapes: [(String, @Sendable (Int) -> (String, String, [String]))] = [
        ("long path", { n in ("", "/v1/users/u\(String(repeating: "x", count: n))/profile", []) }),
        ("long query", { n in ("", "/v1/query?a=\(String(repeating: "i", count: n))", []) }),
        (
            "many parameters",
            { n in ("", "/v1/query?" + (0..<max(1, n / 6)).map { "p\($0 % 10000)=v" }.joined(separator: "&"), []) }
        ),
        ("many header fields", { n in ("", "/healthz", (0..<max(1, n / 10)).map { "X-H\($0 % 10000): v" }) }),
        ("long header value", { n in ("", "/healthz", ["X-Big: " + String(repeating: "a", count: n)]) }),
        ("leading empty lines", { n in (String(repeating: "\r\n", count: n / 2), "/v1/query?a=1", []) }),
    ]

    /// The request text: a GET, or a POST to the echo route with a body.
    static func request(_ shape: @Sendable (Int) -> (String, String, [String]), filler: Int, auth: Bool, body: Bool) -> String {
        let (prefix, get, lines) = shape(filler)
        // The POST goes to the echo route (or, for the long path, to a route without POST: a 405).
        let target = body ? get.replacingOccurrences(of: "/v1/query", with: "/v1/echo").replacingOccurrences(of: "/healthz", with: "/v1/echo") : get
        var head = prefix + "\(body ? "POST" : "GET") \(target) HTTP/1.1\r\nHost: x\r\n"
        if auth { head += "Authorization: Bearer \(token)\r\n" }
        if body { head += "Content-Type: application/json\r\nContent-Length: 11\r\n" }
        for line in lines { head += line + "\r\n" }
        return head + "\r\n" + (body ? #"{"count":1}"# : "")
    }

    /// The filler that makes the head (everything before the body) `size` bytes, near enough.
    static func filler(for size: Int, _ shape: @Sendable (Int) -> (String, String, [String]), auth: Bool, body: Bool) -> Int {
        let base = request(shape, filler: 0, auth: auth, body: body).utf8.count - (body ? 11 : 0)
        return max(0, size - base)
    }

    @Test(arguments: [false, true])
    func everyHeadAcrossThePoolEdgeIsAnswered(withBody: Bool) throws {
        let pool = HTTPServerConfiguration().headerMemoryLimit
        try withServer { (server, _) throws in
            var unanswered: [String] = []
            var statuses: [Int: Int] = [:]
            for (name, shape) in Self.shapes {
                for auth in [false, true] {
                    for size in stride(from: pool - 1400, through: pool + 400, by: 24) {
                        let text = Self.request(shape, filler: Self.filler(for: size, shape, auth: auth, body: withBody), auth: auth, body: withBody)
                        let clock = ContinuousClock()
                        let start = clock.now
                        let c = try RawConnection(port: server.port, timeoutSeconds: 1)
                        try? c.send(Array(text.utf8))  // an early 414/431 may close before everything is sent
                        let status = (try? c.readHead())?.status
                        let took = clock.now - start
                        if let status, took < .seconds(1), status != 500 || name == "leading empty lines" {
                            statuses[status, default: 0] += 1
                        } else {
                            unanswered.append("\(name)\(auth ? " + auth" : "") \(size) B: \(status.map(String.init) ?? "no answer") after \(took)")
                        }
                    }
                }
            }
            #expect(unanswered.isEmpty, "\(unanswered.count) heads: \(unanswered.prefix(20).joined(separator: "; "))")
            // Both sides of the edge were reached: served heads and refused ones.
            #expect(statuses[200, default: 0] > 0)
            #expect(statuses[431, default: 0] > 0)
            #expect(try fetch(server.port, "GET", "/healthz").status == 200)
        }
    }

    /// Empty lines before the request line fill the connection's memory without counting in the
    /// head: at some sizes libmicrohttpd, run from sheetd's own loop, has no room left to read the body
    /// and would wait for the idle timeout. Every size near the edge, byte by byte, gets an answer
    /// within a second (sheetd's 431 for those, `StalledBodies`), on a connection the client keeps open.
    @Test func leadingEmptyLinesBeforeABodyAreAnsweredAtEverySize() throws {
        let pool = HTTPServerConfiguration().headerMemoryLimit
        let router = makeTestRouter()
        router.add(.PUT, "/v1/users/{userId}/containers/{containerId}/count") { _ in .empty(204) }
        try withServer({ $0.accessLog = true }, router: router) { (server, _) throws in
            var unanswered: [String] = []
            for size in stride(from: pool - 400, through: pool + 100, by: 1) {
                let head =
                    "PUT /v1/users/sweep-u/containers/c1/count?platform=ios HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    + "Content-Type: application/json\r\nContent-Length: 11\r\n\r\n"
                let empty = max(0, size - head.utf8.count)
                let text = String(repeating: "\r\n", count: empty / 2) + String(repeating: "\n", count: empty % 2) + head + #"{"count":1}"#
                let start = ContinuousClock.now
                let c = try RawConnection(port: server.port, timeoutSeconds: 1)
                try? c.send(Array(text.utf8))
                let status = (try? c.readHead())?.status
                if status == nil || ContinuousClock.now - start >= .seconds(1) { unanswered.append("\(size) B") }
            }
            #expect(unanswered.isEmpty, "\(unanswered.count) heads unanswered: \(unanswered.prefix(20).joined(separator: ", "))")
            #expect(try fetch(server.port, "GET", "/healthz").status == 200)
        }
    }

    /// A head that leaves less than the answer's reserve is refused by sheetd itself, as problem+json.
    @Test func aHeadOverTheBudgetIsOurOwn431() throws {
        try withServer { (server, _) throws in
            let c = try RawConnection(port: server.port, timeoutSeconds: 2)
            let pool = HTTPServerConfiguration().headerMemoryLimit
            try c.send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "a", count: pool - 1000))\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 431)
            #expect(r.header("Content-Type") == "application/problem+json")
            #expect(r.header("Connection")?.lowercased() == "close")
            let o = try jsonObject(r.body)
            #expect(o["type"] as? String == "urn:sheetd:problem:header-too-large")
            #expect((o["detail"] as? String)?.contains("\(pool)") == true)
        }
    }

    /// A query is parsed by sheetd from its own copy: values, duplicates, names without `=`, empty
    /// pieces and escapes come out as libmicrohttpd would have split them.
    @Test func theQueryIsParsedFromTheCopy() throws {
        try withServer { (server, _) throws in
            let r = try fetch(server.port, "GET", "/v1/query?a=1&b=x+y%21&&z&a=2&")
            #expect(String(decoding: r.body, as: UTF8.self) == "a=1|b=x y!|z=|names=a,b,,z,a")
            // Empty lines before the request line no longer cost the query anything.
            let c = try RawConnection(port: server.port, timeoutSeconds: 2)
            try c.send(String(repeating: "\r\n", count: 100) + "GET /v1/query?a=7 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(String(decoding: try c.readResponse().body, as: UTF8.self).hasPrefix("a=7|"))
        }
    }
}

/// The query splitter mirrors libmicrohttpd's `MHD_parse_arguments_`.
@Suite struct QuerySplittingTests {
    static func split(_ s: String) -> [String] {
        var out: [String] = []
        Array(s.utf8).withUnsafeBufferPointer { q in
            forEachRawQueryArgument(q) { name, value in
                out.append(String(decoding: name, as: UTF8.self) + (value.map { "=" + String(decoding: $0, as: UTF8.self) } ?? ""))
            }
        }
        return out
    }

    @Test func splitsLikeLibmicrohttpd() {
        #expect(Self.split("") == [])
        #expect(Self.split("a") == ["a"])
        #expect(Self.split("a=") == ["a="])
        #expect(Self.split("a=1&b=2") == ["a=1", "b=2"])
        #expect(Self.split("a=1&") == ["a=1"])
        #expect(Self.split("&") == [""])
        #expect(Self.split("a&&b") == ["a", "", "b"])
        #expect(Self.split("a=b=c&d") == ["a=b=c", "d"])
        #expect(Self.split("a&b=1") == ["a", "b=1"])
        #expect(Self.split("=x") == ["=x"])
        #expect(Array("p=1&q&r=&&".utf8).withUnsafeBufferPointer { countQueryArguments($0) } == 4)
    }
}

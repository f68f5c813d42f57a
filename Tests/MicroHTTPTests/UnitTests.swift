import Foundation
import JSONKit
@_spi(Testing) import Observability
import TestSupport
import Testing

@testable import MicroHTTP

/// Socket-free tests of the router, decoding, problem bodies, logging and metrics rendering.
@Suite struct RouterTests {
    /// Routes are enumerable in registration order (a test elsewhere compares them with openapi.yaml).
    @Test func routesAreEnumerable() {
        let router = makeTestRouter()
        let routes = router.routes
        #expect(routes.count == 14)
        #expect(routes[0].method == .GET && routes[0].template == "/healthz")
        #expect(routes.contains { $0.method == .DELETE && $0.template == "/v1/users/{userId}/containers/{containerId}/count" })
    }

    /// Generated request ids are sane, distinct, and short enough (≤ 15 bytes) to be small strings.
    @Test func generatedRequestIdsAreShortAndDistinct() {
        let ids = (0..<2000).map { _ in RequestID.next() }
        #expect(Set(ids).count == ids.count)
        #expect(ids.allSatisfy { RequestID.isSane($0) && $0.utf8.count <= 15 })
        let prefixes = Set(ids.map { $0.split(separator: "-")[0] })
        #expect(prefixes.count == 1 && prefixes.first!.count == 6)
    }

    /// Templates parse into literal and parameter segments.
    @Test func templatesParse() throws {
        #expect(try Router.parse("/") == [.literal([])])
        #expect(try Router.parse("/v1/users/{userId}") == [.literal(Array("v1".utf8)), .literal(Array("users".utf8)), .parameter("userId")])
        for bad in ["", "v1", "/v1/", "/v1//x", "/{}", "/{a}/{a}", "/{a-b}", "/a b"] {
            #expect(throws: Router.TemplateError.self, "\(bad)") { try Router.parse(bad) }
        }
    }

    /// The compiled trie prefers literals and backtracks to parameters.
    @Test func trieMatchesWithBacktracking() {
        let router = makeTestRouter()
        let table = RouteTable(entries: router.freeze(), metrics: HTTPMetrics())
        func match(_ path: String) -> (String?, [String]) {
            var bytes = Array(path.utf8)
            return bytes.withUnsafeMutableBufferPointer { b in
                var caps: [Range<Int>] = []
                let node = table.match(UnsafeBufferPointer(b), captures: &caps)
                return (node?.template, caps.map { String(decoding: b[$0], as: UTF8.self) })
            }
        }
        #expect(match("/v1/users/me/profile").0 == "/v1/users/me/profile")
        #expect(match("/v1/users/me/containers/c/count").0 == "/v1/users/{userId}/containers/{containerId}/count")
        #expect(match("/v1/users/me/containers/c/count").1 == ["me", "c"])
        #expect(match("/v1/users/x/profile").1 == ["x"])
        #expect(match("/").0 == "/")
        #expect(match("/v1/users/").0 == nil)
        #expect(match("/v1/users//profile").0 == nil)
        #expect(match("/healthz/x").0 == nil)
    }

    /// Path validation catches bad escapes and dot segments, raw or encoded.
    @Test func pathValidation() {
        func check(_ s: String) -> PathProblem? {
            Array(s.utf8).withUnsafeBufferPointer { validatePath($0) }
        }
        #expect(check("/a/b%20c") == nil)
        #expect(check("/a/...") == nil)
        #expect(check("/a/%") == .invalidEscape)
        #expect(check("/a/%4") == .invalidEscape)
        #expect(check("/a/%4g") == .invalidEscape)
        #expect(check("/a/..") == .dotSegment)
        #expect(check("/./a") == .dotSegment)
        #expect(check("/a/%2E%2e/b") == .dotSegment)
        #expect(check("/a/.%2e") == .dotSegment)
        #expect(check("a/b") == .notAbsolute)
        #expect(check("*") == .notAbsolute)
    }

    /// Segment decoding refuses "/" and NUL and invalid UTF-8; "+" stays literal in paths.
    @Test func segmentDecoding() {
        func dec(_ s: String) -> String? {
            Array(s.utf8).withUnsafeBufferPointer { decodePathSegment($0, 0..<$0.count) }
        }
        #expect(dec("a%20b") == "a b")
        #expect(dec("a+b") == "a+b")
        #expect(dec("%C3%A9") == "é")
        #expect(dec("a%2Fb") == nil)
        #expect(dec("a%2fb") == nil)
        #expect(dec("%00") == nil)
        #expect(dec("%FF") == nil)
    }

    /// Query components: "+" is a space, escapes decode, malformed escapes stay literal.
    @Test func queryDecoding() {
        func decodeQueryComponent(_ s: String) -> String {
            Array(s.utf8).withUnsafeBufferPointer { MicroHTTP.decodeQueryComponent($0) }
        }
        #expect(decodeQueryComponent("a+b%21") == "a b!")
        #expect(decodeQueryComponent("100%") == "100%")
        #expect(decodeQueryComponent("%zz") == "%zz")
        #expect(decodeQueryComponent("plain") == "plain")
    }

    /// Method tokens parse without allocation; unknown ones are nil.
    @Test func methodParsing() {
        for m in HTTPMethod.allCases { #expect(HTTPMethod.parse(m.rawValue) == m) }
        for bad in ["get", "GETX", "PROPFIND", "", "P"] { #expect(HTTPMethod.parse(bad) == nil) }
    }
}

@Suite struct ProblemTests {
    /// The body has type, title, status, detail in that order, then invalid-params and extensions.
    @Test func bodyShape() throws {
        var p = Problem(
            status: 400, slug: "bad-request", title: "Bad Request", detail: "Line\n\"quoted\"",
            invalidParams: [(name: "a", reason: "b")])
        p.extensionMembers = [("retryable", false), ("limit", 3)]
        let text = String(decoding: p.body, as: UTF8.self)
        #expect(
            text
                == #"{"type":"urn:sheetd:problem:bad-request","title":"Bad Request","status":400,"detail":"Line\n\"quoted\"","invalid-params":[{"name":"a","reason":"b"}],"retryable":false,"limit":3}"#
        )
        let o = try jsonObject(p.body)
        #expect(o["detail"] as? String == "Line\n\"quoted\"")
        #expect(p.response.header("Content-Type") == "application/problem+json")
        #expect(p.response.status == 400)
    }

    /// The convenience constructors use the documented slugs.
    @Test func conveniences() {
        #expect(Problem.notFound("x").type == "urn:sheetd:problem:not-found")
        #expect(Problem.methodNotAllowed("x", allow: "GET").response.header("Allow") == "GET")
        #expect(Problem.payloadTooLarge(limit: 5).slug == "payload-too-large")
        #expect(Problem.internalError().status == 500)
        #expect(Problem.unavailable("draining", retryAfterSeconds: 5).response.header("Retry-After") == "5")
        #expect(Problem.badRequest("x").slug == "bad-request")
    }

    /// Response helpers set the content type.
    @Test func responseHelpers() {
        #expect(HTTPResponse.json(201, [1]).header("content-type") == "application/json")
        #expect(HTTPResponse.text(200, "hi", contentType: "text/plain").body == Array("hi".utf8))
        #expect(HTTPResponse.empty(204).body.isEmpty)
        var r = HTTPResponse(status: 200)
        r.body = [1, 2]
        #expect(r.body == [1, 2])
    }
}

@Suite struct LogAndMetricsTests {
    /// Problem bodies and log lines escape quotes, backslashes and control characters (one writer:
    /// JSONKit's), and a log line is one JSON object.
    @Test func jsonEscaping() throws {
        let p = Problem.badRequest("a\"b\\c\u{1}\t")
        #expect(String(decoding: p.body, as: UTF8.self).contains(#""detail":"a\"b\\c\u0001\t""#))
        var w = JSONWriter()
        w.object { o in
            Log.begin(&o, level: .warn, msg: "m\"")
            o.key("bytes")
            Array("x\ny".utf8).withUnsafeBufferPointer { o.string(utf8: $0.span) }
        }
        let line = String(decoding: w.bytes, as: UTF8.self)
        #expect(line.hasPrefix(#"{"time":""#))
        #expect(line.hasSuffix(#","level":"warn","msg":"m\"","bytes":"x\ny"}"#))
        #expect(try JSONSerialization.jsonObject(with: Data(w.bytes)) is [String: Any])
    }

    /// LogValue literals and level ordering.
    @Test func logValuesAndLevels() {
        let fields: [(String, LogValue)] = [("s", "x"), ("i", 1), ("d", 1.5), ("b", true), ("interp", "v\(2)")]
        #expect(fields.count == 5)
        #expect(LogLevel.debug < .info && LogLevel.info < .warn && LogLevel.warn < .error)
        Log.configure(minimum: .info)
        #expect(!Log.isEnabled(.debug))
        #expect(Log.isEnabled(.error))
    }

    /// A log line is one JSON object with time, level, msg and the fields in order.
    @Test func logLineShape() throws {
        Log.startCapture()
        Log.write(.warn, "unit-test-line", [("port", 8080), ("host", "127.0.0.1"), ("ok", true)])
        let line = try #require(Log.captured().first { $0.contains("unit-test-line") })
        #expect(line.hasPrefix(#"{"time":""#))
        #expect(line.hasSuffix(#","level":"warn","msg":"unit-test-line","port":8080,"host":"127.0.0.1","ok":true}"#))
        let o = try jsonObject(Array(line.utf8))
        let time = try #require(o["time"] as? String)
        #expect(time.count == 24 && time.hasSuffix("Z"))
    }

    /// Seconds render without exponents.
    @Test func secondsFormatting() {
        #expect(PrometheusText.seconds(500) == "0.0005")
        #expect(PrometheusText.seconds(1_000_000) == "1")
        #expect(PrometheusText.seconds(2_500_000) == "2.5")
        #expect(PrometheusText.seconds(12_345_678) == "12.345678")
    }

    /// The histogram is cumulative and statuses are counted per route.
    @Test func metricsRendering() {
        let m = HTTPMetrics()
        m.record(route: "/a", status: 200, durationMicros: 100)
        m.record(route: "/a", status: 200, durationMicros: 3_000)
        m.record(route: "/a", status: 503, durationMicros: 20_000_000)
        let t = m.renderPrometheus()
        #expect(t.contains(#"http_requests_total{route="/a",status="200"} 2"#))
        #expect(t.contains(#"http_requests_total{route="/a",status="503"} 1"#))
        #expect(t.contains(#"http_request_duration_seconds_bucket{route="/a",le="0.0005"} 1"#))
        #expect(t.contains(#"http_request_duration_seconds_bucket{route="/a",le="0.005"} 2"#))
        #expect(t.contains(#"http_request_duration_seconds_bucket{route="/a",le="10"} 2"#))
        #expect(t.contains(#"http_request_duration_seconds_bucket{route="/a",le="+Inf"} 3"#))
        #expect(t.contains(#"http_request_duration_seconds_sum{route="/a"} 20.0031"#))
        #expect(t.contains("http_requests_in_flight 0"))
        #expect(!t.contains(#"route="unmatched",le"#))
    }
}

@Suite struct SocketFreeDispatchTests {
    /// The fake-connection driver runs the server's lifecycle: parameters, 404, 405 + Allow, HEAD,
    /// problems, 500, query, headers, body, the client's request id.
    @Test func fakeConnectionRoutesLikeTheServer() throws {
        let driver = FakeConnectionDriver(router: makeTestRouter())
        let ok = driver.respond(.GET, "/v1/users/a%20b/containers/c/count")
        #expect(ok.status == 200)
        #expect(try jsonObject(ok.body)["user"] as? String == "a b")
        #expect(ok.header("X-Request-Id") != nil)
        #expect(driver.respond(.GET, "/nope").status == 404)
        let wrong = driver.respond(.PUT, "/healthz")
        #expect(wrong.status == 405)
        #expect(wrong.header("Allow") == "GET, HEAD")
        let head = driver.respond(.HEAD, "/healthz")
        #expect(head.status == 200 && head.body.isEmpty)
        #expect(driver.respond(.GET, "/v1/boom").status == 500)
        #expect(driver.respond(.GET, "/v1/invalid").status == 422)
        #expect(driver.respond(.GET, "/v1/users/a%2Fb/profile").status == 400)
        #expect(driver.respond(.GET, "/v1/query?a=x+y%21&b&c=1&a=2").text == "a=x y!|b=|z=<nil>|names=a,b,c,a")
        #expect(driver.respond(.GET, "/v1/headers", headers: [("x-CUSTOM-thing", "h")]).text == "h|h")
        #expect(driver.respond(.POST, "/v1/echo", body: [1, 2, 3]).body == [1, 2, 3])
        #expect(driver.respond(.GET, "/healthz", headers: [("X-Request-Id", "given-1")]).header("X-Request-Id") == "given-1")
        #expect(driver.respond(.GET, "/healthz", headers: [("X-Request-Id", "bad id")]).header("X-Request-Id") != "bad id")
    }

    /// The limits of the lifecycle hold over the fake connection too: an announced or sent body over
    /// the cap is a 413, too many query arguments a 400, both before any handler runs.
    @Test func fakeConnectionAppliesTheLifecycleLimits() {
        var configuration = HTTPServerConfiguration()
        configuration.maxBodyBytes = 8
        configuration.maxQueryParameters = 2
        let driver = FakeConnectionDriver(router: makeTestRouter(), configuration: configuration)
        #expect(driver.respond(.POST, "/v1/echo", body: Array(repeating: 1, count: 9)).status == 413)
        #expect(driver.respond(.POST, "/v1/echo", headers: [("Content-Length", "100")], body: [1]).status == 413)
        let announced = driver.respond(.POST, "/v1/echo", headers: [("Content-Length", "100")], body: [1])
        #expect(announced.header("Connection") == "close")
        #expect(driver.respond(.GET, "/v1/query?a=1&b=2&c=3").status == 400)
        #expect(driver.respond(.POST, "/v1/echo", body: Array(repeating: 1, count: 8)).status == 200)
    }
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}

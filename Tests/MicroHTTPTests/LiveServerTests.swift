import Concurrency
import Foundation
@_spi(Testing) import Observability
import Synchronization
import TestSupport
import Testing

@testable import MicroHTTP

/// The server over real HTTP on 127.0.0.1, port 0.
@Suite struct LiveServerTests {
    /// Path parameters are matched and percent-decoded; the handler sees the route template.
    @Test func routesWithPathParameters() throws {
        try withServer { (server, _) throws in
            #expect(server.port > 0)
            let r = try fetch(server.port, "GET", "/v1/users/u%201/containers/c-9/count")
            #expect(r.status == 200)
            #expect(r.header("Content-Type") == "application/json")
            let o = try jsonObject(r.body)
            #expect(o["user"] as? String == "u 1")
            #expect(o["container"] as? String == "c-9")
            #expect(o["template"] as? String == "/v1/users/{userId}/containers/{containerId}/count")
            #expect(try fetch(server.port, "GET", "/").text == "root")
            #expect(try fetch(server.port, "GET", "/healthz").text == "ok\n")
        }
    }

    /// A literal segment wins over a parameter, with backtracking when the literal branch dead-ends.
    @Test func literalSegmentsWinOverParameters() throws {
        try withServer { (server, _) throws in
            #expect(try fetch(server.port, "GET", "/v1/users/me/profile").text == #"{"me":true}"#)
            #expect(try fetch(server.port, "GET", "/v1/users/you/profile").text == #"{"user":"you"}"#)
            #expect(try jsonObject(fetch(server.port, "GET", "/v1/users/me/containers/x/count").body)["user"] as? String == "me")
        }
    }

    /// Unknown paths get a 404 problem with every RFC 9457 member.
    @Test func unknownPathIs404Problem() throws {
        try withServer { (server, _) throws in
            for path in ["/nope", "/v1/users", "/v1/users/a/containers/b/count/extra", "/healthz/", "//healthz", "/v1/users//profile"] {
                let r = try fetch(server.port, "GET", path)
                #expect(r.status == 404, "\(path)")
                #expect(r.header("Content-Type") == "application/problem+json")
                let o = try jsonObject(r.body)
                #expect(o["type"] as? String == "urn:sheetd:problem:not-found")
                #expect(o["title"] as? String == "Not Found")
                #expect(o["status"] as? Int == 404)
                #expect((o["detail"] as? String)?.isEmpty == false)
                #expect(r.header("X-Request-Id") != nil)
            }
        }
    }

    /// A known path with a wrong method gets 405 and an Allow header (HEAD implied by GET).
    @Test func wrongMethodIs405WithAllow() throws {
        try withServer { (server, _) throws in
            let r = try fetch(server.port, "POST", "/v1/users/1/containers/2/count", body: [])
            #expect(r.status == 405)
            #expect(r.header("Allow") == "GET, HEAD, DELETE")
            #expect(try jsonObject(r.body)["type"] as? String == "urn:sheetd:problem:method-not-allowed")
            let r2 = try fetch(server.port, "PROPFIND", "/healthz")
            #expect(r2.status == 405)
            #expect(r2.header("Allow") == "GET, HEAD")
            let r3 = try fetch(server.port, "GET", "/v1/echo")
            #expect(r3.header("Allow") == "POST")
            #expect(try fetch(server.port, "DELETE", "/v1/users/1/containers/2/count").status == 204)
        }
    }

    /// HEAD is answered for GET routes: same status and headers including Content-Length, no body.
    @Test func headIsAnsweredForGetRoutes() throws {
        try withServer { (server, _) throws in
            let c = try RawConnection(port: server.port)
            let get = try c.request("GET", "/v1/users/a/containers/b/count")
            let head = try c.request("HEAD", "/v1/users/a/containers/b/count")
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == String(get.body.count))
            #expect(head.header("Content-Type") == "application/json")
            #expect(head.body.isEmpty)
            // Nothing stray was sent after the HEAD headers: the next response parses cleanly.
            let next = try c.request("GET", "/healthz")
            #expect(next.text == "ok\n")
        }
    }

    /// An announced Content-Length over the cap is answered 413 at once, and the connection closes.
    @Test func announcedOversizeBodyIs413() throws {
        try withServer({ $0.maxBodyBytes = 1000 }) { (server, metrics) throws in
            let c = try RawConnection(port: server.port)
            try c.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 413)
            #expect(r.header("Content-Type") == "application/problem+json")
            let o = try jsonObject(r.body)
            #expect(o["type"] as? String == "urn:sheetd:problem:payload-too-large")
            #expect(o["status"] as? Int == 413)
            #expect(c.isClosedByServer())
            // Exactly at the cap is fine.
            let ok = try fetch(server.port, "POST", "/v1/echo", body: [UInt8](repeating: 7, count: 1000))
            #expect(ok.status == 200)
            #expect(ok.body.count == 1000)
            #expect(metrics.renderPrometheus().contains(#"http_requests_total{route="/v1/echo",status="413"} 1"#))
        }
    }

    /// A chunked body is counted as it arrives; over the cap it is discarded and answered 413.
    @Test func chunkedOversizeBodyIs413() throws {
        try withServer({ $0.maxBodyBytes = 65536 }) { (server, _) throws in
            let c = try RawConnection(port: server.port)
            try c.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            let chunk = [UInt8](repeating: 0x41, count: 16384)
            for _ in 0..<5 {
                try c.send(Array("4000\r\n".utf8) + chunk + Array("\r\n".utf8))
            }
            try c.send("0\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 413)
            #expect(try jsonObject(r.body)["type"] as? String == "urn:sheetd:problem:payload-too-large")
        }
    }

    /// Chunked bodies under the cap are reassembled across callback calls.
    @Test func chunkedBodyIsAccumulated() throws {
        try withServer { (server, _) throws in
            let c = try RawConnection(port: server.port)
            try c.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
            usleep(20_000)
            try c.send("1\r\n \r\n5\r\nworld\r\n0\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 200)
            #expect(r.text == "hello world")
            #expect(r.header("X-Body-Length") == "11")
            // The connection stays usable.
            #expect(try c.request("GET", "/healthz").status == 200)
        }
    }

    /// A chunked body far beyond the cap is not read forever: the connection is dropped.
    @Test func endlessChunkedBodyIsCutOff() throws {
        try withServer({ $0.maxBodyBytes = 1000 }) { (server, _) throws in
            let c = try RawConnection(port: server.port)
            try c.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
            let chunk = Array("10000\r\n".utf8) + [UInt8](repeating: 0x42, count: 65536) + Array("\r\n".utf8)
            var sendFailed = false
            for _ in 0..<64 {  // 4 MiB, well past the 1 MiB discard limit
                do { try c.send(chunk) } catch { sendFailed = true; break }
            }
            #expect(sendFailed || c.isClosedByServer())
            #expect(try fetch(server.port, "GET", "/healthz").status == 200)
        }
    }

    /// Idle keep-alive connections are closed after the idle timeout.
    @Test func idleConnectionsTimeOut() throws {
        try withServer({ $0.idleTimeoutSeconds = 1 }) { (server, _) throws in
            let c = try RawConnection(port: server.port)
            #expect(try c.request("GET", "/healthz").status == 200)
            usleep(2_500_000)
            #expect(c.isClosedByServer())
        }
    }

    /// Start-up raises the soft open-file limit to the hard limit.
    @Test func openFileLimitIsRaised() throws {
        try withServer { (_, _) throws in
            var rl = rlimit()
            getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &rl)
            #expect(rl.rlim_cur == rl.rlim_max || rl.rlim_cur >= 1_048_576)
        }
    }

    /// A large body arriving in many reads is accumulated exactly.
    @Test func largeBodyAccumulatesAcrossCalls() throws {
        try withServer { (server, _) throws in
            let body = (0..<60000).map { UInt8($0 % 251) }
            let r = try fetch(server.port, "POST", "/v1/echo", body: body)
            #expect(r.status == 200)
            #expect(r.body == body)
        }
    }

    /// Headers larger than the connection memory pool get 431 (from MHD itself).
    @Test func oversizeHeadersAre431() throws {
        try withServer({ $0.headerMemoryLimit = 8192 }) { (server, _) throws in
            let big = String(repeating: "a", count: 12000)
            let r = try fetch(server.port, "GET", "/healthz", headers: [("X-Big", big)])
            #expect(r.status == 431)
            #expect(try fetch(server.port, "GET", "/healthz", headers: [("X-Small", "a")]).status == 200)
        }
    }

    /// Two requests on one TCP connection: the response is queued on the second callback call, so MHD
    /// keeps the connection alive.
    @Test func keepAliveReusesTheConnection() throws {
        try withServer { (server, _) throws in
            let c = try RawConnection(port: server.port)
            let first = try c.request("GET", "/healthz")
            #expect(first.status == 200)
            #expect(first.header("Connection")?.lowercased() != "close")
            let second = try c.request("POST", "/v1/echo", body: Array("abc".utf8))
            #expect(second.text == "abc")
            let third = try c.request("GET", "/nope")
            #expect(third.status == 404)
            #expect(third.header("Connection")?.lowercased() != "close")
            #expect(try c.request("GET", "/healthz").status == 200)
        }
    }

    /// A sane X-Request-Id is echoed; a missing or unsafe one is replaced by a generated id.
    @Test func requestIdIsEchoedOrGenerated() throws {
        try withServer { (server, _) throws in
            let echoed = try fetch(server.port, "GET", "/healthz", headers: [("X-Request-Id", "abc.DEF_1:2-3")])
            #expect(echoed.header("X-Request-Id") == "abc.DEF_1:2-3")
            let a = try fetch(server.port, "GET", "/healthz").header("X-Request-Id")
            let b = try fetch(server.port, "GET", "/nope").header("X-Request-Id")
            #expect(a != nil && b != nil && a != b)
            #expect(RequestID.isSane(a ?? ""))
            for bad in ["has space", String(repeating: "x", count: 129), "semi;colon", "\"quoted\""] {
                let r = try fetch(server.port, "GET", "/healthz", headers: [("X-Request-Id", bad)])
                #expect(r.header("X-Request-Id") != bad)
                #expect(RequestID.isSane(r.header("X-Request-Id") ?? ""))
            }
            #expect(
                try fetch(server.port, "GET", "/healthz", headers: [("X-Request-Id", String(repeating: "y", count: 128))])
                    .header("X-Request-Id") == String(repeating: "y", count: 128))
        }
    }

    /// A thrown Problem renders itself; invalid-params and extra headers included.
    @Test func thrownProblemRendersItself() throws {
        try withServer { (server, _) throws in
            let r = try fetch(server.port, "GET", "/v1/invalid")
            #expect(r.status == 422)
            #expect(r.header("Content-Type") == "application/problem+json")
            #expect(r.header("X-Extra") == "1")
            let o = try jsonObject(r.body)
            #expect(o["type"] as? String == "urn:sheetd:problem:validation-failed")
            #expect(o["title"] as? String == "Validation failed")
            #expect(o["status"] as? Int == 422)
            let params = try #require(o["invalid-params"] as? [[String: String]])
            #expect(params == [["name": "count", "reason": "must be ≥ 0"], ["name": "sheet", "reason": "unknown \"x\""]])
        }
    }

    /// Any other error becomes a 500 internal-error problem that reveals nothing.
    @Test func thrownErrorIs500Problem() throws {
        try withServer { (server, _) throws in
            let r = try fetch(server.port, "GET", "/v1/boom")
            #expect(r.status == 500)
            let o = try jsonObject(r.body)
            #expect(o["type"] as? String == "urn:sheetd:problem:internal-error")
            #expect(o["status"] as? Int == 500)
            #expect(!(o["detail"] as? String ?? "").contains("PlainError"))
        }
    }

    /// Encoded slashes, NUL, dot segments and broken escapes are refused with a 400 problem.
    @Test func hostilePathsAreRefused() throws {
        try withServer { (server, _) throws in
            for path in [
                "/v1/users/a%2Fb/containers/x/count", "/v1/users/a%00/containers/x/count", "/v1/users/../healthz",
                "/v1/users/%2e%2E/profile", "/v1/users/./profile", "/v1/users/%zz/profile", "/v1/users/a%2/profile",
                "/v1/users/%ff%fe/profile",
            ] {
                let r = try fetch(server.port, "GET", path)
                #expect(r.status == 400, "\(path)")
                #expect(try jsonObject(r.body)["type"] as? String == "urn:sheetd:problem:bad-request")
            }
            #expect(try fetch(server.port, "GET", "/v1/users/%C3%A9t%C3%A9/profile").text == #"{"user":"été"}"#)
            #expect(try fetch(server.port, "GET", "/v1/users/...x/profile").status == 200)
        }
    }

    /// Query parameters are decoded on access (+ is a space); names are listed in order.
    @Test func queryParametersAreDecoded() throws {
        try withServer { (server, _) throws in
            let r = try fetch(server.port, "GET", "/v1/query?a=x+y%21&b&c=1&a=2")
            #expect(r.text == "a=x y!|b=|z=<nil>|names=a,b,c,a")
            let h = try fetch(server.port, "GET", "/v1/headers", headers: [("X-Custom-Thing", "v1")])
            #expect(h.text == "v1|v1")
            #expect(try fetch(server.port, "GET", "/v1/headers").text == "<nil>|<nil>")
        }
    }

    /// The byte-level query walk decodes like `query(_:)`: `+`, `%XX`, malformed escapes kept, a name
    /// without `=` has an empty value, and bytes are passed as they are (no UTF-8 repair); `path` is raw.
    @Test func rawQueryItemsAreDecodedBytes() throws {
        try withServer { (server, _) throws in
            let r = try fetch(server.port, "GET", "/v1/query/raw?a=x+y&b&c=%41%zz&%E9=1&a=%00")
            #expect(r.text == "/v1/query/raw|a=78 20 79|b=|c=41 25 7a 7a|\u{FFFD}=31|a=0")
        }
    }

    /// Bodies from 512 bytes on are sent from the shared array itself, not a copy: many concurrent
    /// responses over the same arrays arrive intact, on every size around the threshold.
    @Test func sharedBodiesArriveIntact() throws {
        try withServer { (server, _) throws in
            let sizes = [0, 1, 511, 512, 513, 1906, 65_536, 300_000]
            let failures = Mutex<[String]>([])
            DispatchQueue.concurrentPerform(iterations: 16) { t in
                do {
                    let c = try RawConnection(port: server.port)
                    for i in 0..<24 {
                        let n = sizes[(t + i) % sizes.count]
                        let r = try c.request("GET", "/v1/big/\(n)")
                        if r.status != 200 || r.body != bigBody(n) {
                            failures.withLock { $0.append("size \(n): \(r.status), \(r.body.count) bytes") }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
            #expect(failures.withLock { $0 } == [])
        }
    }

    /// Content-Length together with chunked encoding, or two Content-Lengths (request-smuggling shapes),
    /// are refused with 400 and the connection is closed; the server stays healthy.
    @Test func conflictingFramingHeadersAre400() throws {
        try withServer { (server, _) throws in
            let c = try RawConnection(port: server.port)
            try c.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n")
            let r = try c.readResponse()
            #expect(r.status == 400)
            #expect(try jsonObject(r.body)["type"] as? String == "urn:sheetd:problem:bad-request")
            #expect(c.isClosedByServer())
            let c2 = try RawConnection(port: server.port)
            try c2.send("POST /v1/echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 5\r\n\r\nhello")
            let r2 = try c2.readResponse()
            #expect(r2.status == 400)
            #expect(c2.isClosedByServer())
            #expect(try fetch(server.port, "GET", "/healthz").status == 200)
        }
    }

    /// 32 threads × 50 requests on their own keep-alive connections all get correct answers.
    @Test func concurrentRequestsFromManyConnections() throws {
        try withServer({ $0.threads = 4 }) { (server, metrics) throws in
            let port = server.port
            let failures = ConcurrentCounter()
            let threads = (0..<32).map { t in
                TestThread {
                    do {
                        let c = try RawConnection(port: port)
                        for i in 0..<50 {
                            let r = try c.request("GET", "/v1/users/t\(t)/containers/\(i)/count")
                            let o = try jsonObject(r.body)
                            if r.status != 200 || o["user"] as? String != "t\(t)" || o["container"] as? String != "\(i)" {
                                failures.add()
                            }
                        }
                    } catch {
                        failures.add()
                    }
                }
            }
            for t in threads { t.join() }
            #expect(failures.value == 0)
            let text = metrics.renderPrometheus()
            #expect(text.contains(#"http_requests_total{route="/v1/users/{userId}/containers/{containerId}/count",status="200"} 1600"#))
            // NOTIFY_COMPLETED may run just after the client has read the last response.
            var waited = 0
            while metrics.inFlight != 0 && waited < 200 { usleep(5_000); waited += 1 }
            #expect(metrics.inFlight == 0)
        }
    }

    /// Draining refuses new connections and closes keep-alive ones after their next response.
    @Test func drainingRefusesNewConnectionsAndClosesKeepAlive() throws {
        try withServer { (server, _) throws in
            let c = try RawConnection(port: server.port)
            #expect(try c.request("GET", "/healthz").header("Connection")?.lowercased() != "close")
            server.beginDraining()
            #expect(server.isDraining)
            let r = try c.request("GET", "/healthz")
            #expect(r.status == 200)
            #expect(r.header("Connection")?.lowercased() == "close")
            #expect(c.isClosedByServer())
            // A new connection is accepted by the kernel, then closed by the accept policy.
            if let fresh = try? RawConnection(port: server.port) {
                try? fresh.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                #expect(fresh.isClosedByServer())
            }
        }
    }

    /// stop(drainTimeout:) lets an in-flight request finish (with Connection: close), then returns.
    @Test func stopWaitsForInFlightRequests() throws {
        let server = try startTestServer()
        let result = Locked<RawResponse?>(nil)
        let c = try RawConnection(port: server.port)
        try c.send("GET /v1/slow HTTP/1.1\r\nHost: x\r\n\r\n")
        let reader = TestThread {
            let response = try? c.readResponse()
            result.withLock { $0 = response }
        }
        usleep(100_000)
        let start = ContinuousClock.now
        server.stop(drainTimeout: .seconds(5))
        let elapsed = ContinuousClock.now - start
        reader.join()
        let r = try #require(result.withLock { $0 })
        #expect(r.status == 200)
        #expect(r.text == "slow done")
        #expect(r.header("Connection")?.lowercased() == "close")
        #expect(elapsed < .seconds(3))
        server.stop(drainTimeout: .seconds(1))  // idempotent
    }

    /// An idle keep-alive connection does not hold stop() for the whole drain timeout.
    @Test func stopDoesNotWaitForIdleKeepAlive() throws {
        let server = try startTestServer()
        let c = try RawConnection(port: server.port)
        #expect(try c.request("GET", "/healthz").status == 200)
        let start = ContinuousClock.now
        server.stop(drainTimeout: .seconds(10))
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(c.isClosedByServer())
    }

    /// The metrics text counts routes by template and status, with a histogram and in-flight gauge.
    @Test func metricsCountRoutes() throws {
        try withServer { (server, metrics) throws in
            _ = try fetch(server.port, "GET", "/healthz")
            _ = try fetch(server.port, "HEAD", "/healthz")
            _ = try fetch(server.port, "GET", "/v1/users/1/containers/2/count")
            _ = try fetch(server.port, "GET", "/missing")
            _ = try fetch(server.port, "PUT", "/healthz", body: [])
            let text = metrics.renderPrometheus()
            #expect(text.contains("# HELP http_requests_total "))
            #expect(text.contains("# TYPE http_requests_total counter"))
            #expect(text.contains(#"http_requests_total{route="/healthz",status="200"} 2"#))
            #expect(text.contains(#"http_requests_total{route="/healthz",status="405"} 1"#))
            #expect(text.contains(#"http_requests_total{route="/v1/users/{userId}/containers/{containerId}/count",status="200"} 1"#))
            #expect(text.contains(#"http_requests_total{route="unmatched",status="404"} 1"#))
            #expect(text.contains("# TYPE http_request_duration_seconds histogram"))
            #expect(text.contains(#"http_request_duration_seconds_bucket{route="/healthz",le="+Inf"} 3"#))
            #expect(text.contains(#"http_request_duration_seconds_count{route="/healthz"} 3"#))
            #expect(text.contains("# TYPE http_requests_in_flight gauge"))
            #expect(text.hasSuffix("\n"))
        }
    }

    /// One JSON access-log line per request with the route template, never the raw path.
    @Test func accessLogLineHasTheDocumentedShape() throws {
        Log.startCapture()
        try withServer({ $0.accessLog = true }) { (server, _) throws in
            _ = try fetch(server.port, "GET", "/v1/users/secret-user/containers/c1/count", headers: [("X-Request-Id", "log-test-1")])
            _ = try fetch(server.port, "GET", "/unknown/path", headers: [("X-Request-Id", "log-test-2")])
        }
        let lines = Log.captured()
        let first = try #require(lines.first { $0.contains("\"log-test-1\"") })
        #expect(!first.contains("secret-user"))
        let o = try jsonObject(Array(first.utf8))
        #expect(o["level"] as? String == "info")
        #expect(o["msg"] as? String == "request")
        #expect(o["method"] as? String == "GET")
        #expect(o["route"] as? String == "/v1/users/{userId}/containers/{containerId}/count")
        #expect(o["status"] as? Int == 200)
        #expect(o["duration_us"] is Int)
        #expect((o["time"] as? String)?.hasSuffix("Z") == true)
        #expect(first.hasPrefix(#"{"time":""#))
        let second = try #require(lines.first { $0.contains("\"log-test-2\"") })
        #expect(second.contains(#""route":null"#))
        #expect(second.contains(#""status":404"#))
    }

    /// Start-up errors are descriptive: a port in use, a bad host.
    @Test func startFailuresAreDescriptive() throws {
        try withServer { (server, _) throws in
            var config = HTTPServerConfiguration()
            config.port = server.port
            config.accessLog = false
            let second = HTTPServer(configuration: config, router: Router(), metrics: HTTPMetrics())
            #expect(throws: HTTPServerError.self) { try second.start() }
            do {
                try second.start()
            } catch {
                #expect("\(error)".contains("\(server.port)"))
            }
        }
        var bad = HTTPServerConfiguration()
        bad.host = "localhost.invalid"
        #expect(throws: HTTPServerError.self) { try HTTPServer(configuration: bad, router: Router(), metrics: HTTPMetrics()).start() }
    }
}

import Concurrency
import Foundation
import TestSupport
import Testing

@testable import MicroHTTP

/// Promises held by the routes below until a test settles them.
final class Parked: Sendable {
    private let promises = Locked<[ResponsePromise]>([])
    func add(_ p: ResponsePromise) { promises.withLock { $0.append(p) } }
    var count: Int { promises.withLock { $0.count } }
    /// Waits up to 2 s for `n` parked requests; returns how many there are.
    @discardableResult
    func wait(for n: Int) -> Int {
        var waited = 0
        while count < n && waited < 400 { usleep(5_000); waited += 1 }
        return count
    }
    func takeAll() -> [ResponsePromise] {
        promises.withLock { promises in
            defer { promises = [] }
            return promises
        }
    }
}

/// Routes that answer through `HTTPResponse.deferred`.
func makeDeferredRouter(parked: Parked) -> Router {
    let router = makeTestRouter()
    router.add(.POST, "/v1/later") { req in
        let body = req.body
        let delay = Int(req.query("ms") ?? "20") ?? 20
        return .deferred { promise in
            TimerThread.shared.schedule(after: .milliseconds(delay)) {
                promise.succeed(HTTPResponse(status: 201, headers: [("Content-Type", "application/octet-stream")], body: body))
            }
        }
    }
    router.add(.GET, "/v1/now") { _ in .deferred { $0.succeed(.text(200, "settled in start", contentType: "text/plain")) } }
    router.add(.GET, "/v1/later-problem") { _ in
        .deferred { promise in
            DispatchQueue.global().async { promise.fail(Problem(status: 409, slug: "conflict", title: "Conflict", detail: "later")) }
        }
    }
    router.add(.GET, "/v1/later-error") { _ in .deferred { promise in DispatchQueue.global().async { promise.fail(PlainError()) } } }
    router.add(.GET, "/v1/parked") { _ in .deferred { parked.add($0) } }
    return router
}

@Suite struct DeferredResponseTests {
    /// A deferred answer arrives after the promise is settled on another thread, and the connection
    /// stays usable (keep-alive) for deferred and ordinary requests alike.
    @Test func settledLaterOnTheSameKeepAliveConnection() throws {
        try withServer(router: makeDeferredRouter(parked: Parked())) { (server, metrics) throws in
            let c = try RawConnection(port: server.port)
            for i in 0..<3 {
                let r = try c.request("POST", "/v1/later?ms=30", headers: [("X-Request-Id", "deferred-\(i)")], body: Array("body \(i)".utf8))
                #expect(r.status == 201)
                #expect(r.text == "body \(i)")
                #expect(r.header("X-Request-Id") == "deferred-\(i)")
                #expect(r.header("Connection")?.lowercased() != "close")
            }
            #expect(try c.request("GET", "/healthz").status == 200)
            #expect(try c.request("POST", "/v1/later?ms=0", body: Array("again".utf8)).text == "again")
            #expect(metrics.renderPrometheus().contains(#"http_requests_total{route="/v1/later",status="201"} 4"#))
        }
    }

    /// Settling inside `start` answers at once, without parking.
    @Test func settledDuringStart() throws {
        try withServer(router: makeDeferredRouter(parked: Parked())) { (server, _) throws in
            let r = try fetch(server.port, "GET", "/v1/now")
            #expect(r.status == 200)
            #expect(r.text == "settled in start")
        }
    }

    /// A failed promise renders its Problem; any other error becomes a 500 problem.
    @Test func failuresBecomeProblems() throws {
        try withServer(router: makeDeferredRouter(parked: Parked())) { (server, _) throws in
            let conflict = try fetch(server.port, "GET", "/v1/later-problem")
            #expect(conflict.status == 409)
            #expect(conflict.header("Content-Type") == "application/problem+json")
            #expect(try jsonObject(conflict.body)["detail"] as? String == "later")
            let failed = try fetch(server.port, "GET", "/v1/later-error")
            #expect(failed.status == 500)
            #expect(try jsonObject(failed.body)["type"] as? String == "urn:sheetd:problem:internal-error")
        }
    }

    /// Parked requests do not hold the worker: with one worker thread and 20 parked requests, other
    /// requests are served at once; settling the promises answers every parked request.
    @Test func parkedRequestsFreeTheWorker() throws {
        let parked = Parked()
        try withServer({ $0.threads = 1 }, router: makeDeferredRouter(parked: parked)) { (server, _) throws in
            let port = server.port
            let answers = ConcurrentCounter()
            let clients = (0..<20).map { _ in
                TestThread {
                    if let r = try? fetch(port, "GET", "/v1/parked"), r.status == 200, r.text == "released" { answers.add() }
                }
            }
            #expect(parked.wait(for: 20) == 20)
            let start = ContinuousClock.now
            #expect(try fetch(port, "GET", "/healthz").status == 200)
            #expect(ContinuousClock.now - start < .seconds(1))
            #expect(answers.value == 0)
            for promise in parked.takeAll() {
                promise.succeed(.text(200, "released", contentType: "text/plain"))
                promise.succeed(.text(500, "a second settle is ignored", contentType: "text/plain"))
            }
            for c in clients { c.join() }
            #expect(answers.value == 20)
        }
    }

    /// Stopping with parked requests neither aborts (MHD panics when stopped with a suspended
    /// connection) nor waits for them beyond the drain timeout; settling afterwards is a no-op.
    @Test func stopWithParkedRequests() throws {
        let parked = Parked()
        let server = try startTestServer(router: makeDeferredRouter(parked: parked))
        let c = try RawConnection(port: server.port)
        try c.send("GET /v1/parked HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(parked.wait(for: 1) == 1)
        let start = ContinuousClock.now
        server.stop(drainTimeout: .milliseconds(300))
        #expect(ContinuousClock.now - start < .seconds(3))
        // The client is not left hanging: it gets the 503 or sees the connection closed, nothing else.
        let answer = String(decoding: c.readToEnd(), as: UTF8.self)
        #expect(answer.isEmpty || answer.hasPrefix("HTTP/1.1 503 "), "\(answer.prefix(200))")
        #expect(c.isClosedByServer())
        for promise in parked.takeAll() { promise.succeed(.text(200, "too late", contentType: "text/plain")) }
    }

    /// Parked requests count as in flight: stop waits for them to be settled within the timeout.
    @Test func stopWaitsForParkedRequestsToSettle() throws {
        let parked = Parked()
        let server = try startTestServer(router: makeDeferredRouter(parked: parked))
        let c = try RawConnection(port: server.port)
        try c.send("GET /v1/parked HTTP/1.1\r\nHost: x\r\n\r\n")
        let result = Locked<RawResponse?>(nil)
        let reader = TestThread {
            let response = try? c.readResponse()
            result.withLock { $0 = response }
        }
        parked.wait(for: 1)
        let settler = TestThread {
            usleep(300_000)
            for promise in parked.takeAll() { promise.succeed(.text(200, "settled while draining", contentType: "text/plain")) }
        }
        server.stop(drainTimeout: .seconds(5))
        settler.join()
        reader.join()
        let r = try #require(result.withLock { $0 })
        #expect(r.status == 200)
        #expect(r.text == "settled while draining")
        #expect(r.header("Connection")?.lowercased() == "close")
    }

    /// Promises settled inside `resumingTogether` answer only when the block ends, all of them (and
    /// a promise settled outside any block still answers at once).
    @Test func resumingTogetherHoldsTheResumesUntilTheBlockEnds() throws {
        let parked = Parked()
        try withServer({ $0.threads = 1 }, router: makeDeferredRouter(parked: parked)) { (server, _) throws in
            let port = server.port
            let answers = ConcurrentCounter()
            let clients = (0..<6).map { _ in
                TestThread {
                    if let r = try? fetch(port, "GET", "/v1/parked"), r.status == 200, r.text == "together" { answers.add() }
                }
            }
            #expect(parked.wait(for: 6) == 6)
            let answeredInside = ResponsePromise.resumingTogether {
                for promise in parked.takeAll() { promise.succeed(.text(200, "together", contentType: "text/plain")) }
                usleep(200_000)  // a resumed connection would be answered meanwhile
                return answers.value
            }
            #expect(answeredInside == 0)
            for c in clients { c.join() }
            #expect(answers.value == 6)
        }
    }

    /// A stop while a settled promise's resume is still held back by a `resumingTogether` block on
    /// another thread: the stop resumes it (MHD must not be stopped with a suspended connection),
    /// and the block's own resume at its end is then a no-op.
    @Test func stopResumesAConnectionWhoseResumeIsHeldBack() throws {
        let parked = Parked()
        let server = try startTestServer(router: makeDeferredRouter(parked: parked))
        let c = try RawConnection(port: server.port)
        try c.send("GET /v1/parked HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(parked.wait(for: 1) == 1)
        let settled = ConcurrentCounter()
        let stopped = ConcurrentCounter()
        let holder = TestThread {
            ResponsePromise.resumingTogether {
                for promise in parked.takeAll() { promise.succeed(.text(200, "held", contentType: "text/plain")) }
                settled.add()
                var spins = 0
                while stopped.value == 0 && spins < 1000 { usleep(5_000); spins += 1 }
            }
        }
        while settled.value == 0 { usleep(1_000) }
        server.stop(drainTimeout: .milliseconds(200))
        stopped.add()
        holder.join()
        let answer = String(decoding: c.readToEnd(), as: UTF8.self)
        #expect(answer.isEmpty || answer.hasPrefix("HTTP/1.1 200 ") || answer.hasPrefix("HTTP/1.1 503 "), "\(answer.prefix(200))")
        #expect(c.isClosedByServer())
    }

    /// Over the fake connection a deferred answer parks the connection and is sent after the resume,
    /// as on a socket.
    @Test func fakeConnectionParksAndResumesDeferredAnswers() {
        let driver = FakeConnectionDriver(router: makeDeferredRouter(parked: Parked()))
        let r = driver.respond(.POST, "/v1/later?ms=10", body: Array("x".utf8))
        #expect(r.status == 201)
        #expect(r.body == Array("x".utf8))
        #expect(driver.respond(.GET, "/v1/later-problem").status == 409)
    }
}

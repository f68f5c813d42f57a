import Concurrency
import Foundation
import MicroHTTP
import TestSupport
import Testing

/// The server runs each daemon on its own loop thread (`EventLoop`), in turns (`LoopTurn`).
@Suite struct EventLoopTests {
    private final class Owner: Sendable {}

    /// A handler runs inside a loop turn; work it defers to the turn's end runs on the same thread
    /// after the handler returned, and a promise settled there is answered at once (the loop does not
    /// wait for another event first).
    @Test func workDeferredToTheTurnsEndRunsOnTheLoopThread() throws {
        let threads = Locked<[String: UInt]>([:])
        let router = makeTestRouter()
        router.add(.POST, "/v1/at-turn-end") { _ in
            #expect(LoopTurn.isOpen)
            threads.withLock { $0["handler"] = UInt(pthread_self()) }
            return .deferred { promise in
                let owner = Owner()
                let deferred = LoopTurn.atEnd(of: owner) {
                    threads.withLock { $0["end"] = UInt(pthread_self()) }
                    #expect(!LoopTurn.isOpen)
                    promise.succeed(.text(200, "after the turn", contentType: "text/plain"))
                }
                #expect(deferred)
            }
        }
        try withServer({ $0.threads = 1 }, router: router) { (server, _) throws in
            let c = try RawConnection(port: server.port)
            for _ in 0..<3 {
                let started = ContinuousClock.now
                let r = try c.request("POST", "/v1/at-turn-end", body: [])
                #expect(r.status == 200)
                #expect(r.text == "after the turn")
                #expect(ContinuousClock.now - started < .seconds(1))
            }
            let seen = threads.withLock { $0 }
            #expect(seen["handler"] != nil)
            #expect(seen["handler"] == seen["end"])
        }
    }

    /// Several loops accept from one listening socket, each up to its share of the connection
    /// limit: with a limit of one connection per loop, four connections held open at once are served
    /// by four loop threads. The server stops cleanly afterwards.
    @Test func loopsShareTheListeningSocketAndTheConnectionLimit() throws {
        let threads = Locked<Set<UInt>>([])
        let router = makeTestRouter()
        router.add(.GET, "/v1/which") { _ in
            threads.withLock { _ = $0.insert(UInt(pthread_self())) }
            return .text(200, "ok", contentType: "text/plain")
        }
        try withServer(
            {
                $0.threads = 4; $0.connectionLimit = 4
            }, router: router
        ) { (server, _) throws in
            var connections: [RawConnection] = []
            for _ in 0..<4 {
                let c = try RawConnection(port: server.port)
                #expect(try c.request("GET", "/v1/which").status == 200)
                connections.append(c)
            }
            for c in connections { #expect(try c.request("GET", "/v1/which").status == 200) }
            #expect(threads.withLock { $0.count } == 4)
        }
    }
}

import Concurrency
import Foundation
import JSONKit
import MicroHTTP
import SQLiteStore
import SheetPolicy
import SheetService
import SheetStore
import SheetWire
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The quick parts of the reliability work (issue 7); the long runs are `make reliability`
/// (scripts/reliability.sh). Raw sockets, so 64 connections really race and framing is byte-exact.
@Suite struct ReliabilityTests {
    /// The same eventId sent 50 times at once is applied exactly once; every copy gets the same bytes.
    @Test func sameEventIdFiftyTimesConcurrentlyAppliesOnce() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let port = live.server.port
        let answers = Concurrently.run(50) { i in
            RawHTTP.send(
                port: port,
                RawHTTP.request(
                    "PUT", "/v1/users/dup/containers/c1/count", token: LiveService.adminToken,
                    body: #"{"count":\#(i + 1),"eventId":"same-id"}"#))
        }
        #expect(answers.allSatisfy { $0.status == 200 })
        let fresh = answers.filter { !$0.head.lowercased().contains("idempotent-replayed: true") }
        #expect(fresh.count == 1)
        #expect(Set(answers.map(\.body)).count == 1)
        let applied = try #require(fresh.first)
        let count = (try JSONSerialization.jsonObject(with: Data(applied.body.utf8)) as? [String: Any])?["count"] as? Int
        let state = try live.store.userState(userId: "dup")
        #expect(state.containers.values.map(\.count) == [count])
        // The same id on another route is another event, answered in that route's shape.
        let other = try live.put("/v1/users/dup/sheets/offer-detail/content-height", #"{"height":120,"platform":"ios","eventId":"same-id"}"#)
        #expect(other.status == 200 && other.json["height"] as? Int == 120 && other.header("Idempotent-Replayed") == nil)
    }

    /// 64 connections race count reports (with seq), dismissals and presentations for 3 users: the
    /// highest seq wins and was applied, and each final decision is the policy's for the stored state.
    @Test func racingEventsLoseNoUpdate() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let port = live.server.port
        let users = ["r0", "r1", "r2"]
        let answers = Concurrently.run(64) { i -> [(user: String, seq: Int, count: Int, answer: RawHTTP.Answer)] in
            var out: [(String, Int, Int, RawHTTP.Answer)] = []
            for round in 0..<6 {
                let user = users[(i + round) % users.count]
                let seq = i * 10 + round + 1
                switch (i * 7 + round * 2) % 3 {
                case 0, 1:
                    let count = seq % 4 + 1
                    let a = RawHTTP.send(
                        port: port,
                        RawHTTP.request(
                            "PUT", "/v1/users/\(user)/containers/offers-home/count", token: LiveService.adminToken,
                            body: #"{"count":\#(count),"seq":\#(seq)}"#))
                    out.append((user, seq, count, a))
                default:
                    let a = RawHTTP.send(
                        port: port,
                        RawHTTP.request(
                            "POST", "/v1/users/\(user)/dismissals", token: LiveService.adminToken,
                            body: #"{"sheetId":"offers","method":"swipe"}"#))
                    out.append((user, 0, 0, a))
                }
            }
            return out
        }.flatMap { $0 }
        #expect(answers.allSatisfy { $0.answer.status == 200 }, "\(answers.filter { $0.answer.status != 200 }.prefix(3).map(\.answer))")
        for user in users {
            let reports = answers.filter { $0.user == user && $0.seq > 0 }
            let top = try #require(reports.max { $0.seq < $1.seq })
            let topBody = try JSONSerialization.jsonObject(with: Data(top.answer.body.utf8)) as? [String: Any]
            #expect(topBody?["applied"] as? Bool == true, "\(user): highest seq not applied")
            let state = try live.store.userState(userId: user)
            let stored = try #require(state.containers[ContainerKey(containerId: "offers-home", filter: "")])
            #expect(stored.seq == top.seq && stored.count == top.count, "\(user): lost update \(stored) vs \(top.seq)/\(top.count)")
            let decision = try live.get("/v1/users/\(user)/decision?\(Fixtures.homeAccountsIOS)")
            let context = ClientContext(screen: "home", tab: "accounts", platform: .ios)
            let expected = SheetPolicy.decide(catalog: live.service.catalog, state: state, context: context, now: Timestamp.now()).jsonBytes()
            #expect(Array(decision.body) == expected, "\(user): the decision is not the policy's for the stored state")
        }
    }

    /// Event requests park their connection until the writer commits, so one commit carries the
    /// events of many connections, far more than there are worker threads (2), and every answer
    /// comes after the commit that made it durable: the store holds each acknowledged count.
    @Test func parkedEventsShareCommits() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let port = live.server.port
        let before = live.store.writeStatistics
        let answers = Concurrently.run(48) { i -> [RawHTTP.Answer] in
            (0..<10).map { round in
                RawHTTP.send(
                    port: port,
                    RawHTTP.request(
                        "PUT", "/v1/users/gc\(i)/containers/offers-home/count", token: LiveService.adminToken,
                        body: #"{"count":\#(round + 1),"seq":\#(round + 1)}"#))
            }
        }
        #expect(answers.joined().allSatisfy { $0.status == 200 })
        for i in 0..<48 {
            #expect(try live.store.userState(userId: "gc\(i)").count(for: ContainerKey(containerId: "offers-home")) == 10)
        }
        let after = live.store.writeStatistics
        #expect(after.updates - before.updates == 480)
        #expect(after.commits - before.commits < 480)
        #expect(after.largestBatch > 2, "batches are not bounded by the worker threads")
        let metrics = try live.get("/metrics").text
        #expect(metrics.contains("sheetd_store_updates_total \(after.updates)"))
        #expect(metrics.contains("sheetd_store_largest_batch \(after.largestBatch)"))
    }

    /// Serializability, checked exactly: rounds of 8 events for one user (count reports with seq and
    /// with the same or another value, dismissals of the card sheet, presentations over it) race on 8
    /// connections; a search over orders of `SheetPolicy.apply` must find one serial order in which
    /// every event's outcome equals the answer the client got and the end state equals what the
    /// store holds.
    @Test func racingEventsAreSerializable() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let port = live.server.port
        let catalog = live.service.catalog
        for round in 0..<12 {
            let user = "ser\(round)"
            #expect(try live.put("/v1/users/\(user)/containers/offers-home/count", #"{"count":2,"seq":1}"#).status == 200)
            let start = try live.store.userState(userId: user)
            let events: [(UserEvent, String, String, String)] = (0..<8).map { i in
                switch (i + round) % 4 {
                case 0, 1:
                    let count = 2 + (i + round) % 3 / 2, seq = 2 + (i * 5 + round) % 7
                    return (
                        .countReported(containerId: "offers-home", filter: "", count: count, seq: seq), "PUT",
                        "/v1/users/\(user)/containers/offers-home/count", #"{"count":\#(count),"seq":\#(seq)}"#
                    )
                case 2:
                    return (
                        .sheetDismissed(sheetId: "offers", method: .swipe), "POST", "/v1/users/\(user)/dismissals",
                        #"{"sheetId":"offers","method":"swipe"}"#
                    )
                default:
                    return (
                        .sheetOpened(sheetId: "offer-detail", mode: .push, parentSheetId: "offers"), "POST",
                        "/v1/users/\(user)/presentations", #"{"sheetId":"offer-detail","mode":"push","parentSheetId":"offers"}"#
                    )
                }
            }
            let answers = Concurrently.run(events.count) { i in
                RawHTTP.send(port: port, RawHTTP.request(events[i].1, events[i].2, token: LiveService.adminToken, body: events[i].3))
            }
            #expect(answers.allSatisfy { $0.status == 200 }, "\(answers)")
            let observed = answers.map { (try? JSONSerialization.jsonObject(with: Data($0.body.utf8))) as? [String: Any] ?? [:] }
            let end = try live.store.userState(userId: user)

            func matches(_ effect: EventEffect, _ event: UserEvent, _ answer: [String: Any]) -> Bool {
                switch event {
                case .countReported:
                    return answer["count"] as? Int == effect.count && answer["changed"] as? Bool == effect.changed
                        && answer["applied"] as? Bool == effect.applied
                case .sheetDismissed:
                    return answer["stack"] as? [String] == effect.stack && answer["latched"] as? Bool == effect.latched
                default:
                    return answer["stack"] as? [String] == effect.stack
                }
            }
            var explored = 0
            func search(_ state: UserState, _ remaining: [Int]) -> Bool {
                explored += 1
                if remaining.isEmpty {
                    // Dismissal times are the server's clock readings, which a replay cannot reproduce.
                    var replayed = state
                    replayed.campaign.lastDismissals = end.campaign.lastDismissals
                    return replayed == end
                }
                for (k, i) in remaining.enumerated() {
                    var next = state
                    let effect = SheetPolicy.apply(events[i].0, to: &next, catalog: catalog, now: Timestamp.now())
                    guard matches(effect, events[i].0, observed[i]) else { continue }
                    var rest = remaining
                    rest.remove(at: k)
                    if search(next, rest) { return true }
                }
                return false
            }
            #expect(search(start, Array(events.indices)), "round \(round): no serial order explains the answers (\(explored) prefixes tried)")
        }
    }

    /// A dismissal racing count reports of the same value: no serial order drops the latch.
    @Test func latchSurvivesRacingSameValueReports() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let port = live.server.port
        #expect(try live.put("/v1/users/l/containers/offers-home/count", #"{"count":3,"seq":1}"#).status == 200)
        let answers = Concurrently.run(32) { i in
            i % 2 == 0
                ? RawHTTP.send(
                    port: port,
                    RawHTTP.request(
                        "POST", "/v1/users/l/dismissals", token: LiveService.adminToken,
                        body: #"{"sheetId":"offers","method":"swipe"}"#))
                : RawHTTP.send(
                    port: port,
                    RawHTTP.request(
                        "PUT", "/v1/users/l/containers/offers-home/count",
                        token: LiveService.adminToken, body: #"{"count":3,"seq":\#(i + 1)}"#))
        }
        #expect(answers.allSatisfy { $0.status == 200 })
        #expect(try live.store.userState(userId: "l").latches["offers"] == 3)
    }

    /// Framing and JSON shapes that must be a 400 at once: unsupported Transfer-Encoding (MHD would
    /// otherwise wait for the connection to close), no Host in HTTP/1.1, CL+TE, trailing commas, …
    @Test(arguments: [
        ("TE gzip", "PUT", ["Transfer-Encoding: gzip"], #"{"count":1}"#, 400),
        ("TE gzip, chunked", "PUT", ["Transfer-Encoding: gzip, chunked"], "b\r\n{\"count\":1}\r\n0\r\n\r\n", 400),
        ("CL and TE", "PUT", ["Content-Length: 11", "Transfer-Encoding: chunked"], #"{"count":1}"#, 400),
        ("two Content-Lengths", "PUT", ["Content-Length: 11", "Content-Length: 5"], #"{"count":1}"#, 400),
        ("trailing comma", "PUT", [], #"{"count":1,}"#, 400),
        ("trailing comma in an array", "PUT", [], #"{"count":[1,]}"#, 400),
        ("duplicate keys", "PUT", [], #"{"count":1,"count":2}"#, 400),
        ("1e400", "PUT", [], #"{"count":1e400}"#, 400),
        ("deep nesting", "PUT", [], String(repeating: "[", count: 20000) + String(repeating: "]", count: 20000), 400),
        ("fine", "PUT", [], #"{"count":1}"#, 200),
    ])
    func hostileBodiesAreRejected(name: String, method: String, headers: [String], body: String, status: Int) throws {
        let live = try LiveService()
        let framed = headers.contains { $0.hasPrefix("Content-Length") || $0.hasPrefix("Transfer-Encoding") }
        let request = RawHTTP.request(
            method, "/v1/users/h/containers/c1/count", token: LiveService.adminToken,
            body: body, headers: headers, contentLength: !framed)
        let answer = RawHTTP.send(port: live.server.port, request)
        #expect(answer.status == status, "\(name): \(answer.head)")
        #expect(answer.seconds < 2, "\(name): \(answer.seconds) s")
    }

    @Test func http11WithoutHostIsRejected() throws {
        let live = try LiveService()
        let answer = RawHTTP.send(port: live.server.port, Array("GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n".utf8))
        #expect(answer.status == 400)
        #expect(answer.head.lowercased().contains("application/problem+json"))
        let ok = RawHTTP.send(port: live.server.port, Array("GET /healthz HTTP/1.0\r\n\r\n".utf8))
        #expect(ok.status == 200)
    }

    /// Every /v1/users route rejects each kind of bad token (401) and another user's token (403).
    @Test func everyUserRouteRejectsBadTokens() throws {
        let live = try LiveService()
        try Fixtures.install(live)
        let valid = live.userToken("alice")
        let parts = valid.split(separator: ".").map(String.init)
        let bad: [(String, String?)] = [
            ("missing", nil), ("malformed", "abc.def"), ("expired", live.userToken("alice", ttl: -3600)),
            ("not yet valid", TokenVerifierFactory.token(sub: "alice", secret: LiveService.jwtSecret, nbfOffset: 3600)),
            ("wrong secret", TokenVerifierFactory.token(sub: "alice", secret: "another-secret")),
            ("alg none", "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + "."),
            ("tampered", parts[0] + "." + parts[1] + "." + String(parts[2].reversed())),
        ]
        let routes: [(String, String, String?)] = [
            ("PUT", "/v1/users/alice/containers/c/count", #"{"count":1}"#),
            ("POST", "/v1/users/alice/dismissals", #"{"sheetId":"offers","method":"swipe"}"#),
            ("POST", "/v1/users/alice/presentations", #"{"sheetId":"offer-detail","mode":"push"}"#),
            ("PUT", "/v1/users/alice/sheets/offer-detail/content-height", #"{"height":100,"platform":"ios"}"#),
            ("GET", "/v1/users/alice/decision?\(Fixtures.homeAccountsIOS)", nil),
            ("GET", "/v1/users/alice/state", nil),
            ("DELETE", "/v1/users/alice", nil),
        ]
        for (method, path, body) in routes {
            for (name, token) in bad {
                let r = try live.request(method, path, token: token, json: body)
                #expect(r.status == 401, "\(name): \(method) \(path) → \(r.status)")
            }
            let other = try live.request(method, path, token: live.userToken("bob"), json: body)
            #expect(other.status == 403, "other user: \(method) \(path) → \(other.status)")
        }
    }
}

/// Runs `body(i)` for i in 0..<n on n threads released together; returns the results in order.
enum Concurrently {
    static func run<T: Sendable>(_ n: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
        let results = ResultSlots<T>(n)
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for i in 0..<n {
            done.enter()
            let thread = Thread {
                start.wait()
                results.set(i, body(i))
                done.leave()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        for _ in 0..<n { start.signal() }
        done.wait()
        return results.all()
    }
}

/// Each slot is written once by its own thread, read after the group's wait.
final class ResultSlots<T: Sendable>: Sendable {
    private let slots: Locked<[T?]>
    init(_ n: Int) { slots = Locked(Array(repeating: nil, count: n)) }
    func set(_ i: Int, _ v: T) { slots.withLock { $0[i] = v } }
    func all() -> [T] { slots.withLock { $0.map { $0! } } }
}

/// A blocking one-request HTTP/1.1 client over a plain socket (Connection: close).
enum RawHTTP {
    struct Answer: Sendable, CustomStringConvertible {
        var status: Int
        var head: String
        var body: String
        var seconds: Double
        var description: String { "\(status) \(body.prefix(200))" }
    }

    static func request(
        _ method: String, _ path: String, token: String?, body: String?, headers: [String] = [],
        contentLength: Bool = true
    ) -> [UInt8] {
        var lines = ["\(method) \(path) HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
        if let token { lines.append("Authorization: Bearer \(token)") }
        if let body {
            lines.append("Content-Type: application/json")
            if contentLength { lines.append("Content-Length: \(body.utf8.count)") }
        }
        lines += headers
        return Array((lines.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? "")).utf8)
    }

    static func send(port: Int, _ bytes: [UInt8]) -> Answer {
        let started = Date()
        guard let connection = try? RawConnection(port: port) else { return Answer(status: 0, head: "connect failed", body: "", seconds: 0) }
        // A server may answer and close before taking the whole request (413): read what it sent anyway.
        try? connection.send(bytes)
        let received = connection.readToEnd()
        let text = String(decoding: received, as: UTF8.self)
        let split = text.range(of: "\r\n\r\n")
        let head = split.map { String(text[..<$0.lowerBound]) } ?? text
        let body = split.map { String(text[$0.upperBound...]) } ?? ""
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return Answer(status: status, head: head, body: body, seconds: Date().timeIntervalSince(started))
    }
}

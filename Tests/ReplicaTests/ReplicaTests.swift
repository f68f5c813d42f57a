import Foundation
import MicroHTTP
import PostgresKit
import PostgresStore
import SheetPolicy
import SheetStore
import Synchronization
import TestSupport
import Testing

@testable import SheetService

/// Two replicas (each a SheetService with its own PostgresSheetStore and a live server on port 0) on
/// one PostgreSQL schema, with the decision cache on: what one acknowledges, the other serves.
@Suite
struct ReplicaTests {
    static let offers = #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10}"#
    static let home = "screen=home&tab=accounts&platform=ios"

    /// Every write acknowledged by one replica is in the very next decision read on the other, in
    /// both directions, with both decision caches warm (each read is preceded by a cached one).
    @Test func decisionsReadOnTheOtherReplicaReflectEveryAcknowledgedWrite() throws {
        let pair = try ReplicaPair()
        try pair.a.put("/v1/sheets/offers", Self.offers).expect(201)
        for n in 1...60 {
            let (writer, reader) = n % 2 == 0 ? (pair.a, pair.b) : (pair.b, pair.a)
            _ = try reader.get("/v1/users/u1/decision?\(Self.home)")  // warm the reader's cache
            try writer.put("/v1/users/u1/containers/offers-home/count", #"{"count":\#(n)}"#).expect(200)
            let decision = try reader.get("/v1/users/u1/decision?\(Self.home)")
            #expect(decision.text.contains("'offers' has \(n) card"), "write \(n): \(decision.text.prefix(200))")
        }
        // An erase on one replica: the other's cached decision goes with it.
        _ = try pair.b.get("/v1/users/u1/decision?\(Self.home)")
        try pair.a.request("DELETE", "/v1/users/u1").expect(204)
        #expect(try pair.b.get("/v1/users/u1/decision?\(Self.home)").text.contains(#""reason":"no-cards""#))
    }

    /// The check does not wait for the notification: with the other replica's listener stopped
    /// (no notification can arrive), its cached decision still follows every write.
    @Test func cachedDecisionsStayExactWithoutNotifications() throws {
        let pair = try ReplicaPair()
        try pair.a.put("/v1/sheets/offers", Self.offers).expect(201)
        pair.bStore.stopListening()
        for n in 1...20 {
            _ = try pair.b.get("/v1/users/u2/decision?\(Self.home)")
            try pair.a.put("/v1/users/u2/containers/offers-home/count", #"{"count":\#(n)}"#).expect(200)
            #expect(try pair.b.get("/v1/users/u2/decision?\(Self.home)").text.contains("'offers' has \(n) card"))
        }
        // A cache hit really is one: the same version answers the same (interned) answer.
        let cachedVersion = try #require(
            pair.bService.decisions.storeVersion(
                userId: "u2", context: ClientContextFixture.homeIOS, catalogVersion: pair.bService.catalogKeeper.currentVersion))
        #expect(cachedVersion > 0)
        // Those cached decisions were checked by the batched version read (the route's deferred path).
        let checked = try #require(pair.bService.decisionSource as? ReplicatedDecisions).versionBatcher.checked.load(ordering: .relaxed)
        #expect(checked >= 20)
    }

    /// A cached decision is proven current by a round trip on the listening session alone (no read of
    /// the user); a write acknowledged by the other replica still shows in the very next read.
    @Test func cachedDecisionsAreProvenCurrentByTheListener() throws {
        let pair = try ReplicaPair()
        try pair.a.put("/v1/sheets/offers", Self.offers).expect(201)
        try pair.a.put("/v1/users/u6/containers/offers-home/count", #"{"count":2}"#).expect(200)
        let counters = pair.bService.replicaCounters
        // Listening (a barrier needs it), and cached on B.
        #expect(ReplicaPair.wait { counters.listenerConnected.load(ordering: .relaxed) ? true : nil } == true)
        let cached = ReplicaPair.wait { () -> Bool? in
            let before = counters.barrierHits.load(ordering: .relaxed)
            _ = try? pair.b.get("/v1/users/u6/decision?\(Self.home)")
            return counters.barrierHits.load(ordering: .relaxed) > before ? true : nil
        }
        #expect(cached == true)
        let batcher = try #require(pair.bService.decisionSource as? ReplicatedDecisions).versionBatcher
        let checkedBefore = batcher.checked.load(ordering: .relaxed)
        let hitsBefore = counters.barrierHits.load(ordering: .relaxed)
        for _ in 0..<20 { #expect(try pair.b.get("/v1/users/u6/decision?\(Self.home)").text.contains("'offers' has 2 cards")) }
        #expect(counters.barrierHits.load(ordering: .relaxed) - hitsBefore == 20)
        #expect(batcher.checked.load(ordering: .relaxed) == checkedBefore, "no per-user read for a proven cached answer")
        let metrics = try pair.b.get("/metrics").text
        #expect(metrics.contains("sheetd_replica_barrier_hits_total "))

        for n in 3...12 {
            try pair.a.put("/v1/users/u6/containers/offers-home/count", #"{"count":\#(n)}"#).expect(200)
            #expect(try pair.b.get("/v1/users/u6/decision?\(Self.home)").text.contains("'offers' has \(n) card"))
        }
    }

    /// A catalog change acknowledged by one replica is served by the other from the next request: the
    /// sheet itself, and decisions that present it; a delete likewise.
    @Test func catalogChangesAreServedByTheOtherReplicaOnTheNextRequest() throws {
        let pair = try ReplicaPair()
        for round in 0..<10 {
            let (first, second) = round % 2 == 0 ? (pair.a, pair.b) : (pair.b, pair.a)
            let id = "sheet-\(round)"
            _ = try second.get("/v1/users/u3/decision?screen=s\(round)&platform=ios")  // cached without the sheet
            try first.put("/v1/sheets/\(id)", #"{"kind":"cards","screen":"s\#(round)","containerId":"box","priority":1}"#).expect(201)
            try second.get("/v1/sheets/\(id)").expect(200)
            try second.put("/v1/users/u3/containers/box/count", #"{"count":1}"#).expect(200)
            #expect(try first.get("/v1/users/u3/decision?screen=s\(round)&platform=ios").text.contains(#""id":"\#(id)""#))
            _ = try first.get("/v1/users/u3/decision?screen=s\(round)&platform=ios")
            try second.request("DELETE", "/v1/sheets/\(id)").expect(204)
            try first.get("/v1/sheets/\(id)").expect(404)
            #expect(!(try first.get("/v1/users/u3/decision?screen=s\(round)&platform=ios").text.contains(#""id":"\#(id)""#)))
        }
    }

    /// Events decide with the catalog checked in their batch's transaction (no read of the version
    /// per request): a sheet added on one replica is known to an event on the other sent right after
    /// the acknowledgement, and a deleted one is not, also with the other's listener stopped (no
    /// notification can arrive) and no other route asked in between.
    @Test func eventsOnTheOtherReplicaUseTheCatalogOfTheirOwnBatch() throws {
        let pair = try ReplicaPair()
        pair.aStore.stopListening()
        pair.bStore.stopListening()
        for round in 0..<6 {
            let (first, second) = round % 2 == 0 ? (pair.a, pair.b) : (pair.b, pair.a)
            let id = "event-sheet-\(round)"
            try second.request("POST", "/v1/users/u6/dismissals", json: #"{"sheetId":"\#(id)","method":"swipe"}"#).expect(404)
            try first.put("/v1/sheets/\(id)", #"{"kind":"cards","screen":"e\#(round)","containerId":"box","priority":1}"#).expect(201)
            try second.request("POST", "/v1/users/u6/dismissals", json: #"{"sheetId":"\#(id)","method":"swipe"}"#).expect(200)
            try second.request("POST", "/v1/users/u6/impressions", json: #"{"sheetId":"\#(id)"}"#).expect(200)
            try first.request("DELETE", "/v1/sheets/\(id)").expect(204)
            try second.request("POST", "/v1/users/u6/impressions", json: #"{"sheetId":"\#(id)"}"#).expect(404)
        }
        #expect(pair.aService.replicaCounters.catalogReloads.load(ordering: .relaxed) >= 6)
        #expect(pair.bService.replicaCounters.catalogReloads.load(ordering: .relaxed) >= 6)
    }

    /// The campaign settings travel with the catalog: a change on one replica is served by the other
    /// on the next request.
    @Test func settingsChangesAreServedByTheOtherReplicaOnTheNextRequest() throws {
        let pair = try ReplicaPair()
        for minutes in 1...5 {
            let (first, second) = minutes % 2 == 0 ? (pair.a, pair.b) : (pair.b, pair.a)
            _ = try second.get("/v1/settings")
            try first.put("/v1/settings", #"{"minIntervalSeconds":\#(minutes * 60)}"#).expect(200)
            #expect(try second.get("/v1/settings").text.contains(#""minIntervalSeconds":\#(minutes * 60)"#))
        }
    }

    /// A write acknowledged on one replica pushes a stream event on the other, and wakes a long-poll
    /// waiting there.
    @Test func aWriteOnOneReplicaPushesToStreamsAndLongPollsOnTheOther() throws {
        let pair = try ReplicaPair()
        try pair.a.put("/v1/sheets/offers", Self.offers).expect(201)
        try pair.a.put("/v1/users/u4/containers/offers-home/count", #"{"count":1}"#).expect(200)
        let stream = try EventStreamClient(
            port: pair.b.port, target: "/v1/users/u4/decision/stream?\(Self.home)",
            headers: [("Authorization", "Bearer \(ReplicaPair.adminToken)")])
        #expect(stream.head.status == 200)
        _ = try stream.next()  // retry hint
        let first = try #require(try stream.next())
        #expect(first.data?.contains("'offers' has 1 card") == true)
        try pair.a.put("/v1/users/u4/containers/offers-home/count", #"{"count":2}"#).expect(200)
        let pushed = try #require(try stream.next(timeoutMilliseconds: 3000))
        #expect(pushed.event == "decision")
        #expect(pushed.data?.contains("'offers' has 2 cards") == true)
        #expect(pushed.data == (try pair.b.get("/v1/users/u4/decision?\(Self.home)")).text)

        // Long-poll on A; the write goes to B.
        let etag = try #require(try pair.a.get("/v1/users/u4/decision?\(Self.home)").header("ETag"))
        let replicaA = pair.a
        let waiting = Background {
            try? replicaA.get("/v1/users/u4/decision?\(Self.home)", headers: [("If-None-Match", etag), ("Prefer", "wait=10")])
        }
        Thread.sleep(forTimeInterval: 0.3)
        let started = Date()
        try pair.b.put("/v1/users/u4/containers/offers-home/count", #"{"count":3}"#).expect(200)
        let answer = try #require(waiting.wait() ?? nil)
        #expect(answer.status == 200)
        #expect(answer.text.contains("'offers' has 3 cards"))
        #expect(Date().timeIntervalSince(started) < 3)
    }

    /// A lost listener connection is noticed, every cached answer is dropped, and the listener
    /// listens again (and hears the next change).
    @Test func aLostListenerIsNoticedCachesFlushedAndListeningRestored() throws {
        let pair = try ReplicaPair()
        try pair.a.put("/v1/sheets/offers", Self.offers).expect(201)
        try pair.a.put("/v1/users/u5/containers/offers-home/count", #"{"count":1}"#).expect(200)
        // Cached on B (looked up again until B settled: A's catalog write reloads B's catalog when
        // its notification arrives, which makes earlier entries miss).
        let cachedBefore = ReplicaPair.wait { () -> Int64? in
            _ = try? pair.b.get("/v1/users/u5/decision?\(Self.home)")
            return pair.bService.decisions.storeVersion(
                userId: "u5", context: ClientContextFixture.homeIOS, catalogVersion: pair.bService.catalogKeeper.currentVersion)
        }
        #expect(cachedBefore != nil)
        let version = pair.bService.catalogKeeper.currentVersion

        let pid = try #require(ReplicaPair.wait { pair.bStore.listenerBackendPID != 0 ? pair.bStore.listenerBackendPID : nil })
        let admin = try PostgresConnection(url: pair.url)
        defer { admin.close() }
        try admin.query("SELECT pg_terminate_backend($1)", [.int(Int64(pid))])

        let counters = pair.bService.replicaCounters
        let noticed = ReplicaPair.wait { counters.listenerLosses.load(ordering: .relaxed) == 1 ? true : nil }
        #expect(noticed == true)
        #expect(pair.bService.decisions.storeVersion(userId: "u5", context: ClientContextFixture.homeIOS, catalogVersion: version) == nil)
        // Listening again, on a new session, and hearing A's writes: a stream on B is pushed.
        let newPID = ReplicaPair.wait { pair.bStore.listenerBackendPID != 0 && pair.bStore.listenerBackendPID != pid ? true : nil }
        #expect(newPID == true)
        let connected = pair.bService.replicaCounters.listenerConnected.load(ordering: .relaxed)
        #expect(connected)
        let stream = try EventStreamClient(
            port: pair.b.port, target: "/v1/users/u5/decision/stream?\(Self.home)",
            headers: [("Authorization", "Bearer \(ReplicaPair.adminToken)")])
        _ = try stream.next()
        _ = try stream.next()
        try pair.a.put("/v1/users/u5/containers/offers-home/count", #"{"count":4}"#).expect(200)
        #expect(try stream.next(timeoutMilliseconds: 3000)?.data?.contains("'offers' has 4 cards") == true)
    }

    /// No writable primary (every new session of the replicas starts read-only, as on a standby or a
    /// fenced primary, and the current ones are ended): /readyz 503, events 503 with Retry-After,
    /// the failed attempts counted on /metrics; once the server takes writes again the replica is
    /// ready, writes and listens again by itself, and the event retried with its id is applied once.
    @Test func aReplicaWithoutAWritablePrimaryIsNotReadyAndRecovers() throws {
        let pair = try ReplicaPair(withOwnRole: true)
        let role = try #require(pair.role)
        try pair.a.put("/v1/users/u7/containers/offers-home/count", #"{"count":1,"eventId":"e1"}"#).expect(200)
        let admin = try PostgresConnection(url: pair.adminURL)
        defer { admin.close() }
        try admin.execute("ALTER ROLE \(role) SET default_transaction_read_only = on")
        try admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", [.text(role)])

        #expect(ReplicaPair.wait { (try? pair.a.get("/readyz"))?.status == 503 ? true : nil } == true)
        let refused = try pair.a.put("/v1/users/u7/containers/offers-home/count", #"{"count":2,"eventId":"e2"}"#)
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "1")
        #expect(refused.header("Content-Type")?.hasPrefix("application/problem+json") == true)
        // The listener lost its session too and cannot listen on a read-only server; its attempts
        // (and the pool's, once a request needs a new session) fail and are counted.
        let counted = ReplicaPair.wait { () -> Bool? in
            let text = (try? pair.a.get("/metrics").text) ?? ""
            let failures = text.split(separator: "\n").first { $0.hasPrefix("sheetd_database_connect_failures_total ") }
            let count = (failures?.split(separator: " ").last).flatMap { Int($0) } ?? 0
            return text.contains("sheetd_replica_listener_up 0") && count > 0 ? true : nil
        }
        #expect(counted == true, "listener down and failed attempts counted on /metrics")

        try admin.execute("ALTER ROLE \(role) RESET default_transaction_read_only")
        #expect(ReplicaPair.wait { (try? pair.a.get("/readyz"))?.status == 200 ? true : nil } == true)
        try pair.a.put("/v1/users/u7/containers/offers-home/count", #"{"count":2,"eventId":"e2"}"#).expect(200)
        try pair.a.put("/v1/users/u7/containers/offers-home/count", #"{"count":2,"eventId":"e2"}"#).expect(200)
        let counters = pair.aService.replicaCounters
        #expect(ReplicaPair.wait { counters.listenerConnected.load(ordering: .relaxed) ? true : nil } == true)
        let state = try pair.b.get("/v1/users/u7/state").expect(200).text.filter { $0 != " " }
        #expect(state.contains(#""count":2"#), "\(state)")
    }
}

enum ClientContextFixture {
    static let homeIOS = ClientContext(screen: "home", tab: "accounts", platform: .ios)
}

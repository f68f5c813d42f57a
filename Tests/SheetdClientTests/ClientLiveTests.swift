import Foundation
import MicroHTTP
import SheetdAdmin
import SheetdClient
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The client against a live sheetd on port 0 with a temporary database: every call, the ETag cache,
/// retries with event ids, typed errors, and live decisions across a server restart.
@Suite struct ClientLiveTests {
    static let homeAccounts = SheetContext(screen: "home", tab: "accounts", platform: .ios)

    /// `sheets()` follows the catalog's pages: 503 sheets come back whole and in id order.
    @Test func theAdminClientReadsEveryPageOfTheCatalog() async throws {
        let live = try LiveSheetd()
        let admin = live.admin()
        let ids = (0..<503).map { String(format: "s%03d", $0) }
        for (index, id) in ids.enumerated() {
            _ = try await admin.putSheet(id, definition: SheetDefinitionInput(kind: .informational, screen: "screen\(index / 100)"))
        }
        #expect(try await admin.sheets().map(\.id) == ids)
    }

    /// Every user route and every admin route, through the typed API.
    @Test func everyCallWorksAgainstALiveServer() async throws {
        let live = try LiveSheetd()
        let admin = live.admin()
        let created = try await admin.putSheet(
            "offers", definition: SheetDefinitionInput(kind: .cards, screen: "home", tab: "accounts", containerId: "offers-home", priority: 10))
        #expect(created.created)
        #expect(created.definition.containerId == "offers-home")
        #expect(created.definition.style == .flexible)
        let replaced = try await admin.putSheet(
            "offers", definition: SheetDefinitionInput(kind: .cards, screen: "home", tab: "accounts", containerId: "offers-home", priority: 10))
        #expect(!replaced.created)
        try await live.installCatalog()
        #expect(try await admin.sheets().map(\.id) == ["filters", "offer-detail", "offers"])
        #expect(try await admin.sheet("filters").primaryButton == PrimaryButton(label: "Apply"))

        let client = live.client()
        let count = try await client.reportCount(2, container: "offers-home", seq: 1)
        #expect(count.outcome == CountOutcome(containerId: "offers-home", filter: "", count: 2, changed: true, applied: true))
        #expect(!count.replayed)
        #expect(count.attempts == 1)
        let stale = try await client.reportCount(5, container: "offers-home", seq: 1)
        #expect(!stale.applied)

        let decision = try await client.decision(for: Self.homeAccounts)
        #expect(decision.present)
        #expect(decision.reason == .cardsAvailable)
        let sheet = try #require(decision.sheet)
        #expect(sheet.id == "offers")
        #expect(sheet.ios != nil && sheet.android == nil)
        let plan = try #require(SheetPresentationPlan(sheet))
        #expect(plan.detents.contains(plan.selectedDetent))
        #expect(plan.swiftUI.detents.contains(plan.swiftUI.selection))
        let android = try await client.decision(for: SheetContext(screen: "home", tab: "accounts", platform: .android))
        #expect(android.sheet?.android?.properties != nil)
        #expect(android.sheet.flatMap(SheetPresentationPlan.init) == nil)

        let height = try await client.reportContentHeight(312, sheetId: "offers")
        #expect(height.outcome == ContentHeightOutcome(sheetId: "offers", platform: .ios, height: 312))
        let measured = try await client.decision(for: Self.homeAccounts)
        #expect(measured.sheet?.ios?.customDetentHeights["content"] == 312)

        let opened = try await client.present("offer-detail", mode: .push, parentSheetId: "offers")
        #expect(opened.stack == ["offers", "offer-detail"])
        let nested = try await client.decision(for: Self.homeAccounts)
        #expect(nested.reason == .stack)
        #expect(nested.stack.map(\.id) == ["offers", "offer-detail"])

        let back = try await client.dismiss("offer-detail", method: .closeButton)
        #expect(!back.stack.contains("offer-detail"))
        #expect(!back.latched)
        let latched = try await client.dismiss("offers", method: .swipe)
        #expect(latched.latched)
        #expect(try await client.decision(for: Self.homeAccounts).reason == .latched)

        let state = try await client.state()
        #expect(state.userId == "u1")
        #expect(state.containers == [UserState.Container(containerId: "offers-home", filter: "", count: 2, seq: 1)])
        #expect(state.latches == [UserState.Latch(sheetId: "offers", count: 2)])
        #expect(state.contentHeights == [UserState.ContentHeight(sheetId: "offers", platform: .ios, height: 312)])

        try await client.erase()
        let erased = try await client.state()
        #expect(erased.containers.isEmpty && erased.latches.isEmpty && erased.stack.isEmpty && erased.contentHeights.isEmpty)

        try await admin.deleteSheet("filters")
        let missing = await #expect(throws: SheetdError.self) { try await admin.sheet("filters") }
        #expect(missing?.status == 404)
        #expect(missing?.type == "urn:sheetd:problem:not-found")
    }

    /// The second decision for an equal context is revalidated with If-None-Match and a 304 returns
    /// the cached decision; a change gives a 200 with the new one.
    @Test func decisionsAreRevalidatedWithTheirETag() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let log = ExchangeLog()
        let client = live.client(log: log)
        try await client.reportCount(2, container: "offers-home")
        log.clear()
        let first = try await client.decision(for: Self.homeAccounts)
        let etag = try #require(client.cachedETag(for: Self.homeAccounts))
        let second = try await client.decision(for: Self.homeAccounts)
        #expect(second == first)
        #expect(log.statuses == [200, 304])
        #expect(log.all.last?.headers["etag"] == etag)
        // Another context has its own entry.
        _ = try await client.decision(for: SheetContext(screen: "home", tab: "accounts", platform: .android))
        #expect(log.statuses.last == 200)
        try await client.reportCount(0, container: "offers-home")
        log.clear()
        let third = try await client.decision(for: Self.homeAccounts)
        #expect(log.statuses == [200])
        #expect(!third.present)
        #expect(client.cachedETag(for: Self.homeAccounts) != etag)
    }

    /// An event whose first answer was lost (the stub forwarded it, then answered 503) is retried with
    /// the same eventId; sheetd answers `Idempotent-Replayed: true` with the first outcome, so it was
    /// applied once.
    @Test func aRetriedEventKeepsItsEventIdAndIsAppliedOnce() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let proxy = try FlakyProxy(
            upstream: live.baseURL, failures: 1, mode: .forwardThenFail,
            templates: [(.POST, "/v1/users/{userId}/dismissals"), (.PUT, "/v1/users/{userId}/containers/{containerId}/count")])
        let log = ExchangeLog()
        let client = live.client(log: log, baseURL: proxy.baseURL)
        let receipt = try await client.reportCount(2, container: "offers-home")
        #expect(proxy.requests == 2)
        #expect(log.statuses == [503, 200])
        #expect(receipt.attempts == 2)
        #expect(receipt.replayed)
        // The first outcome: had the retry been applied again, `changed` would be false.
        #expect(receipt.outcome == CountOutcome(containerId: "offers-home", filter: "", count: 2, changed: true, applied: true))
        // Two logical events get two ids, even with the same body.
        let direct = live.client()
        let again = try await direct.reportCount(2, container: "offers-home")
        #expect(again.eventId != receipt.eventId)
        #expect(!again.replayed && !again.changed)
    }

    /// A 503 (and a 429) with Retry-After is retried with backoff until it succeeds; when the attempts
    /// run out the typed error carries the status and says it is retryable.
    @Test func unavailableAnswersAreRetried() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let templates: [(HTTPMethod, String)] = [(.PUT, "/v1/users/{userId}/containers/{containerId}/count")]
        let proxy = try FlakyProxy(upstream: live.baseURL, failures: 2, mode: .refuse, templates: templates)
        let log = ExchangeLog()
        let receipt = try await live.client(log: log, baseURL: proxy.baseURL).reportCount(3, container: "offers-home")
        #expect(receipt.attempts == 3)
        #expect(log.statuses == [503, 503, 200])
        #expect(!receipt.replayed)
        #expect(try await live.client().state().containers.first?.count == 3)

        let tooMany = try FlakyProxy(upstream: live.baseURL, failures: 1, mode: .refuse, status: 429, templates: templates)
        #expect(try await live.client(baseURL: tooMany.baseURL).reportCount(4, container: "offers-home").attempts == 2)

        let down = try FlakyProxy(upstream: live.baseURL, failures: 10, mode: .refuse, retryAfter: "0", templates: templates)
        let client = live.client(retry: RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.01), baseURL: down.baseURL)
        let error = await #expect(throws: SheetdError.self) { try await client.reportCount(5, container: "offers-home") }
        #expect(error?.status == 503)
        #expect(error?.isRetryable == true)
        #expect(error?.retryAfter == 0)
        #expect(down.requests == 2)
    }

    /// A connection refused is retried too, then surfaces as a transport error carrying its URLError.
    @Test func connectionErrorsAreRetried() async throws {
        // A port held bound but not listening: connections are refused, and no other test can take it
        // meanwhile (a stopped server's port could be reused by a server of a parallel test).
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        try #require(bound)
        let url = URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
        let log = ExchangeLog()
        let client = SheetdUserClient(
            baseURL: url, userId: "u1", token: { LiveSheetd.userToken("u1") },
            configuration: SheetdConfiguration(retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: 0.02), onExchange: { log.append($0) }))
        let error = await #expect(throws: SheetdError.self) { try await client.state() }
        #expect(error?.kind == .transport)
        #expect(error?.urlError?.code == .cannotConnectToHost, "the URLError is kept: an app tells refused from offline or timed out")
        #expect(log.all.count == 3)
    }

    /// A 400 is not retried and surfaces the problem's invalid-params; a 403 likewise.
    @Test func badRequestsSurfaceTheirInvalidParams() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let log = ExchangeLog()
        let client = live.client(log: log)
        let error = await #expect(throws: SheetdError.self) { try await client.reportCount(-1, container: "offers-home") }
        #expect(error?.status == 400)
        #expect(error?.type == "urn:sheetd:problem:invalid-params")
        #expect(error?.title?.isEmpty == false)
        #expect(error?.invalidParams.map(\.name) == ["count"])
        #expect(error?.isRetryable == false)
        #expect(log.all.count == 1)

        let context = SheetContext(screen: "home", platform: .ios, viewportHeight: 0)
        let bad = await #expect(throws: SheetdError.self) { try await client.decision(for: context) }
        #expect(bad?.invalidParams.first?.name == "viewportHeight")

        let admin = live.admin()
        let invalid = await #expect(throws: SheetdError.self) {
            try await admin.putSheet("broken", definition: SheetDefinitionInput(kind: .cards, screen: "home"))
        }
        #expect(invalid?.invalidParams.map(\.name) == ["containerId"])

        let other = SheetdUserClient(baseURL: live.baseURL, userId: "u2", token: { LiveSheetd.userToken("u1") })
        let forbidden = await #expect(throws: SheetdError.self) { try await other.state() }
        #expect(forbidden?.status == 403)
    }

    /// The live stream delivers the current decision, then a change; when the server restarts (the
    /// real binary: SIGTERM sends its streams `event: shutdown`, a new process takes the same port and
    /// database) the client reconnects with Last-Event-ID and delivers the next change from it.
    @Test func theLiveStreamDeliversChangesAcrossARestart() async throws {
        let directory = try TemporaryDirectory(prefix: "sheetd-client-restart")
        defer { directory.remove() }
        let arguments = ["--threads", "2", "--drain-timeout", "2"]
        let environment = [
            "PATH": "/usr/bin:/bin", "SHEETD_JWT_SECRET": LiveSheetd.jwtSecret, "SHEETD_ADMIN_TOKEN": LiveSheetd.adminToken,
            "SHEETD_ACCESS_LOG": "false",
        ]
        var server = try LaunchedSheetd(arguments, database: directory.file("sheetd.sqlite"), environment: environment)
        let baseURL = URL(string: "http://127.0.0.1:\(server.port)")!
        let admin = SheetdAdminClient(baseURL: baseURL, token: { LiveSheetd.adminToken })
        try await admin.putSheet(
            "offers", definition: SheetDefinitionInput(kind: .cards, screen: "home", tab: "accounts", containerId: "offers-home", priority: 10))
        let log = ExchangeLog()
        let token = LiveSheetd.userToken("u1")
        let client = SheetdUserClient(
            baseURL: baseURL, userId: "u1", token: { token },
            configuration: SheetdConfiguration(
                retry: RetryPolicy(maxAttempts: 4, baseDelay: 0.05, maxDelay: 0.5), maxReconnectDelay: 0.5, onExchange: { log.append($0) }))
        try await client.reportCount(2, container: "offers-home")
        let collector = DecisionCollector(client.decisions(for: Self.homeAccounts))
        defer { collector.cancel() }
        let first = try await collector.waitFor(count: 1)
        #expect(first[0].present)
        #expect(first[0].sheet?.id == "offers")

        try await client.reportCount(0, container: "offers-home")
        let second = try await collector.waitFor(count: 2)
        #expect(!second[1].present)
        #expect(second[1].reason == .noCards)

        #expect(server.stop() == 0)
        server = try LaunchedSheetd(arguments, port: server.port, database: directory.file("sheetd.sqlite"), environment: environment)
        // Up to date when it reconnects (Last-Event-ID): nothing new until the next change.
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, log.all.filter({ $0.target.hasSuffix("/decision/stream") && $0.status == 200 }).count < 2 {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        #expect(log.all.filter { $0.target.hasSuffix("/decision/stream") && $0.status == 200 }.count == 2)
        #expect(collector.received.count == 2)
        try await client.reportCount(4, container: "offers-home")
        let third = try await collector.waitFor(count: 3)
        #expect(third[2].present)
        #expect(third[2].sheet?.id == "offers")
        #expect(collector.received.count == 3)
    }

    /// With long-poll (a proxy that buffers streams), changes arrive through `Prefer: wait`.
    @Test func longPollDeliversChanges() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let log = ExchangeLog()
        let client = live.client(log: log, liveUpdates: .longPoll, longPollWait: 1)
        let collector = DecisionCollector(client.decisions(for: Self.homeAccounts))
        defer { collector.cancel() }
        let first = try await collector.waitFor(count: 1)
        #expect(!first[0].present)
        try await Task.sleep(nanoseconds: 1_300_000_000)  // at least one wait ran out (304)
        try await client.reportCount(2, container: "offers-home")
        let second = try await collector.waitFor(count: 2)
        #expect(second[1].present)
        #expect(log.statuses.contains(304))
        #expect(log.all.contains { $0.headers["preference-applied"] == "wait=1" })
    }
}

import Foundation
import SheetService
import SheetdClient
import TestSupport
import Testing

/// The client through a scripted loopback proxy in front of a live sheetd: every retry path, the token
/// refresh, `Retry-After` in both forms and its cap, stream resumption and the long-poll fallback.
@Suite struct ClientResilienceTests {
    static let homeAccounts = SheetContext(screen: "home", tab: "accounts", platform: .ios)
    static let blips: [ScriptedProxy.Step] = [.answer(500), .answer(502), .answer(504), .answer(408), .answer(401)]

    /// A provider that counts its refreshes and hands out `fresh` after the first.
    final class CountingTokens: SheetdTokenProvider, @unchecked Sendable {
        // @unchecked Sendable: `current` and `rejected` are only touched under `lock`.
        private let lock = NSLock()
        private var current: String
        private var rejected: [String] = []
        private let fresh: String
        init(initial: String, fresh: String) {
            current = initial
            self.fresh = fresh
        }
        var refreshes: [String] { lock.withLock { rejected } }
        func token() async throws -> String { lock.withLock { current } }
        func refreshToken(rejecting token: String) async throws -> String {
            lock.withLock {
                rejected.append(token)
                current = fresh
                return fresh
            }
        }
    }

    static func client(
        _ url: URL, tokens: any SheetdTokenProvider, log: ExchangeLog? = nil,
        retry: RetryPolicy = RetryPolicy(maxAttempts: 6, baseDelay: 0.01, maxDelay: 0.05)
    ) -> SheetdUserClient {
        var configuration = SheetdConfiguration(retry: retry, requestTimeout: 10, maxReconnectDelay: 0.2)
        if let log { configuration.onExchange = { log.append($0) } }
        return SheetdUserClient(baseURL: url, userId: "u1", tokenProvider: tokens, configuration: configuration)
    }

    /// A request answered 500, 502, 504, 408 in turn is retried each time, and the 401 after them
    /// gets one token refresh: the sixth request carries the fresh token and succeeds.
    @Test func everyRetryableStatusAndA401AreSurvived() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let proxy = try ScriptedProxy(upstream: live.baseURL, script: Self.blips)
        let stale = LiveSheetd.userToken("u1")
        let fresh = LiveSheetd.tokens.issueUserToken(sub: "u1", now: Int64(Date().timeIntervalSince1970) + 1, ttl: 3600)
        let tokens = CountingTokens(initial: stale, fresh: fresh)
        let log = ExchangeLog()
        let receipt = try await Self.client(proxy.baseURL, tokens: tokens, log: log).reportCount(2, container: "offers-home")
        #expect(log.statuses == [500, 502, 504, 408, 401, 200])
        #expect(receipt.attempts == 6)
        #expect(tokens.refreshes == [stale])
        let sent = proxy.requests.map { $0.headers["authorization"] }
        #expect(sent == Array(repeating: "Bearer \(stale)", count: 5) + ["Bearer \(fresh)"])
        #expect(Set(proxy.requests.map { $0.headers["content-type"] }) == ["application/json"])
        #expect(try await live.client().state().containers.first?.count == 2)
    }

    /// A token the server itself rejects (expired) is refreshed once; a provider that cannot refresh
    /// (the same token again) fails with the 401 after a single refresh, not a loop.
    @Test func a401FromTheServerRefreshesTheTokenOnce() async throws {
        let live = try LiveSheetd()
        let expired = LiveSheetd.tokens.issueUserToken(sub: "u1", now: Int64(Date().timeIntervalSince1970) - 7200, ttl: 60)
        let tokens = CountingTokens(initial: expired, fresh: LiveSheetd.userToken("u1"))
        let log = ExchangeLog()
        #expect(try await Self.client(live.baseURL, tokens: tokens, log: log).state().userId == "u1")
        #expect(log.statuses == [401, 200])
        #expect(tokens.refreshes == [expired])

        let stuck = CountingTokens(initial: expired, fresh: expired)
        let error = await #expect(throws: SheetdError.self) { try await Self.client(live.baseURL, tokens: stuck).state() }
        #expect(error?.status == 401)
        #expect(stuck.refreshes == [expired])
    }

    /// The live decision survives the same blips: 500, 502, 504 and 408 are retried, the 401 refreshes
    /// the token once, and the stream then delivers the decision.
    @Test func theStreamSurvivesEveryRetryableStatusAndA401() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        try await live.client().reportCount(2, container: "offers-home")
        let proxy = try ScriptedProxy(upstream: live.baseURL, script: Self.blips)
        let stale = LiveSheetd.userToken("u1")
        let tokens = CountingTokens(
            initial: stale, fresh: LiveSheetd.tokens.issueUserToken(sub: "u1", now: Int64(Date().timeIntervalSince1970) + 1, ttl: 3600))
        let collector = DecisionCollector(Self.client(proxy.baseURL, tokens: tokens).decisions(for: Self.homeAccounts))
        defer { collector.cancel() }
        let first = try await collector.waitFor(count: 1)
        #expect(first[0].sheet?.id == "offers")
        #expect(proxy.requests.count == 6)
        #expect(proxy.requests.allSatisfy { $0.isStream })
        #expect(tokens.refreshes == [stale])
    }

    /// A stream the server ends with `event: token-expired` is reopened at once with a refreshed token
    /// (no 401 on the way), and the next change arrives on it.
    @Test func aStreamWhoseTokenExpiredReconnectsWithAFreshOne() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let now = Int64(Date().timeIntervalSince1970)
        // Accepted for about 6 more seconds (exp is 54 s ago, the verifier's leeway 60 s): long
        // enough for the first stream to open on a loaded machine, short enough to wait for its end.
        let expiring = LiveSheetd.tokens.issueUserToken(sub: "u1", now: now - 100, ttl: 46)
        let tokens = CountingTokens(initial: expiring, fresh: LiveSheetd.userToken("u1"))
        let log = ExchangeLog()
        let collector = DecisionCollector(Self.client(live.baseURL, tokens: tokens, log: log).decisions(for: Self.homeAccounts))
        defer { collector.cancel() }
        _ = try await collector.waitFor(count: 1)
        try await waitUntil(seconds: 30) { log.all.filter { $0.target.hasSuffix("/decision/stream") }.count >= 2 }
        #expect(tokens.refreshes == [expiring])
        #expect(log.statuses.allSatisfy { $0 == 200 }, "reopened with the fresh token, not after a 401")
        try await live.client().reportCount(2, container: "offers-home")
        #expect(try await collector.waitFor(count: 2)[1].present)
    }

    /// A stream cut mid-way, then answered 500, is resumed with `Last-Event-ID` (the ETag of the
    /// decision delivered): nothing is delivered twice, and the next change arrives on the new stream.
    @Test func aStreamCutThenA5xxResumesWithLastEventId() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let client = live.client()
        try await client.reportCount(2, container: "offers-home")
        let proxy = try ScriptedProxy(upstream: live.baseURL, script: [])
        let following = live.client(baseURL: proxy.baseURL)
        let collector = DecisionCollector(following.decisions(for: Self.homeAccounts))
        defer { collector.cancel() }
        _ = try await collector.waitFor(count: 1)
        let etag = try #require(following.cachedETag(for: Self.homeAccounts))
        #expect(proxy.requests.first?.headers["last-event-id"] == nil)

        proxy.append([.answer(500), .answer(503, headers: [("Retry-After", "0")])])
        proxy.cutForwarded()
        try await waitUntil { proxy.requests.count >= 4 }
        let resumed = proxy.requests.dropFirst()
        #expect(resumed.map { $0.headers["last-event-id"] } == Array(repeating: etag, count: resumed.count))
        try await Task.sleep(nanoseconds: 200_000_000)  // an up-to-date reconnection delivers nothing
        #expect(collector.received.count == 1)

        try await client.reportCount(0, container: "offers-home")
        let changed = try await collector.waitFor(count: 2)
        #expect(changed[1].reason == .noCards)
    }

    /// `Retry-After` in seconds and as an HTTP-date is waited out before the retry; one beyond
    /// `maxRetryAfter` waits only the cap.
    @Test func retryAfterIsHonouredInBothFormsAndCapped() async throws {
        let live = try LiveSheetd()
        let tokens = ClosureTokenProvider { LiveSheetd.userToken("u1") }
        func elapsed(_ retryAfter: String, maxRetryAfter: Double = 10) async throws -> Double {
            let proxy = try ScriptedProxy(upstream: live.baseURL, script: [.answer(503, headers: [("Retry-After", retryAfter)])])
            let retry = RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.01, maxRetryAfter: maxRetryAfter)
            let started = Date()
            _ = try await Self.client(proxy.baseURL, tokens: tokens, retry: retry).state()
            #expect(proxy.requests.count == 2)
            return Date().timeIntervalSince(started)
        }
        #expect(try await elapsed("1") >= 1)
        // An HTTP-date has whole seconds: "now + 2 s" is between 1 and 2 s away. The upper bound
        // only tells it from the cap (30 s here) with room for a loaded machine.
        let date = try await elapsed(RetryAfter.httpDate(Date().addingTimeInterval(2)), maxRetryAfter: 30)
        #expect(date >= 0.95)
        #expect(date < 15)
        // Waited the cap, not the hour (the bound leaves room for a loaded machine).
        let capped = try await elapsed("3600", maxRetryAfter: 0.3)
        #expect(capped >= 0.3)
        #expect(capped < 30)
    }

    /// Where the stream route is refused (404) or a buffering proxy answers it with JSON, the live
    /// decision falls back to long-poll and still delivers changes.
    @Test(arguments: [ScriptedProxy.Step.answer(404), .answer(200, contentType: "application/json")])
    func refusedStreamsFallBackToLongPoll(refusal: ScriptedProxy.Step) async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let proxy = try ScriptedProxy(upstream: live.baseURL, script: [refusal], scripted: \.isStream)
        let client = live.client(longPollWait: 1, baseURL: proxy.baseURL)
        let collector = DecisionCollector(client.decisions(for: Self.homeAccounts))
        defer { collector.cancel() }
        #expect(try await collector.waitFor(count: 1)[0].present == false)
        try await live.client().reportCount(2, container: "offers-home")
        #expect(try await collector.waitFor(count: 2)[1].present)
        #expect(proxy.requests.filter(\.isStream).count == 1)
        #expect(proxy.requests.contains { !$0.isStream && $0.headers["prefer"] == "wait=1" })
    }
}

/// Polls `condition` every 20 ms for up to `seconds`; throws when it never holds.
func waitUntil(seconds: Double = 10, _ condition: () -> Bool) async throws {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { throw CollectorTimeout(description: "the condition did not hold within \(seconds) s") }
        try await Task.sleep(nanoseconds: 20_000_000)
    }
}

import Foundation
import SheetdAdmin
import SheetdClient
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an adopting app relies on, against a live sheetd: targeted sheets show, its own headers and
/// session settings reach the server, and the decision cache stays bounded.
@Suite struct ClientAdoptionTests {
    /// A sheet whose audience names an app version and languages is held as `not-in-audience` without
    /// them and shows for a context that sends matching ones (and not for one that does not match).
    @Test func anAudienceTargetedSheetShows() async throws {
        let live = try LiveSheetd()
        try await live.admin().putSheet(
            "payments-offer",
            definition: SheetDefinitionInput(
                kind: .cards, screen: "payments", containerId: "payments-offers", priority: 5,
                audience: Audience(minAppVersion: "2.10", locales: ["de", "fr"])))
        let client = live.client()
        try await client.reportCount(1, container: "payments-offers")

        let untargeted = try await client.decision(for: SheetContext(screen: "payments"))
        #expect(!untargeted.present)
        #expect(untargeted.held?.first == HeldSheet(sheetId: "payments-offer", reason: .notInAudience))

        let targeted = try await client.decision(for: SheetContext(screen: "payments", appVersion: "2.10.1", locale: "de-CH"))
        #expect(targeted.present)
        #expect(targeted.sheet?.id == "payments-offer")

        let tooOld = try await client.decision(for: SheetContext(screen: "payments", appVersion: "2.9.9", locale: "de-CH"))
        #expect(tooOld.held?.first?.reason == .notInAudience)
        let otherLanguage = try await client.decision(for: SheetContext(screen: "payments", appVersion: "3", locale: "it"))
        #expect(!otherLanguage.present)
    }

    /// The request adapter sees every request after the client's headers (it can add its own and a
    /// User-Agent), and the app's session configuration's headers go out too.
    @Test func theAppsAdapterAndSessionConfigurationApply() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let proxy = try ScriptedProxy(upstream: live.baseURL, script: [])
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        sessionConfiguration.httpAdditionalHeaders = ["X-App-Build": "4711"]
        let token = LiveSheetd.userToken("u1")
        let client = SheetdUserClient(
            baseURL: proxy.baseURL, userId: "u1", token: { token },
            configuration: SheetdConfiguration(
                sessionConfiguration: sessionConfiguration,
                requestAdapter: { request in
                    var request = request
                    #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer \(token)")
                    request.setValue("Offers/3.1 (iPhone; iOS 18.0)", forHTTPHeaderField: "User-Agent")
                    request.setValue("trace-1", forHTTPHeaderField: "X-Trace")
                    return request
                }))
        sessionConfiguration.httpAdditionalHeaders = ["X-App-Build": "changed after"]  // the client holds its own copy
        try await client.reportCount(2, container: "offers-home")
        let collector = DecisionCollector(client.decisions(for: SheetContext(screen: "home", tab: "accounts")))
        defer { collector.cancel() }
        #expect(try await collector.waitFor(count: 1)[0].present)
        let requests = proxy.requests
        #expect(requests.count == 2)
        #expect(requests.map { $0.headers["user-agent"] } == ["Offers/3.1 (iPhone; iOS 18.0)", "Offers/3.1 (iPhone; iOS 18.0)"])
        #expect(requests.map { $0.headers["x-trace"] } == ["trace-1", "trace-1"])
        #expect(requests.map { $0.headers["x-app-build"] } == ["4711", "4711"], "the request session and the stream's")

        let failing = SheetdUserClient(
            baseURL: live.baseURL, userId: "u1", token: { token },
            configuration: SheetdConfiguration(requestAdapter: { _ in throw CollectorTimeout(description: "no") }))
        let error = await #expect(throws: SheetdError.self) { try await failing.state() }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.underlying is CollectorTimeout)
    }

    /// The decision cache keeps at most `decisionCacheLimit` contexts, dropping the least recently
    /// used: with 2, a third context evicts the one not read since, and that one is downloaded again.
    @Test func theDecisionCacheIsAnLRUOfTheConfiguredSize() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let log = ExchangeLog()
        let token = LiveSheetd.userToken("u1")
        let client = SheetdUserClient(
            baseURL: live.baseURL, userId: "u1", token: { token },
            configuration: SheetdConfiguration(decisionCacheLimit: 2, onExchange: { log.append($0) }))
        let home = SheetContext(screen: "home", tab: "accounts")
        let transactions = SheetContext(screen: "transactions")
        let settings = SheetContext(screen: "settings")
        _ = try await client.decision(for: home)
        _ = try await client.decision(for: transactions)
        _ = try await client.decision(for: home)  // home is now the most recently used
        _ = try await client.decision(for: settings)
        #expect(client.cachedETag(for: home) != nil)
        #expect(client.cachedETag(for: settings) != nil)
        #expect(client.cachedETag(for: transactions) == nil)
        log.clear()
        _ = try await client.decision(for: transactions)
        _ = try await client.decision(for: settings)
        #expect(log.statuses == [200, 304], "the evicted context is downloaded, the kept one revalidated")

        let uncached = SheetdUserClient(
            baseURL: live.baseURL, userId: "u1", token: { token }, configuration: SheetdConfiguration(decisionCacheLimit: 0))
        _ = try await uncached.decision(for: home)
        #expect(uncached.cachedETag(for: home) == nil)
    }
}

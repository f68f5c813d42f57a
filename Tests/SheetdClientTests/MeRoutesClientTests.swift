import Foundation
import SheetdClient
import Testing

/// `usesMeRoutes`: every user call goes to `/v1/me/...` (the user is the token's subject), so the user
/// id is in no URL; the calls, the outbox and the live stream work as with `/v1/users/{userId}`.
@Suite struct MeRoutesClientTests {
    @Test func everyUserCallUsesTheMeRoutes() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let log = ExchangeLog()
        let token = LiveSheetd.userToken("me-user-7")
        let client = SheetdUserClient(
            baseURL: live.baseURL, userId: "me-user-7", token: { token },
            configuration: SheetdConfiguration(requestTimeout: 10, onExchange: { log.append($0) }, usesMeRoutes: true))
        try await client.reportCount(2, container: "offers-home")
        let decision = try await client.decision(for: SheetContext(screen: "home", tab: "accounts"))
        #expect(decision.sheet?.id == "offers")
        let delivery = try await client.deliver(SheetdEvent(.impression(sheetId: "offers")))
        #expect(!delivery.replayed)
        let collector = DecisionCollector(client.decisions(for: SheetContext(screen: "home", tab: "accounts")))
        defer { collector.cancel() }
        #expect(try await collector.waitFor(count: 1).first?.sheet?.id == "offers")
        // The first decision may come from the cache: wait for the stream's own answer.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !log.all.contains(where: { $0.target.hasPrefix("/v1/me/decision/stream") && $0.status == 200 }) {
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        let state = try await client.state()
        #expect(state.userId == "me-user-7")
        #expect(state.impressions.first?.total == 1)
        let targets = log.all.map(\.target)
        #expect(targets.allSatisfy { $0.hasPrefix("/v1/me/") }, "\(targets)")
        #expect(!targets.contains { $0.contains("me-user-7") })
        #expect(targets.contains { $0.hasPrefix("/v1/me/decision/stream") })
    }
}

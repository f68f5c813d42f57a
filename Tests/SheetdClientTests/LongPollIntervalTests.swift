import Foundation
import SheetdClient
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The long-poll loop asks no faster than its minimum interval, even when every answer comes at once
/// (here the request adapter strips `Prefer: wait`, as a proxy might, so sheetd answers 304 at once).
@Suite struct LongPollIntervalTests {
    /// The times requests left, in order.
    final class Times: @unchecked Sendable {
        // @unchecked Sendable: `items` is only touched under `lock`.
        private let lock = NSLock()
        private var items: [TimeInterval] = []
        func append(_ time: TimeInterval) { lock.withLock { items.append(time) } }
        var all: [TimeInterval] { lock.withLock { items } }
    }

    @Test func answersAtOnceAreNotAskedFasterThanTheMinimumInterval() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let times = Times()
        let token = LiveSheetd.userToken("u1")
        let log = ExchangeLog()
        let client = SheetdUserClient(
            baseURL: live.baseURL, userId: "u1", token: { token },
            configuration: SheetdConfiguration(
                requestTimeout: 10, liveUpdates: .longPoll,
                requestAdapter: { request in
                    var request = request
                    request.setValue(nil, forHTTPHeaderField: "Prefer")
                    times.append(ProcessInfo.processInfo.systemUptime)
                    return request
                }, onExchange: { log.append($0) }, longPollMinimumInterval: 0.3))
        let collector = DecisionCollector(client.decisions(for: SheetContext(screen: "home", tab: "accounts")))
        defer { collector.cancel() }
        _ = try await collector.waitFor(count: 1)
        let deadline = Date().addingTimeInterval(10)
        while times.all.count < 5, Date() < deadline { try await Task.sleep(nanoseconds: 50_000_000) }
        collector.cancel()
        let sent = times.all
        try #require(sent.count >= 5)
        // Each request leaves after the answer before it: the first four are answered.
        #expect(Array(log.statuses.prefix(4)) == [200, 304, 304, 304], "answered at once, unchanged")
        for (earlier, later) in zip(sent, sent.dropFirst()) { #expect(later - earlier >= 0.29, "\(sent)") }
    }
}

import Foundation
import SheetdAdmin
import SheetdClient
import SheetdClientTesting
import TestSupport
import Testing

/// The outbox against a live sheetd on a real SQLite file: events recorded while the server is down
/// survive a client restart and arrive once, in order, when it is back; a lost answer is replayed, not
/// counted twice; the bound drops the oldest; late and refused events are handled as documented.
@Suite struct OutboxTests {
    static let fast = RetryPolicy(maxAttempts: 2, baseDelay: 0.01, maxDelay: 0.02)

    static func client(_ baseURL: URL, user: String = "u1", sendsOccurredAt: Bool = true, usesMeRoutes: Bool = false) -> SheetdUserClient {
        let token = LiveSheetd.userToken(user)
        return SheetdUserClient(
            baseURL: baseURL, userId: user, token: { token },
            configuration: SheetdConfiguration(
                retry: fast, requestTimeout: 10, usesMeRoutes: usesMeRoutes, sendsOccurredAt: sendsOccurredAt))
    }

    /// Drops told to `onDrop`, in order.
    final class Drops: @unchecked Sendable {
        // @unchecked Sendable: `items` is only touched under `lock`.
        private let lock = NSLock()
        private var items: [(SheetdEvent, SheetdOutbox.DropReason)] = []
        func append(_ event: SheetdEvent, _ reason: SheetdOutbox.DropReason) { lock.withLock { items.append((event, reason)) } }
        var all: [(SheetdEvent, SheetdOutbox.DropReason)] { lock.withLock { items } }
    }

    /// Server down: the events stay in the file across a client restart; when the server is back (same
    /// port, same database) they are delivered in order (the count before the dismissal, so the sheet
    /// latches at 2); a flush whose answers were lost sends them again and the server replays them.
    @Test func eventsSurviveTheServerBeingDownAndAClientRestart() async throws {
        let directory = try TemporaryDirectory(prefix: "sheetd-outbox")
        defer { directory.remove() }
        let file = URL(fileURLWithPath: directory.file("app/outbox-u1.json"))
        var live: LiveSheetd? = try LiveSheetd(directory: directory)
        try await live!.installCatalog()
        let port = live!.port
        let baseURL = live!.baseURL
        live!.stop()
        live = nil

        let recorded: [SheetdEvent]
        do {  // the first launch's outbox goes away with its scheduled retry (one outbox per file at a time)
            let first = try SheetdOutbox(file: file, client: Self.client(baseURL))
            try await first.record(.count(container: "offers-home", count: 2, seq: nil, filter: nil))
            try await first.record(.impression(sheetId: "offers"))
            try await first.record(.dismissal(sheetId: "offers", method: .swipe))
            let offline = await first.flush()
            #expect(offline.delivered == 0 && offline.remaining == 3)
            #expect(offline.stoppedBy?.kind == .transport)
            recorded = await first.pending
        }

        // The app is killed and launched again: a new client and outbox on the same file.
        let second = try SheetdOutbox(file: file, client: Self.client(baseURL))
        #expect(await second.pending == recorded, "kept in the file, ids and times included")
        let beforeDelivery = try Data(contentsOf: file)

        live = try LiveSheetd(port: port, directory: directory)
        let back = await second.flush()
        #expect(back == SheetdOutbox.FlushResult(delivered: 3, replayed: 0, remaining: 0, stoppedBy: nil))
        #expect(await second.pending.isEmpty)
        #expect(try JSONDecoder().decode([SheetdEvent].self, from: Data(contentsOf: file)).isEmpty)
        let state = try await Self.client(baseURL).state()
        #expect(state.containers.map(\.count) == [2])
        #expect(state.latches == [UserState.Latch(sheetId: "offers", count: 2)], "in order: the count, then the dismissal latched at it")
        #expect(state.impressions.first { $0.sheetId == "offers" }?.total == 1)

        // The answers were lost (the app died before it rewrote the file): the same events again.
        try beforeDelivery.write(to: file)
        let third = try SheetdOutbox(file: file, client: Self.client(baseURL))
        let again = await third.flush()
        #expect(again == SheetdOutbox.FlushResult(delivered: 3, replayed: 3, remaining: 0, stoppedBy: nil))
        #expect(try await Self.client(baseURL).state().impressions.first { $0.sheetId == "offers" }?.total == 1, "replayed, not counted twice")
        _ = live
    }

    /// Past its capacity the outbox drops its oldest events, says so, and keeps the newest in order.
    @Test func theBoundDropsTheOldest() async throws {
        let directory = try TemporaryDirectory(prefix: "sheetd-outbox-bound")
        defer { directory.remove() }
        let drops = Drops()
        // Nothing listens on this port: a server that is down.
        let unreachable = URL(string: "http://127.0.0.1:9")!
        let outbox = try SheetdOutbox(
            file: URL(fileURLWithPath: directory.file("outbox.json")), client: Self.client(unreachable), capacity: 3,
            onDrop: { drops.append($0, $1) })
        var recorded: [SheetdEvent] = []
        for count in 1...5 { recorded.append(try await outbox.record(.count(container: "offers-home", count: count, seq: nil, filter: nil))) }
        #expect(await outbox.pending == Array(recorded.suffix(3)))
        #expect(await outbox.dropped == 2)
        #expect(drops.all.map { $0.0 } == Array(recorded.prefix(2)))
        #expect(drops.all.allSatisfy { $0.1 == .overflow })
        let reopened = try SheetdOutbox(file: URL(fileURLWithPath: directory.file("outbox.json")), client: Self.client(unreachable), capacity: 3)
        #expect(await reopened.pending == Array(recorded.suffix(3)), "the bound holds in the file too")
    }

    /// An impression older than the server's window is dropped (it would fill today's caps); a late
    /// dismissal is still delivered (without its time: its latch matters); an event the server refuses
    /// for good is dropped and the next one goes on. A file that is not an outbox is set aside.
    @Test func lateAndRefusedEventsAreHandledAsDocumented() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let drops = Drops()
        let file = URL(fileURLWithPath: live.directory.file("outbox.json"))
        try Data("not json".utf8).write(to: file)
        let client = Self.client(live.baseURL, sendsOccurredAt: true)
        let outbox = try SheetdOutbox(file: file, client: client, onDrop: { drops.append($0, $1) })
        #expect(FileManager.default.fileExists(atPath: file.path + ".unreadable"))
        #expect(await outbox.pending.isEmpty)
        let dayAgo = Date().addingTimeInterval(-25 * 3600)
        let staleImpression = SheetdEvent(.impression(sheetId: "offers"), occurredAt: dayAgo)
        let staleDismissal = SheetdEvent(.dismissal(sheetId: "offers", method: .closeButton), occurredAt: dayAgo)
        let unknown = SheetdEvent(.impression(sheetId: "no-such-sheet"))
        let count = SheetdEvent(.count(container: "offers-home", count: 1, seq: nil, filter: nil))
        try await client.reportCount(3, container: "offers-home")
        for event in [staleImpression, staleDismissal, unknown, count] { try await outbox.enqueue(event) }
        let result = await outbox.flush()
        #expect(result.remaining == 0 && result.stoppedBy == nil)
        #expect(drops.all.map { $0.0.eventId } == [staleImpression.eventId, unknown.eventId])
        #expect(drops.all.first?.1 == .tooOld)
        guard case .refused(let error)? = drops.all.last?.1 else {
            Issue.record("the unknown sheet was not refused: \(drops.all)")
            return
        }
        #expect(error.status == 404 || error.status == 400)
        let state = try await client.state()
        #expect(state.impressions.isEmpty)
        #expect(state.latches == [], "latched at 3, then released by the count of 1 that came after it")
        #expect(state.containers.map(\.count) == [1])
        #expect(await outbox.settlement(of: count.eventId) == .delivered(replayed: false))
    }

    /// A dismissal delivered 2 minutes late starts its cooldown from when it happened: with a 100 s
    /// cooldown the sheet presents again at once after a new count (it would be cooling down for
    /// another 100 s counted from the delivery). Without `occurredAt` it is cooling down.
    @Test func aLateDismissalCoolsDownFromWhenItHappened() async throws {
        for sendsTime in [true, false] {
            let live = try LiveSheetd()
            try await live.admin().putSheet(
                "offers",
                definition: SheetDefinitionInput(
                    kind: .cards, screen: "home", tab: "accounts", containerId: "offers-home", priority: 10, cooldownSeconds: 100))
            let client = Self.client(live.baseURL, sendsOccurredAt: sendsTime)
            try await client.reportCount(1, container: "offers-home")
            let outbox = try SheetdOutbox(file: URL(fileURLWithPath: live.directory.file("outbox.json")), client: client)
            let happened = Date().addingTimeInterval(-120)
            try await outbox.enqueue(SheetdEvent(.dismissal(sheetId: "offers", method: .swipe), occurredAt: happened))
            #expect(await outbox.flush().remaining == 0)
            try await client.reportCount(2, container: "offers-home")
            let decision = try await client.decision(for: SheetContext(screen: "home", tab: "accounts"))
            let at = try #require(try await client.state().lastDismissals.first?.at)
            if sendsTime {
                #expect(decision.present && decision.sheet?.id == "offers", "\(decision.trace)")
                #expect(at.hasPrefix(String(SheetdUserClient.rfc3339(happened).prefix(19))), "stored as it happened: \(at)")
            } else {
                #expect(decision.reason == .coolingDown, "\(decision.trace)")
            }
        }
    }

    /// The presenter's reports go through the outbox in order, and the dismissal's settlement lets the
    /// gate honour a new decision.
    @MainActor @Test func thePresenterReportsThroughTheOutbox() async throws {
        let directory = try TemporaryDirectory(prefix: "sheetd-outbox-driver")
        defer { directory.remove() }
        let fake = FakeSheetdClient()
        let outbox = try SheetdOutbox(file: URL(fileURLWithPath: directory.file("outbox.json")), client: fake)
        let driver = SheetdSheetDriver(client: fake, outbox: outbox)
        var presented: [SheetPresenter.Shown] = []
        driver.perform = { if case .present(let shown, _) = $0 { presented.append(shown) } }
        let decision = Decision.presenting(.sample(id: "offers"))
        driver.handle(.decision(decision))
        let shown = try #require(presented.first)
        driver.handle(.appeared(shown.id))
        driver.handle(.interactiveDismissalBegan(shown.id, .scrim))
        driver.handle(.gone(shown.id))
        await driver.reportsHandedOver()
        _ = await outbox.flush()
        #expect(fake.events == [.impression(sheetId: "offers"), .dismissal(sheetId: "offers", method: .scrim)])
        var changed = decision
        changed.trace = ["a new count"]
        for _ in 0..<100 where presented.count < 2 {
            driver.handle(.decision(changed))
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        #expect(presented.count == 2, "presented again once the dismissal was delivered and the decision changed")
    }
}

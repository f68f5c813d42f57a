import Foundation
import SheetdClient
import SheetdClientTesting
import Testing

/// The SheetdClientTesting fake: what an app's unit tests script and inspect, with no server.
@Suite struct FakeClientTests {
    static let home = SheetContext(screen: "home", tab: "accounts")

    /// Code written against the protocol, as an app's would be.
    static func showAndSwipe(_ client: any SheetdClientProtocol) async throws -> Decision {
        let decision = try await client.decision(for: home)
        if let sheet = decision.sheet {
            try await client.reportImpression(sheet.id)
            try await client.dismiss(sheet.id, method: .swipe)
        }
        return decision
    }

    /// Scripted decisions answer per context (a default for the others), and the events the code
    /// reports are recorded in order.
    @Test func scriptedDecisionsAndRecordedEvents() async throws {
        let fake = FakeSheetdClient()
        fake.setDecision(.presenting(.sample(id: "offers")), for: Self.home)
        let decision = try await Self.showAndSwipe(fake)
        #expect(decision.sheet?.id == "offers")
        #expect(try await fake.decision(for: SheetContext(screen: "settings")) == .noSheet)
        #expect(fake.requestedContexts == [Self.home, SheetContext(screen: "settings")])
        #expect(fake.events == [.impression(sheetId: "offers"), .dismissal(sheetId: "offers", method: .swipe)])
        try await fake.reportCount(3, container: "offers-home")
        #expect(fake.events.last == .count(container: "offers-home", count: 3, seq: nil, filter: nil))
        #expect(try await fake.state().containers == [UserState.Container(containerId: "offers-home", filter: "", count: 3)])
        fake.clearRecords()
        #expect(fake.events.isEmpty)
    }

    /// Live followers get the current decision, then each scripted change of their context only;
    /// ending the sequences ends them (with the error given).
    @Test func liveDecisionsFollowTheScript() async throws {
        let fake = FakeSheetdClient()
        var home = fake.decisions(for: Self.home).makeAsyncIterator()
        var other = fake.decisions(for: SheetContext(screen: "settings")).makeAsyncIterator()
        #expect(try await home.next() == .noSheet)
        #expect(try await other.next() == .noSheet)
        fake.setDecision(.presenting(.sample(id: "offers")), for: Self.home)
        #expect(try await home.next()?.sheet?.id == "offers")
        fake.setDecision(.presenting(.sample(id: "tips")))  // the default: settings follows it, home has its own
        #expect(try await other.next()?.sheet?.id == "tips")
        #expect(fake.liveFollowerCount == 2)
        fake.finishLiveDecisions(throwing: SheetdError(kind: .server, status: 403, message: "forbidden"))
        await #expect(throws: SheetdError.self) { try await home.next() }
        #expect(fake.liveFollowerCount == 0)
    }

    /// A reused eventId is answered as a replay with the first outcome and recorded once; scripted
    /// failures throw for the next calls only.
    @Test func replaysAndFailures() async throws {
        let fake = FakeSheetdClient()
        let first = try await fake.reportImpression("offers", eventId: "e1")
        let replay = try await fake.reportImpression("offers", eventId: "e1")
        #expect(!first.replayed && replay.replayed)
        #expect(replay.outcome == first.outcome)
        #expect(try await fake.reportImpression("offers").impressions == 2)
        #expect(fake.events == [.impression(sheetId: "offers"), .impression(sheetId: "offers")])

        fake.failNext(SheetdError(kind: .transport, message: "offline", urlError: URLError(.notConnectedToInternet)), times: 2)
        for _ in 0..<2 {
            let error = await #expect(throws: SheetdError.self) { try await fake.dismiss("offers", method: .swipe) }
            #expect(error?.urlError?.code == .notConnectedToInternet)
        }
        #expect(try await fake.dismiss("offers", method: .swipe).stack == [])
        #expect(fake.events.count == 3)
    }

    /// onEvent lets a test react as the server would: a dismissal stops the sheet presenting.
    @Test func onEventReactsLikeAServer() async throws {
        let fake = FakeSheetdClient(decision: .presenting(.sample(id: "offers")))
        fake.onEvent = { [weak fake] event in
            if case .dismissal = event { fake?.setDecision(.noSheet) }
        }
        var live = fake.decisions(for: Self.home).makeAsyncIterator()
        #expect(try await live.next()?.present == true)
        _ = try await Self.showAndSwipe(fake)
        #expect(try await live.next() == .noSheet)
        #expect(try await fake.decision(for: Self.home) == .noSheet)
    }
}

import Foundation
import SheetdAdmin
import SheetdClient
import TestSupport
import Testing

/// The client's campaign calls against a live sheetd: impressions, segments, settings, stats.
@Suite struct ClientCampaignTests {
    @Test func campaignCallsWorkAgainstALiveServer() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        let admin = live.admin()
        let client = live.client("u1")

        let first = try await client.reportImpression("offers", eventId: "impression-1")
        #expect(first.outcome == ImpressionOutcome(sheetId: "offers", impressions: 1))
        #expect(!first.replayed)
        let replay = try await client.reportImpression("offers", eventId: "impression-1")
        #expect(replay.replayed)
        #expect(replay.outcome.impressions == 1)
        #expect(try await client.reportImpression("offers").outcome.impressions == 2)
        do {
            _ = try await client.reportImpression("no-such-sheet")
            Issue.record("an unknown sheet must throw")
        } catch let error as SheetdError {
            #expect(error.status == 404)
        }

        #expect(try await client.segments() == [])
        #expect(try await admin.setSegments(["vip", "beta", "vip"], of: "u1") == ["beta", "vip"])
        #expect(try await client.segments() == ["beta", "vip"])
        #expect(try await admin.segments(of: "u1") == ["beta", "vip"])
        do {
            try await admin.setSegments(["not valid"], of: "u1")
            Issue.record("an invalid segment must throw")
        } catch let error as SheetdError {
            #expect(error.status == 400)
            #expect(error.invalidParams.map(\.name) == ["segments[0]"])
        }

        let state = try await client.state()
        #expect(state.segments == ["beta", "vip"])
        #expect(state.impressions.map(\.sheetId) == ["offers"])
        #expect(state.impressions.first?.total == 2)

        #expect(try await client.settings() == GlobalSettings())
        let settings = GlobalSettings(globalCap: .init(max: 3, periodSeconds: 86_400), minIntervalSeconds: 600)
        #expect(try await admin.putSettings(settings) == settings)
        #expect(try await client.settings() == settings)
        #expect(try await admin.putSettings(GlobalSettings()) == GlobalSettings(), "nil members turn the rules off")
        #expect(try await admin.settings() == GlobalSettings())

        _ = try await client.dismiss("offers", method: .swipe)
        let stats = try await admin.stats(of: "offers")
        #expect(stats.sheetId == "offers")
        #expect(stats.since == nil)
        #expect(stats.impressions == 2)
        #expect(stats.uniqueUsers == 1)
        #expect(stats.dismissals == SheetStats.Dismissals(swipe: 1))
        let future = try await admin.stats(of: "offers", since: Date().addingTimeInterval(3600))
        #expect(future.impressions == 0)
        #expect(future.since != nil)
        #expect(try await admin.stats(of: "offers", since: Date(timeIntervalSince1970: 0)).impressions == 2)
    }
}

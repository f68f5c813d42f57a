import Foundation
import SheetdAdmin
import SheetdClient
import SheetdClientTesting
import TestSupport
import Testing

/// The client's experiment calls against a live sheetd: the arm and payload on the decision, a
/// conversion, the admin's pins and results; and the fake's conversion.
@Suite struct ClientExperimentTests {
    static let homeAccounts = SheetContext(screen: "home", tab: "accounts", platform: .ios)

    @Test func experimentCallsWorkAgainstALiveServer() async throws {
        let live = try LiveSheetd()
        let admin = live.admin()
        let experiment = ExperimentDefinition(
            id: "offers-copy", status: "running",
            arms: [
                ExperimentArm(id: "control", weight: 1, holdout: true),
                ExperimentArm(id: "b", weight: 1, overrides: ["size": .string("large")], payload: ["copy": .string("B")]),
            ], conversionWindowSeconds: 3600)
        let put = try await admin.putSheet(
            "offers",
            definition: SheetDefinitionInput(kind: .cards, screen: "home", tab: "accounts", containerId: "offers-home", experiment: experiment))
        #expect(put.definition.experiment?.arms.map(\.id) == ["control", "b"])
        // A pin makes the arm certain whatever the bucket.
        let pin = try await admin.pin("u1", to: "b", in: "offers-copy")
        #expect(pin.arm == "b")
        let client = live.client("u1")
        try await client.reportCount(1, container: "offers-home")
        let sheet = try #require(try await client.decision(for: Self.homeAccounts).sheet)
        #expect(sheet.experiment == PresentedExperiment(id: "offers-copy", arm: "b", payload: ["copy": .string("B")]))
        #expect(sheet.variant == .large)
        let conversion = try await client.reportConversion("offers", goal: "signup")
        #expect(conversion.outcome.experimentId == "offers-copy")
        #expect(conversion.outcome.counted == false, "a pinned user's conversion counts nowhere")
        #expect(try await admin.pin("u1", to: nil, in: "offers-copy").arm == nil)
        let results = try await admin.results(of: "offers-copy")
        #expect(results.arms.map(\.id) == ["control", "b"])
        #expect(results.comparisons.map(\.baseline) == ["control"])
        #expect(results.unattributed == 0)
    }

    @Test func theFakeRecordsConversions() async throws {
        var sheet = SheetPresentation.sample(id: "offers")
        sheet.experiment = PresentedExperiment(id: "offers-copy", arm: "b")
        let fake = FakeSheetdClient(decision: .presenting(sheet))
        let outcome = try await fake.reportConversion("offers", goal: "signup").outcome
        #expect(outcome == ConversionOutcome(sheetId: "offers", experimentId: "offers-copy", goal: "signup", counted: true, arm: "b"))
        #expect(fake.events == [.conversion(sheetId: "offers", goal: "signup")])
    }
}

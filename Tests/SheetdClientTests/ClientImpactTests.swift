import Foundation
import SheetdAdmin
import SheetdClient
import Testing

/// `SheetdAdminClient.catalogImpact(of:users:from:)` against a live sheetd.
@Suite struct ClientImpactTests {
    /// Two users see the offers sheet; the proposal makes it large and moves it to another tab:
    /// on `accounts` it is hidden for both, on `cards` shown for both (iOS and Android each).
    @Test func theImpactOfAProposalComesBackTyped() async throws {
        let live = try LiveSheetd()
        try await live.installCatalog()
        for user in ["u1", "u2"] { _ = try await live.client(user).reportCount(2, container: "offers-home") }
        let admin = live.admin()
        let proposed = CatalogFile(sheets: [
            SheetDefinitionInput(id: "offers", kind: .cards, size: .large, screen: "home", tab: "cards", containerId: "offers-home", priority: 10)
        ])
        let impact = try await admin.catalogImpact(of: proposed, users: 10, from: "u1")
        #expect(impact.sample.users == 2 && impact.sample.from == "u1" && impact.sample.complete)
        #expect(impact.sheets.changed == ["offers"])
        #expect(impact.sheets.removed == ["filters", "offer-detail"])
        #expect(Set(impact.contexts.map { "\($0.screen)/\($0.tab ?? "-")" }) == ["home/accounts", "home/cards", "transactions/-"])
        let byKind = Dictionary(uniqueKeysWithValues: impact.changes.map { ($0.change, $0.decisions) })
        #expect(byKind["hidden"] == 4)
        #expect(byKind["shown"] == 4)
        #expect(impact.changed == 8)
        let shown = try #require(impact.changes.first { $0.change == "shown" }?.examples.first)
        #expect(shown.tab == "cards" && shown.after.sheetId == "offers" && shown.after.variant == .large && !shown.before.present)
        #expect(impact.transitions.contains { $0.from == "offers" && $0.to == nil && $0.decisions == 4 })

        do {
            _ = try await admin.catalogImpact(of: CatalogFile(sheets: [SheetDefinitionInput(kind: .cards, screen: "home")]))
            Issue.record("a definition without id and container must throw")
        } catch let error as SheetdError {
            #expect(error.status == 400)
            #expect(error.invalidParams.map(\.name).contains("sheets[0].containerId"))
        }
    }
}

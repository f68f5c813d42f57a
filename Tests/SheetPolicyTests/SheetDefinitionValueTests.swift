import Testing

@testable import SheetPolicy

/// `SheetDefinition` shares its fields in one box between copies: it must still behave as a value,
/// and what it derives from its fields (the container key, the "no cards" trace line) must follow
/// every edit.
@Suite struct SheetDefinitionValueTests {
    @Test func editingACopyLeavesTheOriginal() {
        let original = SheetDefinition(id: "offers", kind: .cards, screen: "home", containerId: "offers-home", priority: 5)
        var copy = original
        #expect(copy == original)
        copy.priority = 9
        copy.title = "Offers"
        #expect(original.priority == 5 && original.title == nil)
        #expect(copy.priority == 9 && copy.title == "Offers")
        #expect(copy != original)
        var again = original
        again.priority = 9
        again.title = "Offers"
        #expect(again == copy, "equal fields compare equal across boxes")
    }

    @Test func derivedValuesFollowTheFields() {
        var sheet = SheetDefinition(id: "offers", kind: .cards, screen: "home", containerId: "offers-home")
        #expect(sheet.containerKey == ContainerKey(containerId: "offers-home"))
        #expect(sheet.noCardsLine == "eligibility: 'offers' has no cards (container 'offers-home')")
        sheet.containerFilter = "category:security"
        #expect(sheet.containerKey == ContainerKey(containerId: "offers-home", filter: "category:security"))
        #expect(sheet.noCardsLine == "eligibility: 'offers' has no cards (container 'offers-home' filter 'category:security')")
        sheet.id = "alerts"
        sheet.containerId = nil
        #expect(sheet.containerKey == nil)
        #expect(sheet.noCardsLine == "eligibility: 'alerts' has no cards (no container)")
    }

    /// The decision's trace line for a card sheet without cards is the one the definition holds.
    @Test func aDecisionTracesTheDefinitionsLine() {
        let sheet = SheetDefinition(id: "offers", kind: .cards, screen: "home", containerId: "offers-home")
        let decision = SheetPolicy.decide(
            catalog: Catalog([sheet]), state: UserState(), context: ClientContext(screen: "home", platform: .ios),
            now: Timestamp(millisecondsSince1970: 0))
        #expect(decision.trace.contains(sheet.noCardsLine))
        #expect(decision.reason == .noCards)
    }
}

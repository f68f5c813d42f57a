import SheetPolicy
import Testing

/// The design documents' refusals and warnings on definitions, and how the policy renders a definition
/// stored before a refusal existed.
struct DesignRulesTests {
    /// 003 strict: "no top-right close button"; 000 action sheets: "Don't use an explicit button for dismissal".
    @Test func forbiddenCombinationsAreViolations() {
        #expect(Fixtures.legacyStrict.designViolations.map(\.field) == ["dismissAffordance"])
        let action = SheetDefinition(id: "a", kind: .action, screen: "s", dismissAffordance: .cancelButton)
        #expect(action.designViolations.map(\.field) == ["dismissAffordance"])
        let actionNone = SheetDefinition(id: "a", kind: .action, screen: "s", dismissAffordance: DismissAffordance.none)
        #expect(actionNone.designViolations.isEmpty)
        for sheet in Fixtures.all where sheet.id != Fixtures.legacyStrict.id { #expect(sheet.designViolations.isEmpty, "\(sheet.id)") }
    }

    /// 003: "Don't use .flexible for forms / inputs"; 000: "Use a Large Size sheet when presenting multiple inputs".
    @Test func adviceIsAWarning() {
        #expect(Fixtures.otp.designWarnings.map(\.field) == ["style"])
        #expect(Fixtures.filters.designWarnings.isEmpty)
        let crowded = SheetDefinition(
            id: "f", kind: .input, size: .content, style: .strict, title: "T", screen: "s", inputCount: 3)
        #expect(crowded.designWarnings.map(\.field) == ["size"])
    }
}

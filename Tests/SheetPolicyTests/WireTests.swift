import JSONKit
import SheetPolicy
import SheetWire
import Testing

/// The hand-rendered decision body (`SheetWire`) against the member-by-member writer.
struct WireTests {
    /// Enum raw values are copied into the body without an escape scan: none of them may hold a byte
    /// JSON escapes.
    @Test func enumRawValuesNeedNoEscaping() {
        let rawValues: [String] =
            DecisionReason.allCases.map(\.rawValue) + SheetKind.allCases.map(\.rawValue)
            + SheetSize.allCases.map(\.rawValue) + DetentID.allCases.map(\.rawValue)
            + DismissAffordance.allCases.map(\.rawValue) + KeyboardAdjustment.allCases.map(\.rawValue)
            + ButtonSize.allCases.map(\.rawValue) + PresentationStyle.allCases.map(\.rawValue)
            + TransitionMode.allCases.map(\.rawValue) + ModalPresentationStyle.allCases.map(\.rawValue)
            + SwiftUIDetent.Kind.allCases.map(\.rawValue) + SwiftUIBackgroundInteraction.Kind.allCases.map(\.rawValue)
            + SwiftUISheetConfiguration.Visibility.allCases.map(\.rawValue)
            + SwiftUISheetConfiguration.ContentInteraction.allCases.map(\.rawValue)
            + HiddenChange.allCases.map(\.rawValue) + AndroidSheetValue.allCases.map(\.rawValue)
        for raw in rawValues {
            #expect(String(decoding: JSONWriter.encode(raw), as: UTF8.self) == "\"" + raw + "\"")
        }
    }

    /// A decision written as a member of a larger document carries the body's bytes, and each
    /// presentation written on its own is the bytes the body holds for it.
    @Test(arguments: GoldenCase.all)
    func embeddedDecisionMatchesTheBody(_ golden: GoldenCase) {
        var state = fold(golden.events, catalog: golden.catalog)
        if let campaign = golden.campaign { state.campaign = campaign }
        let decision = SheetPolicy.decide(catalog: golden.catalog, state: state, context: golden.context, now: golden.now)
        let body = String(decoding: decision.jsonBytes(), as: UTF8.self)

        var writer = JSONWriter()
        writer.object { o in
            o.member("before", 1)
            o.member("decision", decision)
            o.member("after", [decision])
        }
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"before":1,"decision":"# + body + #","after":["# + body + "]}")

        for presentation in decision.stack {
            let alone = String(decoding: JSONWriter.encode(presentation), as: UTF8.self)
            #expect(body.contains(alone))
        }
        if let sheet = decision.sheet {
            #expect(body.contains(#","sheet":"# + String(decoding: JSONWriter.encode(sheet), as: UTF8.self) + #","yielded":"#))
        }
    }
}

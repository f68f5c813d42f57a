import Foundation
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

    /// Each presentation rendered on its own is the bytes the body holds for it, and `sheet` is the
    /// top of `stack` again.
    @Test(arguments: GoldenCase.all)
    func presentationsAloneMatchTheBody(_ golden: GoldenCase) {
        var state = fold(golden.events, catalog: golden.catalog)
        if let campaign = golden.campaign { state.campaign = campaign }
        let decision = SheetPolicy.decide(catalog: golden.catalog, state: state, context: golden.context, now: golden.now)
        let body = String(decoding: decision.jsonBytes(), as: UTF8.self)

        func alone(_ presentation: Presentation) -> String {
            var out = JSONBuffer(capacity: 1600)
            presentation.write(to: &out)
            return String(decoding: out.bytes, as: UTF8.self)
        }
        for presentation in decision.stack {
            #expect(body.contains(alone(presentation)))
        }
        if let sheet = decision.sheet {
            #expect(body.contains(#","sheet":"# + alone(sheet) + #","yielded":"#))
        }
    }

    /// The minimal body (`Prefer: return=minimal`) is the full one without `sheet` and `trace`, the
    /// other members in the same order and byte for byte.
    @Test(arguments: GoldenCase.all)
    func minimalBodyLeavesOutSheetAndTrace(_ golden: GoldenCase) throws {
        var state = fold(golden.events, catalog: golden.catalog)
        if let campaign = golden.campaign { state.campaign = campaign }
        let decision = SheetPolicy.decide(catalog: golden.catalog, state: state, context: golden.context, now: golden.now)
        let full = decision.jsonBytes()
        let minimal = String(decoding: Decision.minimalBody(fromFull: full), as: UTF8.self)
        var out = JSONBuffer(capacity: 4096)
        out.append("{\"present\":")
        out.bool(decision.present)
        out.append(",\"reason\":")
        out.safeString(decision.reason.rawValue)
        out.append(",\"stack\":[")
        for (index, presentation) in decision.stack.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            presentation.write(to: &out)
        }
        out.append("]")
        let prefix = String(decoding: out.bytes, as: UTF8.self)
        #expect(minimal.hasPrefix(prefix))
        #expect(!minimal.contains(#""sheet":"#) && !minimal.contains(#""trace":"#))
        let text = String(decoding: full, as: UTF8.self)
        let tail = try #require(text.range(of: #","yielded":"#)).lowerBound
        let trace = try #require(text.range(of: #","trace":"#)).lowerBound
        #expect(minimal == prefix + String(text[tail..<trace]) + "}")
    }
}

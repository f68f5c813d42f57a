// SwiftUI adapter: compiled only where SwiftUI exists (not on Linux, so never built by `make test`, and
// not compiled by anyone yet: review it against the SwiftUI documentation). It only copies the tested
// SheetPresentationPlan.SwiftUI onto SwiftUI's presentation modifiers. Keep it that short.
#if canImport(SwiftUI) && canImport(UIKit) && !os(watchOS)
public import SwiftUI

@available(iOS 16.4, macCatalyst 16.4, *)
extension SheetPresentationPlan.Detent {
    /// The SwiftUI detent (`.custom` is `.height`).
    public var presentationDetent: PresentationDetent {
        switch self {
        case .medium: .medium
        case .large: .large
        case .custom(_, let height): .height(CGFloat(height))
        }
    }
}

@available(iOS 16.4, macCatalyst 16.4, *)
extension View {
    /// Presents `content` as a sheet while `decision` presents one, with the `ios.swiftui` modifiers:
    /// `presentationDetents(_:selection:)`, `presentationDragIndicator`, `presentationBackgroundInteraction`,
    /// `presentationContentInteraction`, `presentationCornerRadius`, `interactiveDismissDisabled`.
    /// `onDismiss` gets the sheet the user dismissed (report it with ``SheetdClient/dismiss(_:method:eventId:)``).
    public func sheetd<Content: View>(
        _ decision: SheetDecision?, onDismiss: @escaping (SheetPresentation) -> Void = { _ in },
        @ViewBuilder content: @escaping (SheetPresentation) -> Content
    ) -> some View {
        modifier(SheetdModifier(decision: decision, onDismiss: onDismiss, sheetContent: content))
    }
}

@available(iOS 16.4, macCatalyst 16.4, *)
private struct SheetdModifier<SheetContent: View>: ViewModifier {
    let decision: SheetDecision?
    let onDismiss: (SheetPresentation) -> Void
    let sheetContent: (SheetPresentation) -> SheetContent
    @State private var selection: PresentationDetent = .large

    func body(content: Content) -> some View {
        let sheet = decision?.present == true ? decision?.sheet : nil
        let plan = sheet.flatMap(SheetPresentationPlan.init)?.swiftUI
        return content.sheet(isPresented: Binding(get: { plan != nil }, set: { shown in if !shown, let sheet { onDismiss(sheet) } })) {
            if let sheet, let plan {
                sheetContent(sheet)
                    .presentationDetents(Set(plan.detents.map(\.presentationDetent)), selection: $selection)
                    .presentationDragIndicator(plan.dragIndicatorVisible ? .visible : .hidden)
                    .presentationBackgroundInteraction(
                        plan.backgroundInteractionUpThrough.map { .enabled(upThrough: $0.presentationDetent) } ?? .disabled
                    )
                    .presentationContentInteraction(plan.contentInteractionResizes ? .resizes : .scrolls)
                    .presentationCornerRadius(plan.cornerRadius.map { CGFloat($0) })
                    .interactiveDismissDisabled(plan.interactiveDismissDisabled)
                    .task(id: plan.selection) { selection = plan.selection.presentationDetent }
            }
        }
    }
}
#endif

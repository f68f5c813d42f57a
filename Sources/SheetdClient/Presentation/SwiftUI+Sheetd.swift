// SwiftUI adapter: compiled only where SwiftUI exists (not on Linux, so not built by `make test`). It
// only copies the tested SheetPresentationPlan onto SwiftUI's presentation modifiers; keep it that short.
#if canImport(SwiftUI) && canImport(UIKit) && !os(watchOS)
import SwiftUI

@available(iOS 16.4, macCatalyst 16.4, visionOS 1.0, *)
extension SheetPresentationPlan.Detent {
    /// The SwiftUI detent of a plan's detent.
    public var presentationDetent: PresentationDetent {
        switch self {
        case .medium: .medium
        case .large: .large
        case .custom(_, let height): .height(CGFloat(height))
        }
    }
}

@available(iOS 16.4, macCatalyst 16.4, visionOS 1.0, *)
extension View {
    /// Presents `content` as a sheet while `decision` presents one, set up as its `ios` block says:
    /// `presentationDetents`, `presentationDragIndicator`, `interactiveDismissDisabled`,
    /// `presentationBackgroundInteraction`, `presentationCornerRadius`. `onDismiss` gets the sheet
    /// the user dismissed (report it with ``SheetdClient/dismiss(_:method:eventId:)``).
    public func sheetd<Content: View>(
        _ decision: SheetDecision?, onDismiss: @escaping (SheetPresentation) -> Void = { _ in },
        @ViewBuilder content: @escaping (SheetPresentation) -> Content
    ) -> some View {
        let sheet = decision?.present == true ? decision?.sheet : nil
        let plan = sheet.flatMap(SheetPresentationPlan.init)
        return self.sheet(
            isPresented: Binding(get: { plan != nil }, set: { shown in if !shown, let sheet { onDismiss(sheet) } })
        ) {
            if let sheet, let plan {
                content(sheet)
                    .presentationDetents(Set(plan.detents.map(\.presentationDetent)))
                    .presentationDragIndicator(plan.prefersGrabberVisible ? .visible : .hidden)
                    .interactiveDismissDisabled(plan.isModalInPresentation)
                    .presentationBackgroundInteraction(
                        plan.largestUndimmedDetent.map { .enabled(upThrough: $0.presentationDetent) } ?? .disabled)
                    .presentationCornerRadius(plan.preferredCornerRadius.map { CGFloat($0) })
                    .presentationContentInteraction(plan.prefersScrollingExpandsWhenScrolledToEdge ? .resizes : .scrolls)
            }
        }
    }
}
#endif

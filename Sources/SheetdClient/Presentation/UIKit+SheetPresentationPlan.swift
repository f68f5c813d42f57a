// UIKit adapter: compiled only where UIKit exists (not on Linux, so not built by `make test`). It only
// copies the tested SheetPresentationPlan onto UISheetPresentationController; keep it that short.
#if canImport(UIKit) && !os(watchOS)
import UIKit

@available(iOS 16.0, macCatalyst 16.0, tvOS 16.0, visionOS 1.0, *)
extension UISheetPresentationController.Detent {
    /// The UIKit detent of a plan's detent.
    @MainActor
    public static func sheetd(_ detent: SheetPresentationPlan.Detent) -> UISheetPresentationController.Detent {
        switch detent {
        case .medium: .medium()
        case .large: .large()
        case .custom(let identifier, let height):
            .custom(identifier: .init(identifier)) { context in min(CGFloat(height), context.maximumDetentValue) }
        }
    }
}

@available(iOS 16.0, macCatalyst 16.0, tvOS 16.0, visionOS 1.0, *)
extension SheetPresentationPlan.Detent {
    /// The identifier UIKit knows this detent by.
    @MainActor
    public var uiKitIdentifier: UISheetPresentationController.Detent.Identifier {
        switch self {
        case .medium: .medium
        case .large: .large
        case .custom(let identifier, _): .init(identifier)
        }
    }
}

@available(iOS 16.0, macCatalyst 16.0, tvOS 16.0, visionOS 1.0, *)
extension UIViewController {
    /// Applies a plan to this view controller before it is presented: the presentation style,
    /// `isModalInPresentation`, and every setting of its `sheetPresentationController`.
    @MainActor
    public func applySheetd(_ plan: SheetPresentationPlan) {
        modalPresentationStyle = plan.style == .popover ? .popover : .pageSheet
        isModalInPresentation = plan.isModalInPresentation
        let sheet = plan.style == .popover
            ? popoverPresentationController?.adaptiveSheetPresentationController : sheetPresentationController
        sheet?.applySheetd(plan)
    }
}

@available(iOS 16.0, macCatalyst 16.0, tvOS 16.0, visionOS 1.0, *)
extension UISheetPresentationController {
    /// Applies every setting of a plan (inside `animateChanges` when the sheet is already on screen).
    @MainActor
    public func applySheetd(_ plan: SheetPresentationPlan) {
        detents = plan.detents.map { .sheetd($0) }
        selectedDetentIdentifier = plan.selectedDetent.uiKitIdentifier
        largestUndimmedDetentIdentifier = plan.largestUndimmedDetent?.uiKitIdentifier
        prefersGrabberVisible = plan.prefersGrabberVisible
        prefersScrollingExpandsWhenScrolledToEdge = plan.prefersScrollingExpandsWhenScrolledToEdge
        prefersEdgeAttachedInCompactHeight = plan.prefersEdgeAttachedInCompactHeight || plan.style == .edgeAttached
        widthFollowsPreferredContentSizeWhenEdgeAttached = plan.widthFollowsPreferredContentSizeWhenEdgeAttached
        preferredCornerRadius = plan.preferredCornerRadius.map { CGFloat($0) }
    }
}
#endif

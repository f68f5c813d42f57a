// UIKit adapter: compiled only where UIKit exists (not on Linux, so never built by `make test`, and
// not compiled by anyone yet: review it against the UIKit documentation). It only copies the tested
// SheetPresentationPlan onto UIKit; every decision is made in the plan. Keep it that short.
#if canImport(UIKit) && !os(watchOS)
public import UIKit

@available(iOS 16.0, macCatalyst 16.0, *)
extension SheetPresentationPlan.Detent {
    /// The UIKit detent.
    @MainActor public var uiKitDetent: UISheetPresentationController.Detent {
        switch self {
        case .medium: .medium()
        case .large: .large()
        case .custom(let identifier, let height):
            .custom(identifier: .init(identifier)) { context in min(CGFloat(height), context.maximumDetentValue) }
        }
    }

    /// The identifier UIKit knows the detent by.
    @MainActor public var uiKitIdentifier: UISheetPresentationController.Detent.Identifier {
        switch self {
        case .medium: .medium
        case .large: .large
        case .custom(let identifier, _): .init(identifier)
        }
    }
}

@available(iOS 16.0, macCatalyst 16.0, *)
extension UIViewController {
    /// Sets this view controller up to be presented as the plan says: the presentation style (a
    /// popover is anchored to `source`), `isModalInPresentation`, every sheet setting, and `delegate`
    /// as the presentation controller's delegate when the plan needs one (see ``SheetdDismissalDelegate``).
    @MainActor public func applySheetd(_ plan: SheetPresentationPlan, source: UIView? = nil, delegate: SheetdDismissalDelegate? = nil) {
        let sheet: UISheetPresentationController?
        switch plan.modalPresentationStyle {
        case .popover:
            modalPresentationStyle = .popover
            popoverPresentationController?.sourceView = source
            sheet = popoverPresentationController?.adaptiveSheetPresentationController
        case .formSheet:
            modalPresentationStyle = .formSheet
            sheet = sheetPresentationController
        default:
            modalPresentationStyle = .pageSheet
            sheet = sheetPresentationController
        }
        isModalInPresentation = plan.isModalInPresentation
        if let sheet {
            sheet.detents = plan.detents.map(\.uiKitDetent)
            sheet.selectedDetentIdentifier = plan.selectedDetent.uiKitIdentifier
            sheet.largestUndimmedDetentIdentifier = plan.largestUndimmedDetent?.uiKitIdentifier
            sheet.prefersGrabberVisible = plan.prefersGrabberVisible
            sheet.prefersScrollingExpandsWhenScrolledToEdge = plan.prefersScrollingExpandsWhenScrolledToEdge
            sheet.prefersEdgeAttachedInCompactHeight = plan.prefersEdgeAttachedInCompactHeight
            sheet.widthFollowsPreferredContentSizeWhenEdgeAttached = plan.widthFollowsPreferredContentSizeWhenEdgeAttached
            if let radius = plan.preferredCornerRadius { sheet.preferredCornerRadius = CGFloat(radius) }
        }
        if plan.needsDismissalDelegate, let delegate {
            delegate.plan = plan
            presentationController?.delegate = delegate
        }
    }
}

/// Decides swipe and scrim-tap dismissals the plan allows one at a time, and asks before dismissing
/// unsaved input. Keep a strong reference to it while the sheet is presented (UIKit holds it weakly).
@available(iOS 16.0, macCatalyst 16.0, *)
@MainActor public final class SheetdDismissalDelegate: NSObject, UIAdaptivePresentationControllerDelegate {
    /// The plan whose dismissal it applies (set by ``UIKit/UIViewController/applySheetd(_:source:delegate:)``).
    public var plan: SheetPresentationPlan?
    /// Called when a dismissal must be confirmed; dismiss the sheet yourself when the user confirms.
    public var confirm: (UIViewController) -> Void
    /// A delegate; `confirm` shows the confirmation dialog over the presented view controller.
    public init(confirm: @escaping (UIViewController) -> Void) { self.confirm = confirm }

    /// The plan's answer for the gesture under way: UIKit does not say which one asks, so a pan in
    /// progress on the sheet's views means a swipe.
    public func presentationControllerShouldDismiss(_ controller: UIPresentationController) -> Bool {
        guard let plan else { return true }
        if plan.confirmBeforeDismiss { return false }
        var view = controller.presentedView
        var dragging = false
        while let v = view, v !== controller.containerView, !dragging {
            dragging = v.gestureRecognizers?.contains { $0 is UIPanGestureRecognizer && [.began, .changed].contains($0.state) } == true
            view = v.superview
        }
        return plan.shouldDismiss(whileDragging: dragging)
    }

    /// An attempt the sheet refused: ask, when the plan says a dismissal must be confirmed.
    public func presentationControllerDidAttemptToDismiss(_ controller: UIPresentationController) {
        if plan?.confirmBeforeDismiss == true { confirm(controller.presentedViewController) }
    }
}
#endif

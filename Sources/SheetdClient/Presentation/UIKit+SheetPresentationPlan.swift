// UIKit adapter: compiled only on iOS (and Mac Catalyst), so never built by `make test` on Linux and
// not compiled by anyone yet: review it against the UIKit documentation. It copies the tested
// SheetPresentationPlan onto UIKit and feeds UIKit's callbacks to the tested SheetdSheetSession, which
// decides what to report. Keep it that short.
#if os(iOS)
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
    /// Presents `content` as `sheet` says and reports what happens through `client`: the impression
    /// once it is on screen, its dismissal with the real method (swipe, scrim tap, the control you
    /// close it with through ``dismissSheetd(with:animated:completion:)``, or programmatic).
    /// Returns the presentation delegate (kept alive by `content`); set its
    /// ``SheetdPresentationDelegate/forwardingDelegate`` to get UIKit's callbacks too.
    @MainActor @discardableResult
    public func presentSheetd(
        _ content: UIViewController, sheet: SheetPresentation, client: any SheetdClientProtocol, source: UIView? = nil,
        animated: Bool = true, confirm: ((UIViewController) -> Void)? = nil, onError: @escaping @Sendable (any Error) -> Void = { _ in }
    ) -> SheetdPresentationDelegate {
        let delegate = SheetdPresentationDelegate(session: SheetdSheetSession(sheet: sheet, client: client, onError: onError), confirm: confirm)
        if let plan = delegate.session.plan { content.applySheetd(plan, source: source, delegate: delegate) }
        content.presentationController?.delegate = delegate
        objc_setAssociatedObject(content, &sheetdDelegateKey, delegate, .OBJC_ASSOCIATION_RETAIN_NONATOMIC)  // UIKit holds it weakly
        present(content, animated: animated) { delegate.session.appeared() }
        return delegate
    }

    /// Closes this sheet (presented with ``presentSheetd(_:sheet:client:source:animated:confirm:onError:)``)
    /// and reports the dismissal with `method`: `closeButton`, `cancelButton`, `action`, or
    /// `programmatic` when the app closes it (it does not latch).
    @MainActor public func dismissSheetd(with method: DismissalMethod = .programmatic, animated: Bool = true, completion: (() -> Void)? = nil) {
        let session = (objc_getAssociatedObject(self, &sheetdDelegateKey) as? SheetdPresentationDelegate)?.session
        session?.willClose(with: method)
        dismiss(animated: animated) {
            session?.dismissed(interactive: false)
            completion?()
        }
    }

    /// Sets this view controller up to be presented as the plan says: the presentation style (a
    /// popover is anchored to `source`), `isModalInPresentation`, every sheet setting, and `delegate`
    /// as the presentation controller's delegate.
    @MainActor public func applySheetd(_ plan: SheetPresentationPlan, source: UIView? = nil, delegate: SheetdPresentationDelegate? = nil) {
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
        if let delegate { presentationController?.delegate = delegate }
    }
}

/// The key of the delegate a presented sheet keeps (its address is the key; never read or written).
nonisolated(unsafe) private var sheetdDelegateKey: UInt8 = 0

/// The presentation controller's delegate of a sheetd sheet: answers which gestures may dismiss (the
/// plan's), asks before dismissing unsaved input, and tells the session how the sheet ended.
///
/// Not `final`: subclass it and call `super`, or set ``forwardingDelegate`` to keep your own
/// `presentationControllerDidDismiss` and friends.
@available(iOS 16.0, macCatalyst 16.0, *)
@MainActor open class SheetdPresentationDelegate: NSObject, UIAdaptivePresentationControllerDelegate {
    /// What this presentation reports.
    public let session: SheetdSheetSession
    /// Called when a dismissal must be confirmed; dismiss the sheet yourself (``UIKit/UIViewController/dismissSheetd(with:animated:completion:)``) when the user confirms.
    public var confirm: ((UIViewController) -> Void)?
    /// Your delegate: gets every callback after this one (and may refuse a dismissal the plan allows).
    public weak var forwardingDelegate: (any UIAdaptivePresentationControllerDelegate)?

    /// A delegate for `session`.
    public init(session: SheetdSheetSession, confirm: ((UIViewController) -> Void)? = nil) {
        self.session = session
        self.confirm = confirm
    }

    /// The plan's answer for the gesture under way (and yours, when you refuse).
    open func presentationControllerShouldDismiss(_ controller: UIPresentationController) -> Bool {
        guard let plan = session.plan else { return true }
        if plan.confirmBeforeDismiss { return false }  // presentationControllerDidAttemptToDismiss asks
        let allowed = plan.shouldDismiss(whileDragging: Self.isDragging(controller))
        return allowed && forwardingDelegate?.presentationControllerShouldDismiss?(controller) != false
    }

    /// An interactive dismissal began: a swipe when the sheet's pan is under way, else a scrim tap.
    open func presentationControllerWillDismiss(_ controller: UIPresentationController) {
        session.interactiveDismissalBegan(dragging: Self.isDragging(controller))
        forwardingDelegate?.presentationControllerWillDismiss?(controller)
    }

    /// The user dismissed the sheet: reports it with the method observed.
    open func presentationControllerDidDismiss(_ controller: UIPresentationController) {
        session.dismissed(interactive: true)
        forwardingDelegate?.presentationControllerDidDismiss?(controller)
    }

    /// An attempt the sheet refused: ask, when the plan says a dismissal must be confirmed.
    open func presentationControllerDidAttemptToDismiss(_ controller: UIPresentationController) {
        if session.plan?.confirmBeforeDismiss == true { confirm?(controller.presentedViewController) }
        forwardingDelegate?.presentationControllerDidAttemptToDismiss?(controller)
    }

    /// UIKit does not say which gesture asks: a pan in progress on the sheet's views means a swipe.
    static func isDragging(_ controller: UIPresentationController) -> Bool {
        var view = controller.presentedView
        while let v = view, v !== controller.containerView {
            if v.gestureRecognizers?.contains(where: { $0 is UIPanGestureRecognizer && [.began, .changed].contains($0.state) }) == true {
                return true
            }
            view = v.superview
        }
        return false
    }
}
#endif

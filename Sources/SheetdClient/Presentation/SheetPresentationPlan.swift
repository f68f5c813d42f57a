/// Exactly how to present a sheet on iOS, in `UISheetPresentationController`'s and SwiftUI's terms,
/// built from a decision's `ios` block.
///
/// Pure and platform-independent (tested on Linux): the UIKit and SwiftUI adapters only copy its
/// members onto the system API. Values a newer server adds that this client does not know (a detent
/// identifier, a presentation style) are left out or replaced by the nearest known one, never a crash.
/// Members an older server does not send (`modalPresentationStyle`, `dismissal`, `swiftui`) are
/// derived from the others as that server meant them.
public struct SheetPresentationPlan: Sendable, Equatable {
    /// One detent of the plan.
    public enum Detent: Sendable, Hashable {
        /// The system medium detent (about half the screen).
        case medium
        /// The system large detent (full height).
        case large
        /// A custom detent of a fixed height in points (`content`: the measured content height).
        case custom(identifier: String, height: Double)

        /// sheetd's identifier of the detent (`medium`, `large`, `content`).
        public var identifier: String {
            switch self {
            case .medium: "medium"
            case .large: "large"
            case .custom(let identifier, _): identifier
            }
        }
    }

    /// Which gestures dismiss the sheet, and whether a presentation-controller delegate must decide.
    public struct Dismissal: Sendable, Equatable {
        /// A swipe down dismisses.
        public var swipe: Bool
        /// A scrim tap dismisses.
        public var tapScrim: Bool
        /// `isModalInPresentation` refuses both gestures together, so when only one may dismiss a
        /// `UIAdaptivePresentationControllerDelegate` decides (see ``SheetPresentationPlan/shouldDismiss(whileDragging:)``).
        public var requiresDelegate: Bool

        /// A dismissal policy.
        public init(swipe: Bool, tapScrim: Bool, requiresDelegate: Bool) {
            self.swipe = swipe
            self.tapScrim = tapScrim
            self.requiresDelegate = requiresDelegate
        }
    }

    /// The same presentation as SwiftUI modifiers (iOS 16.4+).
    public struct SwiftUI: Sendable, Equatable {
        /// `presentationDetents`, smallest first (`.custom` is `.height`).
        public var detents: [Detent]
        /// The initial selection; one of ``detents``.
        public var selection: Detent
        /// `presentationDragIndicator(.visible)` when true.
        public var dragIndicatorVisible: Bool
        /// `presentationBackgroundInteraction(.enabled(upThrough:))`; nil: `.disabled`.
        public var backgroundInteractionUpThrough: Detent?
        /// `presentationContentInteraction(.resizes)` when true, `.scrolls` otherwise.
        public var contentInteractionResizes: Bool
        /// `presentationCornerRadius`; nil: the system's.
        public var cornerRadius: Double?
        /// `interactiveDismissDisabled`.
        public var interactiveDismissDisabled: Bool
    }

    /// The detents, smallest first; never empty (falls back to `[.large]`).
    public var detents: [Detent]
    /// The detent the sheet rests at; always one of ``detents``.
    public var selectedDetent: Detent
    /// The largest detent at which what is behind stays undimmed and interactive; nil: dimmed at every detent.
    public var largestUndimmedDetent: Detent?
    /// Whether the grabber shows (`prefersGrabberVisible`).
    public var prefersGrabberVisible: Bool
    /// `prefersScrollingExpandsWhenScrolledToEdge`.
    public var prefersScrollingExpandsWhenScrolledToEdge: Bool
    /// `prefersEdgeAttachedInCompactHeight`.
    public var prefersEdgeAttachedInCompactHeight: Bool
    /// `widthFollowsPreferredContentSizeWhenEdgeAttached`.
    public var widthFollowsPreferredContentSizeWhenEdgeAttached: Bool
    /// `preferredCornerRadius` in points; nil: the system's.
    public var preferredCornerRadius: Double?
    /// `isModalInPresentation` on the presented view controller: swipe and scrim taps do not dismiss by themselves.
    public var isModalInPresentation: Bool
    /// `pageSheet`, `formSheet` or `popover` (an unknown style falls back to `pageSheet`).
    public var modalPresentationStyle: ModalPresentationStyle
    /// Which gestures dismiss.
    public var dismissal: Dismissal
    /// Whether an attempt to dismiss must ask first (unsaved input): show the confirmation from
    /// `presentationControllerDidAttemptToDismiss`.
    public var confirmBeforeDismiss: Bool
    /// The SwiftUI modifiers.
    public var swiftUI: SwiftUI

    /// The plan of a decision's `ios` block. `presentationStyle` and `confirmBeforeDismiss` are the
    /// sheet's neutral members (used only when the block lacks `modalPresentationStyle`).
    ///
    /// A custom detent without a height in `customDetentHeights` (or with a height that is not a positive
    /// number) and an unknown detent identifier are left out; with no detent left, the plan uses `large`.
    public init(ios: IosSheet, presentationStyle: PresentationStyle = .sheet, confirmBeforeDismiss: Bool = false) {
        func detent(_ id: DetentId) -> Detent? {
            switch id {
            case .medium: return .medium
            case .large: return .large
            default:
                guard let height = ios.customDetentHeights[id.rawValue], height.isFinite, height > 0 else { return nil }
                return .custom(identifier: id.rawValue, height: height)
            }
        }
        var detents: [Detent] = []
        for id in ios.detents { if let d = detent(id), !detents.contains(d) { detents.append(d) } }
        if detents.isEmpty { detents = [.large] }
        let selected = detent(ios.selectedDetentIdentifier).flatMap { detents.contains($0) ? $0 : nil } ?? detents[detents.count - 1]
        let undimmed = ios.largestUndimmedDetentIdentifier.flatMap(detent).flatMap { detents.contains($0) ? $0 : nil }
        self.detents = detents
        self.selectedDetent = selected
        self.largestUndimmedDetent = undimmed
        prefersGrabberVisible = ios.prefersGrabberVisible
        prefersScrollingExpandsWhenScrolledToEdge = ios.prefersScrollingExpandsWhenScrolledToEdge
        prefersEdgeAttachedInCompactHeight = ios.prefersEdgeAttachedInCompactHeight || presentationStyle == .edgeAttached
        widthFollowsPreferredContentSizeWhenEdgeAttached = ios.widthFollowsPreferredContentSizeWhenEdgeAttached
        preferredCornerRadius = ios.preferredCornerRadius.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
        isModalInPresentation = ios.isModalInPresentation
        if let style = ios.modalPresentationStyle, style.isKnown {
            modalPresentationStyle = style
        } else {
            modalPresentationStyle = presentationStyle == .popover ? .popover : .pageSheet
        }
        dismissal =
            ios.dismissal.map { Dismissal(swipe: $0.swipe, tapScrim: $0.tapScrim, requiresDelegate: $0.requiresDelegate) }
            ?? Dismissal(swipe: !ios.isModalInPresentation, tapScrim: !ios.isModalInPresentation, requiresDelegate: false)
        self.confirmBeforeDismiss = confirmBeforeDismiss
        swiftUI = Self.swiftUI(ios.swiftui, detents: detents, selected: selected, undimmed: undimmed, ios: ios)
    }

    /// The plan of a presented sheet, when it carries an `ios` block (nil for an Android decision).
    public init?(_ sheet: SheetPresentation) {
        guard let ios = sheet.ios else { return nil }
        self.init(ios: ios, presentationStyle: sheet.presentationStyle, confirmBeforeDismiss: sheet.confirmBeforeDismiss)
    }

    /// The SwiftUI modifiers: the block's `swiftui` object when the server sent one, else UIKit's values.
    private static func swiftUI(_ block: SwiftUISheet?, detents: [Detent], selected: Detent, undimmed: Detent?, ios: IosSheet) -> SwiftUI {
        guard let block else {
            return SwiftUI(
                detents: detents, selection: selected, dragIndicatorVisible: ios.prefersGrabberVisible, backgroundInteractionUpThrough: undimmed,
                contentInteractionResizes: ios.prefersScrollingExpandsWhenScrolledToEdge, cornerRadius: ios.preferredCornerRadius,
                interactiveDismissDisabled: ios.isModalInPresentation)
        }
        func detent(_ d: SwiftUIDetent) -> Detent? {
            switch d.kind {
            case .medium: return .medium
            case .large: return .large
            case .height:
                guard let height = d.height, height.isFinite, height > 0 else { return nil }
                return .custom(identifier: "content", height: height)
            default: return nil
            }
        }
        var swiftDetents = block.presentationDetents.compactMap(detent)
        if swiftDetents.isEmpty { swiftDetents = detents }
        let selection = detent(block.selection).flatMap { swiftDetents.contains($0) ? $0 : nil } ?? swiftDetents[swiftDetents.count - 1]
        let interaction = block.presentationBackgroundInteraction
        return SwiftUI(
            detents: swiftDetents, selection: selection, dragIndicatorVisible: block.presentationDragIndicator == .visible,
            backgroundInteractionUpThrough: interaction.kind == .enabled ? interaction.upThrough.flatMap(detent) : nil,
            contentInteractionResizes: block.presentationContentInteraction == .resizes,
            cornerRadius: block.presentationCornerRadius.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil },
            interactiveDismissDisabled: block.interactiveDismissDisabled)
    }

    /// What `presentationControllerShouldDismiss` answers: the swipe's permission while the sheet is
    /// being dragged, the scrim tap's otherwise.
    public func shouldDismiss(whileDragging dragging: Bool) -> Bool { dragging ? dismissal.swipe : dismissal.tapScrim }

    /// Whether the presented controller needs a presentation-controller delegate: one gesture of two
    /// may dismiss, or a dismissal must be confirmed.
    public var needsDismissalDelegate: Bool { dismissal.requiresDelegate || confirmBeforeDismiss }

    /// The style to present with: the plan's, except a popover without an anchor (`sourceView`),
    /// which UIKit refuses on iPad (an exception): that one is a page sheet, as iPhone shows popovers anyway.
    public func modalPresentationStyle(hasPopoverSource: Bool) -> ModalPresentationStyle {
        modalPresentationStyle == .popover && !hasPopoverSource ? .pageSheet : modalPresentationStyle
    }

    /// SwiftUI's `interactiveDismissDisabled`: SwiftUI cannot allow one of swipe and scrim tap without
    /// the other, nor ask before an interactive dismissal. So it refuses both unless both may dismiss
    /// and no confirmation is needed (the sheet then closes through its controls, which confirm);
    /// UIKit's adapter honours each gesture on its own.
    public var swiftUIRefusesInteractiveDismissal: Bool {
        swiftUI.interactiveDismissDisabled || isModalInPresentation || confirmBeforeDismiss || !dismissal.swipe || !dismissal.tapScrim
    }

    /// Whether the sheet leaves what is behind it interactive at some detent.
    public var allowsBackgroundInteraction: Bool { largestUndimmedDetent != nil }

    /// Whether the sheet can be resized by dragging (more than one detent).
    public var isResizable: Bool { detents.count > 1 }
}

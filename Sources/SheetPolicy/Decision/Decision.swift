/// Why the decision came out as it did; one stable code, by precedence.
public enum DecisionReason: String, Sendable, CaseIterable {
    /// The user's stack is on this screen; its top is presented.
    case stack
    /// An eligible card sheet is presented.
    case cardsAvailable = "cards-available"
    /// A card sheet of this screen has cards, but the user dismissed it at this count.
    case latched
    /// Card sheets of this screen exist, none has cards.
    case noCards = "no-cards"
    /// Nothing in the catalog belongs to this screen (and tab).
    case noSheetForScreen = "no-sheet-for-screen"
}

/// The decision for one user on one screen: whether a sheet is presented, which, and exactly how.
public struct Decision: Sendable, Equatable {
    /// A sheet is presented.
    public var present: Bool
    /// Why.
    public var reason: DecisionReason
    /// The sheets to display, bottom to top; a lone card sheet is a stack of one, empty when nothing is presented.
    public var stack: [Presentation]
    /// Ids of eligible card sheets that lost (to a higher priority or to the stack), in byte order.
    public var yielded: [String]
    /// The rules applied, in order, in plain words.
    public var trace: [String]

    /// The presented sheet: the top of `stack`, or `nil`.
    public var sheet: Presentation? { stack.last }

    public init(present: Bool, reason: DecisionReason, stack: [Presentation], yielded: [String], trace: [String]) {
        self.present = present; self.reason = reason; self.stack = stack; self.yielded = yielded; self.trace = trace
    }
}

/// One sheet as the client presents it: platform-neutral facts plus the platform's own configuration.
public struct Presentation: Sendable, Equatable {
    public var id: String
    public var kind: SheetKind
    /// The sheet's size variant (a content sheet taller than the viewport stays `content`).
    public var variant: SheetSize
    /// The resting heights, smallest first.
    public var detents: [Detent]
    /// The detent the sheet rests at now; always one of `detents`.
    public var selectedDetent: DetentID
    public var grabberVisible: Bool
    public var swipeToDismiss: Bool
    public var tapScrimToDismiss: Bool
    /// The largest detent without a dimming scrim; `nil` when dimmed throughout.
    public var largestUndimmedDetent: DetentID?
    public var dismissAffordance: DismissAffordance
    /// Dismissal must be confirmed first (a dirty form that asks for it).
    public var confirmBeforeDismiss: Bool
    public var expandsOnScrollToEdge: Bool
    public var parentScalesBehind: Bool
    /// A content-sized sheet whose height is not measured yet on this platform (rests at medium meanwhile).
    public var awaitingContentHeight: Bool
    public var scrollable: Bool
    /// Screen readers can reach the scrim as a close control.
    public var scrimAccessibleAsClose: Bool
    /// Strict style: the sticky 56 pt title header; `nil` for flexible sheets.
    public var header: SheetHeader?
    /// The sticky primary button slot, when the sheet has one.
    public var primaryButton: PrimaryButtonSlot?
    public var presentationStyle: PresentationStyle
    /// How the presented top got there; `nil` for a root and for sheets below the top.
    public var transition: Transition?
    /// The same presentation in the context platform's own vocabulary.
    public var platform: PlatformConfiguration

    public init(
        id: String, kind: SheetKind, variant: SheetSize, detents: [Detent], selectedDetent: DetentID,
        grabberVisible: Bool, swipeToDismiss: Bool, tapScrimToDismiss: Bool, largestUndimmedDetent: DetentID?,
        dismissAffordance: DismissAffordance, confirmBeforeDismiss: Bool, expandsOnScrollToEdge: Bool,
        parentScalesBehind: Bool, awaitingContentHeight: Bool, scrollable: Bool, scrimAccessibleAsClose: Bool,
        header: SheetHeader?, primaryButton: PrimaryButtonSlot?, presentationStyle: PresentationStyle,
        transition: Transition?, platform: PlatformConfiguration
    ) {
        self.id = id; self.kind = kind; self.variant = variant; self.detents = detents
        self.selectedDetent = selectedDetent; self.grabberVisible = grabberVisible; self.swipeToDismiss = swipeToDismiss
        self.tapScrimToDismiss = tapScrimToDismiss; self.largestUndimmedDetent = largestUndimmedDetent
        self.dismissAffordance = dismissAffordance; self.confirmBeforeDismiss = confirmBeforeDismiss
        self.expandsOnScrollToEdge = expandsOnScrollToEdge; self.parentScalesBehind = parentScalesBehind
        self.awaitingContentHeight = awaitingContentHeight; self.scrollable = scrollable
        self.scrimAccessibleAsClose = scrimAccessibleAsClose; self.header = header; self.primaryButton = primaryButton
        self.presentationStyle = presentationStyle; self.transition = transition; self.platform = platform
    }
}

/// A resting height of a sheet.
public struct Detent: Sendable, Equatable {
    public var id: DetentID
    /// Points, for the `content` detent; `nil` for the system's medium and large.
    public var height: Double?
    public init(id: DetentID, height: Double? = nil) { self.id = id; self.height = height }
}

/// The strict style's sticky header.
public struct SheetHeader: Sendable, Equatable {
    public var title: String
    /// Always 56 points.
    public var height: Double
    public var sticky: Bool
    public init(title: String, height: Double = 56, sticky: Bool = true) {
        self.title = title; self.height = height; self.sticky = sticky
    }
}

/// The size of a sheet's primary button: medium in strict sheets, small in flexible ones.
public enum ButtonSize: String, Sendable, CaseIterable {
    case medium, small
}

/// The sticky bottom slot holding a sheet's primary button.
public struct PrimaryButtonSlot: Sendable, Equatable {
    public var label: String
    public var size: ButtonSize
    public var sticky: Bool
    public init(label: String, size: ButtonSize, sticky: Bool = true) {
        self.label = label; self.size = size; self.sticky = sticky
    }
}

/// How the sheet is attached to the screen.
public enum PresentationStyle: String, Sendable, CaseIterable {
    /// A bottom sheet (iPhone portrait, Android everywhere).
    case sheet
    /// iPad: a popover that adapts to a sheet in compact width.
    case popover
    /// iPhone landscape: an edge-attached sheet.
    case edgeAttached
}

/// How the presented top arrives from the sheet before it.
public enum TransitionMode: String, Sendable, CaseIterable {
    /// A nested sheet: stacked on its parent (iOS), overlaid on it (Android).
    case push
    /// A flow step of the same non-content variant: same sheet, the content transitions.
    case replaceContent
    /// The container resizes to the next step.
    case resize
}

/// The transition that brought the presented top.
public struct Transition: Sendable, Equatable {
    /// The sheet it comes from.
    public var from: String
    public var mode: TransitionMode
    /// Do not resize until the new top's content height is known.
    public var waitForContentHeight: Bool
    public init(from: String, mode: TransitionMode, waitForContentHeight: Bool) {
        self.from = from; self.mode = mode; self.waitForContentHeight = waitForContentHeight
    }
}

/// The presentation in one platform's own API names; only the context's platform is given.
public enum PlatformConfiguration: Sendable, Equatable {
    case ios(IOSSheetConfiguration)
    case android(AndroidSheetConfiguration)
}

/// UIKit's `UISheetPresentationController` settings (iPad: its `adaptiveSheetPresentationController`).
public struct IOSSheetConfiguration: Sendable, Equatable {
    /// Detent identifiers, smallest first (`content` is a custom detent, see `customDetentHeights`).
    public var detents: [DetentID]
    /// Heights of the custom detents, in points, by identifier.
    public var customDetentHeights: [CustomDetentHeight]
    public var selectedDetentIdentifier: DetentID
    public var largestUndimmedDetentIdentifier: DetentID?
    public var prefersGrabberVisible: Bool
    public var prefersScrollingExpandsWhenScrolledToEdge: Bool
    /// True on iPhone; false on iPad, where the popover adapts instead.
    public var prefersEdgeAttachedInCompactHeight: Bool
    /// True on iPhone; false on iPad.
    public var widthFollowsPreferredContentSizeWhenEdgeAttached: Bool
    /// The definition's `cornerRadius`; `nil` keeps the system (and design-system) default.
    public var preferredCornerRadius: Double?
    /// Blocks interactive dismissal: dismissal must be confirmed, or swiping is off.
    public var isModalInPresentation: Bool

    public init(
        detents: [DetentID], customDetentHeights: [CustomDetentHeight],
        selectedDetentIdentifier: DetentID, largestUndimmedDetentIdentifier: DetentID?, prefersGrabberVisible: Bool,
        prefersScrollingExpandsWhenScrolledToEdge: Bool, prefersEdgeAttachedInCompactHeight: Bool,
        widthFollowsPreferredContentSizeWhenEdgeAttached: Bool, preferredCornerRadius: Double?,
        isModalInPresentation: Bool
    ) {
        self.detents = detents; self.customDetentHeights = customDetentHeights
        self.selectedDetentIdentifier = selectedDetentIdentifier
        self.largestUndimmedDetentIdentifier = largestUndimmedDetentIdentifier
        self.prefersGrabberVisible = prefersGrabberVisible
        self.prefersScrollingExpandsWhenScrolledToEdge = prefersScrollingExpandsWhenScrolledToEdge
        self.prefersEdgeAttachedInCompactHeight = prefersEdgeAttachedInCompactHeight
        self.widthFollowsPreferredContentSizeWhenEdgeAttached = widthFollowsPreferredContentSizeWhenEdgeAttached
        self.preferredCornerRadius = preferredCornerRadius; self.isModalInPresentation = isModalInPresentation
    }
}

/// A custom iOS detent's height (`.custom(identifier:)` resolving to `height` points).
public struct CustomDetentHeight: Sendable, Equatable {
    public var identifier: DetentID
    public var height: Double
    public init(identifier: DetentID, height: Double) { self.identifier = identifier; self.height = height }
}

/// Material 3 `ModalBottomSheet` / `SheetState` settings.
public struct AndroidSheetConfiguration: Sendable, Equatable {
    /// Every variant but medium skips the partially expanded state.
    public var skipPartiallyExpanded: Bool
    /// `PartiallyExpanded` or `Expanded`.
    public var initialValue: AndroidSheetValue
    /// The drag handle always shows: every Android sheet is resizable.
    public var dragHandle: Bool
    /// Dragging (and swiping away) is on; off when the definition turns swipe-to-dismiss off.
    public var sheetGesturesEnabled: Bool
    public var shouldDismissOnClickOutside: Bool
    /// Back dismisses unless the sheet has no way out at all (no swipe, no scrim tap, no affordance).
    public var shouldDismissOnBackPress: Bool
    /// `confirmValueChange` must ask (in a dialog) before the sheet goes `Hidden`.
    public var confirmValueChangeRequiresDialog: Bool

    public init(
        skipPartiallyExpanded: Bool, initialValue: AndroidSheetValue, dragHandle: Bool, sheetGesturesEnabled: Bool,
        shouldDismissOnClickOutside: Bool, shouldDismissOnBackPress: Bool, confirmValueChangeRequiresDialog: Bool
    ) {
        self.skipPartiallyExpanded = skipPartiallyExpanded; self.initialValue = initialValue
        self.dragHandle = dragHandle; self.sheetGesturesEnabled = sheetGesturesEnabled
        self.shouldDismissOnClickOutside = shouldDismissOnClickOutside
        self.shouldDismissOnBackPress = shouldDismissOnBackPress
        self.confirmValueChangeRequiresDialog = confirmValueChangeRequiresDialog
    }
}

/// Material 3 `SheetValue` names.
public enum AndroidSheetValue: String, Sendable, CaseIterable {
    case partiallyExpanded = "PartiallyExpanded"
    case expanded = "Expanded"
}

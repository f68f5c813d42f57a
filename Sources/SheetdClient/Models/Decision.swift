// The decision (openapi.yaml `Decision` and the schemas it uses).

/// The policy's decision: whether a sheet is presented, which one, and how (openapi.yaml `Decision`).
///
/// `sheet` is the last element of `stack`, or nil when nothing is presented (`stack` is then empty).
/// Members a newer server adds are ignored when decoding.
public struct Decision: Codable, Sendable, Equatable, Hashable {
    /// Whether a sheet is presented.
    public var present: Bool
    /// One stable code saying why, by precedence.
    public var reason: DecisionReason
    /// The sheet to present (the top of `stack`), or nil.
    public var sheet: SheetPresentation?
    /// The sheets to display, bottom to top.
    public var stack: [SheetPresentation]
    /// Ids of eligible sheets that lost.
    public var yielded: [String]
    /// Card sheets held back by a campaign rule, with the rule (nil from a server older than campaign rules).
    public var held: [HeldSheet]?
    /// The rules applied, in order, in plain words.
    public var trace: [String]

    /// A value with every member.
    public init(
        present: Bool, reason: DecisionReason, sheet: SheetPresentation? = nil, stack: [SheetPresentation], yielded: [String],
        held: [HeldSheet]? = nil, trace: [String]
    ) {
        self.present = present
        self.reason = reason
        self.sheet = sheet
        self.stack = stack
        self.yielded = yielded
        self.held = held
        self.trace = trace
    }
}

/// A card sheet of the screen with cards that a campaign rule holds back (openapi.yaml `HeldSheet`).
public struct HeldSheet: Codable, Sendable, Equatable, Hashable {
    /// The held sheet.
    public var sheetId: String
    /// The first rule holding it (`outside-schedule`, `not-in-audience`, `cooling-down`, `frequency-capped`,
    /// `global-cap`, `min-interval`).
    public var reason: DecisionReason

    /// A value with every member.
    public init(sheetId: String, reason: DecisionReason) {
        self.sheetId = sheetId
        self.reason = reason
    }
}

/// How one sheet is presented, with exactly one platform block (`ios` or `android`, the context's) (openapi.yaml `SheetPresentation`).
public struct SheetPresentation: Codable, Sendable, Equatable, Hashable {
    /// The sheet's id.
    public var id: String
    /// What the sheet is for.
    public var kind: SheetKind
    /// The size variant chosen.
    public var variant: SheetSize
    /// The detents, at least one.
    public var detents: [Detent]
    /// The detent the sheet rests at.
    public var selectedDetent: DetentId
    /// Whether the grabber (drag handle) shows.
    public var grabberVisible: Bool
    /// Whether a swipe down dismisses.
    public var swipeToDismiss: Bool
    /// Whether a tap on the scrim dismisses.
    public var tapScrimToDismiss: Bool
    /// The largest detent at which what is behind stays undimmed, or nil (dimmed at every detent).
    public var largestUndimmedDetent: DetentId?
    /// The close control shown.
    public var dismissAffordance: DismissAffordance
    /// Whether dismissing asks for confirmation first (unsaved input).
    public var confirmBeforeDismiss: Bool
    /// Whether scrolling to the content's edge expands the sheet.
    public var expandsOnScrollToEdge: Bool
    /// Whether the sheet below scales back behind this one.
    public var parentScalesBehind: Bool
    /// Whether the sheet waits for its content height to be reported.
    public var awaitingContentHeight: Bool
    /// Whether the content scrolls.
    public var scrollable: Bool
    /// Whether assistive technologies expose the scrim as a close control.
    public var scrimAccessibleAsClose: Bool
    /// The sticky header, or nil.
    public var header: SheetHeader?
    /// The primary button, or nil.
    public var primaryButton: PresentedPrimaryButton?
    /// Sheet, popover or edge-attached.
    public var presentationStyle: PresentationStyle
    /// How the sheet arrives from the one before it, or nil for a root.
    public var transition: SheetTransition?
    /// What the sheet does while the keyboard is up (nil from a server older than this member).
    public var keyboardAdjustment: KeyboardAdjustment?
    /// The sheet's experiment and the user's arm (nil: none, or an older server).
    public var experiment: PresentedExperiment?
    /// UIKit settings (present when the context's platform is iOS).
    public var ios: IosSheet?
    /// Material 3 settings (present when the context's platform is Android).
    public var android: AndroidSheet?

    /// A value with every member.
    public init(
        id: String, kind: SheetKind, variant: SheetSize, detents: [Detent], selectedDetent: DetentId, grabberVisible: Bool, swipeToDismiss: Bool,
        tapScrimToDismiss: Bool, largestUndimmedDetent: DetentId? = nil, dismissAffordance: DismissAffordance, confirmBeforeDismiss: Bool,
        expandsOnScrollToEdge: Bool, parentScalesBehind: Bool, awaitingContentHeight: Bool, scrollable: Bool, scrimAccessibleAsClose: Bool,
        header: SheetHeader? = nil, primaryButton: PresentedPrimaryButton? = nil, presentationStyle: PresentationStyle,
        transition: SheetTransition? = nil,
        keyboardAdjustment: KeyboardAdjustment? = nil, experiment: PresentedExperiment? = nil, ios: IosSheet? = nil,
        android: AndroidSheet? = nil
    ) {
        self.id = id
        self.kind = kind
        self.variant = variant
        self.detents = detents
        self.selectedDetent = selectedDetent
        self.grabberVisible = grabberVisible
        self.swipeToDismiss = swipeToDismiss
        self.tapScrimToDismiss = tapScrimToDismiss
        self.largestUndimmedDetent = largestUndimmedDetent
        self.dismissAffordance = dismissAffordance
        self.confirmBeforeDismiss = confirmBeforeDismiss
        self.expandsOnScrollToEdge = expandsOnScrollToEdge
        self.parentScalesBehind = parentScalesBehind
        self.awaitingContentHeight = awaitingContentHeight
        self.scrollable = scrollable
        self.scrimAccessibleAsClose = scrimAccessibleAsClose
        self.header = header
        self.primaryButton = primaryButton
        self.presentationStyle = presentationStyle
        self.transition = transition
        self.keyboardAdjustment = keyboardAdjustment
        self.experiment = experiment
        self.ios = ios
        self.android = android
    }
}

/// One detent of a presented sheet (openapi.yaml `Detent`).
public struct Detent: Codable, Sendable, Equatable, Hashable {
    /// The detent.
    public var id: DetentId
    /// Points for a `content` detent (the measured content height); nil for the system `medium` and `large` detents.
    public var height: Double?

    /// A value with every member.
    public init(id: DetentId, height: Double? = nil) {
        self.id = id
        self.height = height
    }
}

/// A presented sheet's header (openapi.yaml `SheetHeader`).
public struct SheetHeader: Codable, Sendable, Equatable, Hashable {
    /// The title.
    public var title: String
    /// Points.
    public var height: Double
    /// Whether it stays while the content scrolls.
    public var sticky: Bool
    /// Whether the header holds the Cancel text button (leading edge); nil from an older server.
    public var cancelButton: Bool?

    /// A value with every member.
    public init(title: String, height: Double, sticky: Bool, cancelButton: Bool? = nil) {
        self.title = title
        self.height = height
        self.sticky = sticky
        self.cancelButton = cancelButton
    }
}

/// A presented sheet's primary button (openapi.yaml `PresentedPrimaryButton`).
public struct PresentedPrimaryButton: Codable, Sendable, Equatable, Hashable {
    /// The label.
    public var label: String
    /// The size.
    public var size: PrimaryButtonSize
    /// Whether it stays while the content scrolls.
    public var sticky: Bool

    /// A value with every member.
    public init(label: String, size: PrimaryButtonSize, sticky: Bool) {
        self.label = label
        self.size = size
        self.sticky = sticky
    }
}

/// How a sheet arrives from the one before it (openapi.yaml `Transition`).
public struct SheetTransition: Codable, Sendable, Equatable, Hashable {
    /// The id of the sheet the transition starts from.
    public var from: String
    /// Push, replace the content, or resize.
    public var mode: TransitionMode
    /// Whether to wait for the new content's height before animating.
    public var waitForContentHeight: Bool

    /// A value with every member.
    public init(from: String, mode: TransitionMode, waitForContentHeight: Bool) {
        self.from = from
        self.mode = mode
        self.waitForContentHeight = waitForContentHeight
    }
}

/// `UISheetPresentationController` settings, in UIKit's own names (openapi.yaml `IosSheet`).
///
/// Turn it into a ``SheetPresentationPlan`` to apply it.
public struct IosSheet: Codable, Sendable, Equatable, Hashable {
    /// The detents, smallest first.
    public var detents: [DetentId]
    /// Points per custom detent identifier (`content`).
    public var customDetentHeights: [String: Double]
    /// `selectedDetentIdentifier`.
    public var selectedDetentIdentifier: DetentId
    /// `largestUndimmedDetentIdentifier` (nil: dimmed at every detent).
    public var largestUndimmedDetentIdentifier: DetentId?
    /// `prefersGrabberVisible`.
    public var prefersGrabberVisible: Bool
    /// `prefersScrollingExpandsWhenScrolledToEdge`.
    public var prefersScrollingExpandsWhenScrolledToEdge: Bool
    /// `prefersEdgeAttachedInCompactHeight`.
    public var prefersEdgeAttachedInCompactHeight: Bool
    /// `widthFollowsPreferredContentSizeWhenEdgeAttached`.
    public var widthFollowsPreferredContentSizeWhenEdgeAttached: Bool
    /// `preferredCornerRadius` in points (nil: the system's).
    public var preferredCornerRadius: Double?
    /// `isModalInPresentation` (the view controller's): interactive dismissal is refused.
    public var isModalInPresentation: Bool
    /// `modalPresentationStyle`: `pageSheet`, `formSheet` or `popover` (nil from an older server).
    public var modalPresentationStyle: ModalPresentationStyle?
    /// What UIKit will actually do on swipe and scrim tap (nil from an older server).
    public var dismissal: IosDismissal?
    /// The same presentation as SwiftUI modifiers (nil from an older server).
    public var swiftui: SwiftUISheet?

    /// A value with every member.
    public init(
        detents: [DetentId], customDetentHeights: [String: Double], selectedDetentIdentifier: DetentId,
        largestUndimmedDetentIdentifier: DetentId? = nil, prefersGrabberVisible: Bool, prefersScrollingExpandsWhenScrolledToEdge: Bool,
        prefersEdgeAttachedInCompactHeight: Bool, widthFollowsPreferredContentSizeWhenEdgeAttached: Bool, preferredCornerRadius: Double? = nil,
        isModalInPresentation: Bool, modalPresentationStyle: ModalPresentationStyle? = nil, dismissal: IosDismissal? = nil,
        swiftui: SwiftUISheet? = nil
    ) {
        self.detents = detents
        self.customDetentHeights = customDetentHeights
        self.selectedDetentIdentifier = selectedDetentIdentifier
        self.largestUndimmedDetentIdentifier = largestUndimmedDetentIdentifier
        self.prefersGrabberVisible = prefersGrabberVisible
        self.prefersScrollingExpandsWhenScrolledToEdge = prefersScrollingExpandsWhenScrolledToEdge
        self.prefersEdgeAttachedInCompactHeight = prefersEdgeAttachedInCompactHeight
        self.widthFollowsPreferredContentSizeWhenEdgeAttached = widthFollowsPreferredContentSizeWhenEdgeAttached
        self.preferredCornerRadius = preferredCornerRadius
        self.isModalInPresentation = isModalInPresentation
        self.modalPresentationStyle = modalPresentationStyle
        self.dismissal = dismissal
        self.swiftui = swiftui
    }
}

/// What UIKit will actually do on swipe and scrim tap (openapi.yaml `IosDismissal`).
///
/// When only one of them may dismiss, `requiresDelegate` is true and
/// `presentationControllerShouldDismiss` answers `swipe` while the sheet is dragged, `tapScrim` otherwise.
public struct IosDismissal: Codable, Sendable, Equatable, Hashable {
    /// Whether a swipe down dismisses.
    public var swipe: Bool
    /// Whether a scrim tap dismisses.
    public var tapScrim: Bool
    /// Whether a `UIAdaptivePresentationControllerDelegate` must decide (`isModalInPresentation` refuses both together).
    public var requiresDelegate: Bool

    /// A value with every member.
    public init(swipe: Bool, tapScrim: Bool, requiresDelegate: Bool) {
        self.swipe = swipe
        self.tapScrim = tapScrim
        self.requiresDelegate = requiresDelegate
    }
}

/// A SwiftUI `PresentationDetent` (openapi.yaml `SwiftUIDetent`).
public struct SwiftUIDetent: Codable, Sendable, Equatable, Hashable {
    /// `medium`, `large` or `height`.
    public var kind: SwiftUIDetentKind
    /// Points for `.height`, else nil.
    public var height: Double?

    /// A value with every member.
    public init(kind: SwiftUIDetentKind, height: Double? = nil) {
        self.kind = kind
        self.height = height
    }
}

/// `presentationBackgroundInteraction`: `.enabled(upThrough:)` or `.disabled`.
public struct SwiftUIBackgroundInteraction: Codable, Sendable, Equatable, Hashable {
    /// `enabled` or `disabled`.
    public var kind: BackgroundInteractionKind
    /// The largest undimmed detent when enabled.
    public var upThrough: SwiftUIDetent?

    /// A value with every member.
    public init(kind: BackgroundInteractionKind, upThrough: SwiftUIDetent? = nil) {
        self.kind = kind
        self.upThrough = upThrough
    }
}

/// The presentation as SwiftUI modifiers, iOS 16.4+ (openapi.yaml `SwiftUISheet`).
public struct SwiftUISheet: Codable, Sendable, Equatable, Hashable {
    /// `presentationDetents(_:selection:)`, smallest first.
    public var presentationDetents: [SwiftUIDetent]
    /// The selection binding's initial value.
    public var selection: SwiftUIDetent
    /// `visible` or `hidden`.
    public var presentationDragIndicator: DragIndicatorVisibility
    /// `.enabled(upThrough:)` or `.disabled`.
    public var presentationBackgroundInteraction: SwiftUIBackgroundInteraction
    /// `resizes` or `scrolls`.
    public var presentationContentInteraction: ContentInteraction
    /// Points, nil for the system's.
    public var presentationCornerRadius: Double?
    /// SwiftUI's one switch for swipe and scrim tap.
    public var interactiveDismissDisabled: Bool

    /// A value with every member.
    public init(
        presentationDetents: [SwiftUIDetent], selection: SwiftUIDetent, presentationDragIndicator: DragIndicatorVisibility,
        presentationBackgroundInteraction: SwiftUIBackgroundInteraction, presentationContentInteraction: ContentInteraction,
        presentationCornerRadius: Double? = nil, interactiveDismissDisabled: Bool
    ) {
        self.presentationDetents = presentationDetents
        self.selection = selection
        self.presentationDragIndicator = presentationDragIndicator
        self.presentationBackgroundInteraction = presentationBackgroundInteraction
        self.presentationContentInteraction = presentationContentInteraction
        self.presentationCornerRadius = presentationCornerRadius
        self.interactiveDismissDisabled = interactiveDismissDisabled
    }
}

/// Material 3 `ModalBottomSheet` and `SheetState` settings, in Compose's own names (openapi.yaml `AndroidSheet`).
public struct AndroidSheet: Codable, Sendable, Equatable, Hashable {
    /// `rememberModalBottomSheetState(skipPartiallyExpanded:)`.
    public var skipPartiallyExpanded: Bool
    /// The `SheetValue` to show at.
    public var initialValue: AndroidSheetValue
    /// Whether `dragHandle` is shown.
    public var dragHandle: Bool
    /// `sheetGesturesEnabled`.
    public var sheetGesturesEnabled: Bool
    /// `ModalBottomSheetProperties(shouldDismissOnClickOutside:)`.
    public var shouldDismissOnClickOutside: Bool
    /// `ModalBottomSheetProperties(shouldDismissOnBackPress:)`.
    public var shouldDismissOnBackPress: Bool
    /// Whether `confirmValueChange` must ask before hiding (unsaved input).
    public var confirmValueChangeRequiresDialog: Bool
    /// What `SheetState(confirmValueChange:)` answers for `Hidden` (nil from an older server).
    public var confirmValueChange: AndroidConfirmValueChange?
    /// Where `scrimColor` dims (nil from an older server).
    public var scrim: AndroidScrim?
    /// `ModalBottomSheet(shape:)` (nil from an older server).
    public var shape: AndroidShape?
    /// `ModalBottomSheetProperties` (nil from an older server).
    public var properties: AndroidSheetProperties?
    /// Whether to pad the content by the IME (nil from an older server).
    public var imePadding: Bool?

    /// A value with every member.
    public init(
        skipPartiallyExpanded: Bool, initialValue: AndroidSheetValue, dragHandle: Bool, sheetGesturesEnabled: Bool, shouldDismissOnClickOutside: Bool,
        shouldDismissOnBackPress: Bool, confirmValueChangeRequiresDialog: Bool, confirmValueChange: AndroidConfirmValueChange? = nil,
        scrim: AndroidScrim? = nil, shape: AndroidShape? = nil, properties: AndroidSheetProperties? = nil, imePadding: Bool? = nil
    ) {
        self.skipPartiallyExpanded = skipPartiallyExpanded
        self.initialValue = initialValue
        self.dragHandle = dragHandle
        self.sheetGesturesEnabled = sheetGesturesEnabled
        self.shouldDismissOnClickOutside = shouldDismissOnClickOutside
        self.shouldDismissOnBackPress = shouldDismissOnBackPress
        self.confirmValueChangeRequiresDialog = confirmValueChangeRequiresDialog
        self.confirmValueChange = confirmValueChange
        self.scrim = scrim
        self.shape = shape
        self.properties = properties
        self.imePadding = imePadding
    }
}

/// What `SheetState(confirmValueChange:)` answers for `SheetValue.Hidden`.
public struct AndroidConfirmValueChange: Codable, Sendable, Equatable, Hashable {
    /// `allow`, `veto` (spring back) or `confirm` (show the dialog).
    public var hidden: HiddenConfirmation

    /// A value with every member.
    public init(hidden: HiddenConfirmation) {
        self.hidden = hidden
    }
}

/// `ModalBottomSheet(scrimColor:)`: the scrim color while the target value is in `dimmedAt`, transparent otherwise.
public struct AndroidScrim: Codable, Sendable, Equatable, Hashable {
    /// The sheet values at which the scrim dims.
    public var dimmedAt: [AndroidSheetValue]

    /// A value with every member.
    public init(dimmedAt: [AndroidSheetValue]) {
        self.dimmedAt = dimmedAt
    }
}

/// `ModalBottomSheet(shape:)`.
public struct AndroidShape: Codable, Sendable, Equatable, Hashable {
    /// Top corners in dp; nil keeps `BottomSheetDefaults.ExpandedShape`.
    public var topCornerRadius: Double?

    /// A value with every member.
    public init(topCornerRadius: Double? = nil) {
        self.topCornerRadius = topCornerRadius
    }
}

/// `ModalBottomSheetProperties`.
public struct AndroidSheetProperties: Codable, Sendable, Equatable, Hashable {
    /// `shouldDismissOnBackPress`.
    public var shouldDismissOnBackPress: Bool
    /// `shouldDismissOnClickOutside`.
    public var shouldDismissOnClickOutside: Bool

    /// A value with every member.
    public init(shouldDismissOnBackPress: Bool, shouldDismissOnClickOutside: Bool) {
        self.shouldDismissOnBackPress = shouldDismissOnBackPress
        self.shouldDismissOnClickOutside = shouldDismissOnClickOutside
    }
}

/// The name the client API uses for a ``Decision`` (`decision(for:)`, `decisions(for:)`).
public typealias SheetDecision = Decision

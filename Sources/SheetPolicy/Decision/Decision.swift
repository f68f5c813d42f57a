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
    // Campaign rules: why a card sheet with cards is held back. When several hold one
    // sheet, its reason is the first of these, in this order.
    /// Before `schedule.start` or at or after `schedule.end`.
    case outsideSchedule = "outside-schedule"
    /// The context or the user does not match the sheet's `audience`.
    case notInAudience = "not-in-audience"
    /// Dismissed less than `cooldownSeconds` ago.
    case coolingDown = "cooling-down"
    /// `frequency.max` impressions in the last `frequency.periodSeconds`.
    case frequencyCapped = "frequency-capped"
    /// The user's card-sheet impressions reached the global cap of the settings.
    case globalCap = "global-cap"
    /// The user's last card-sheet impression is less than the settings' `minIntervalSeconds` ago.
    case minInterval = "min-interval"
    /// The user is in the holdout arm of the sheet's experiment: not shown it (listed in `held`).
    case holdout
}

/// A card sheet of the screen that has cards and is not latched, held back by a campaign rule; or a
/// sheet the user is not shown because they are in its experiment's holdout.
public struct HeldSheet: Sendable, Equatable {
    public var sheetId: String
    /// The first rule holding it (one of the campaign reasons).
    public var reason: DecisionReason
    public init(sheetId: String, reason: DecisionReason) { self.sheetId = sheetId; self.reason = reason }
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
    /// Card sheets of the screen with cards, not latched, but held back by a campaign rule, in byte order of id.
    public var held: [HeldSheet]
    /// The rules applied, in order, in plain words.
    public var trace: [String]
    /// The next instant at which this decision can change by time alone (a schedule start or end, a
    /// cooldown's end, an impression leaving a cap's window, the end of the minimum interval); `nil`
    /// when only events and catalog changes can change it. Always after the `now` it was made for.
    /// Not part of the JSON body: caches and streams use it.
    public var validUntil: Timestamp?
    /// The users this decision exposes to experiments (the sheets presented in an arm, or that would
    /// have been for the holdout). Not part of the JSON body: the service records them.
    public var exposures: [ExperimentExposure] = []

    /// The presented sheet: the top of `stack`, or `nil`.
    public var sheet: Presentation? { stack.last }

    public init(
        present: Bool, reason: DecisionReason, stack: [Presentation], yielded: [String], held: [HeldSheet] = [],
        trace: [String], validUntil: Timestamp? = nil
    ) {
        self.present = present; self.reason = reason; self.stack = stack; self.yielded = yielded; self.held = held
        self.trace = Self.bounded(trace); self.validUntil = validUntil
    }

    /// Trace lines a decision carries at most; the rest are counted in a last line. With the catalog's
    /// per-screen cap this bounds the size of every decision (and of a stream's event).
    public static let maximumTraceLines = 128

    private static func bounded(_ trace: [String]) -> [String] {
        guard trace.count > maximumTraceLines else { return trace }
        let omitted = trace.count - (maximumTraceLines - 1)
        return Array(trace.prefix(maximumTraceLines - 1)) + ["trace: \(omitted) more lines not shown"]
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
    /// 000: "Allow for scrolling if sheet content exceeds the viewport": false only when the content is
    /// measured and the viewport is known to hold it; without a `viewportHeight` it could exceed, so true.
    public var scrollable: Bool
    /// Screen readers can reach the scrim as a close control.
    public var scrimAccessibleAsClose: Bool
    /// The sticky 56 pt header: every strict sheet's (003), and any sheet's whose affordance is a
    /// Cancel button (000: "a 'Cancel' text button placed in the header"); `nil` otherwise.
    public var header: SheetHeader?
    /// The sticky primary button slot, when the sheet has one.
    public var primaryButton: PrimaryButtonSlot?
    public var presentationStyle: PresentationStyle
    /// How the presented top got there; `nil` for a root and for sheets below the top.
    public var transition: Transition?
    /// What the sheet does while the keyboard is up (`none` when it is down).
    public var keyboardAdjustment: KeyboardAdjustment
    /// The sheet's experiment and the user's arm (its overrides applied); nil when none.
    public var experiment: PresentedExperiment? = nil
    /// The same presentation in the context platform's own vocabulary.
    public var platform: PlatformConfiguration

    public init(
        id: String, kind: SheetKind, variant: SheetSize, detents: [Detent], selectedDetent: DetentID,
        grabberVisible: Bool, swipeToDismiss: Bool, tapScrimToDismiss: Bool, largestUndimmedDetent: DetentID?,
        dismissAffordance: DismissAffordance, confirmBeforeDismiss: Bool, expandsOnScrollToEdge: Bool,
        parentScalesBehind: Bool, awaitingContentHeight: Bool, scrollable: Bool, scrimAccessibleAsClose: Bool,
        header: SheetHeader?, primaryButton: PrimaryButtonSlot?, presentationStyle: PresentationStyle,
        transition: Transition?, keyboardAdjustment: KeyboardAdjustment = .none, platform: PlatformConfiguration
    ) {
        self.id = id; self.kind = kind; self.variant = variant; self.detents = detents
        self.selectedDetent = selectedDetent; self.grabberVisible = grabberVisible; self.swipeToDismiss = swipeToDismiss
        self.tapScrimToDismiss = tapScrimToDismiss; self.largestUndimmedDetent = largestUndimmedDetent
        self.dismissAffordance = dismissAffordance; self.confirmBeforeDismiss = confirmBeforeDismiss
        self.expandsOnScrollToEdge = expandsOnScrollToEdge; self.parentScalesBehind = parentScalesBehind
        self.awaitingContentHeight = awaitingContentHeight; self.scrollable = scrollable
        self.scrimAccessibleAsClose = scrimAccessibleAsClose; self.header = header; self.primaryButton = primaryButton
        self.presentationStyle = presentationStyle; self.transition = transition
        self.keyboardAdjustment = keyboardAdjustment; self.platform = platform
    }
}

/// A resting height of a sheet.
public struct Detent: Sendable, Equatable {
    public var id: DetentID
    /// Points on iOS, dp on Android, for the `content` detent; `nil` for the system's medium and large.
    public var height: Double?
    public init(id: DetentID, height: Double? = nil) { self.id = id; self.height = height }
}

/// The sticky header: the strict style's title, and the Cancel button when the sheet has one.
public struct SheetHeader: Sendable, Equatable {
    /// The definition's title; empty when a flexible sheet has a header only to hold its Cancel button.
    public var title: String
    /// Always 56 (points on iOS, dp on Android).
    public var height: Double
    public var sticky: Bool
    /// 000: "a 'Cancel' text button placed in the header": the header holds it (leading edge).
    public var cancelButton: Bool
    public init(title: String, height: Double = 56, sticky: Bool = true, cancelButton: Bool = false) {
        self.title = title; self.height = height; self.sticky = sticky; self.cancelButton = cancelButton
    }
}

/// What the sheet does while the keyboard is up.
public enum KeyboardAdjustment: String, Sendable, CaseIterable {
    /// The keyboard is down.
    case none
    /// 000: "resize to accommodate keyboards": a sheet with one resting height keeps it and rises by the
    /// keyboard's height (UIKit and SwiftUI do this themselves; Compose needs `imePadding`).
    case growByKeyboard
    /// 001: "if the sheet is in half-height mode and the keyboard slides up, it will automatically move to
    /// the top of the screen": a sheet that has a large detent rests there until the keyboard hides.
    case largeDetent
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
    /// Set on the presented view controller (the sheet's own, each sheet of a stack its own): blocks
    /// swipe and scrim tap alike, so it is true when dismissal must be confirmed or neither gesture may dismiss.
    public var isModalInPresentation: Bool
    /// The presented view controller's `modalPresentationStyle`.
    public var modalPresentationStyle: ModalPresentationStyle
    /// What UIKit will actually do with these settings.
    public var dismissal: IOSDismissal
    /// The same presentation as SwiftUI modifiers.
    public var swiftui: SwiftUISheetConfiguration

    public init(
        detents: [DetentID], customDetentHeights: [CustomDetentHeight],
        selectedDetentIdentifier: DetentID, largestUndimmedDetentIdentifier: DetentID?, prefersGrabberVisible: Bool,
        prefersScrollingExpandsWhenScrolledToEdge: Bool, prefersEdgeAttachedInCompactHeight: Bool,
        widthFollowsPreferredContentSizeWhenEdgeAttached: Bool, preferredCornerRadius: Double?,
        isModalInPresentation: Bool, modalPresentationStyle: ModalPresentationStyle, dismissal: IOSDismissal,
        swiftui: SwiftUISheetConfiguration
    ) {
        self.detents = detents; self.customDetentHeights = customDetentHeights
        self.selectedDetentIdentifier = selectedDetentIdentifier
        self.largestUndimmedDetentIdentifier = largestUndimmedDetentIdentifier
        self.prefersGrabberVisible = prefersGrabberVisible
        self.prefersScrollingExpandsWhenScrolledToEdge = prefersScrollingExpandsWhenScrolledToEdge
        self.prefersEdgeAttachedInCompactHeight = prefersEdgeAttachedInCompactHeight
        self.widthFollowsPreferredContentSizeWhenEdgeAttached = widthFollowsPreferredContentSizeWhenEdgeAttached
        self.preferredCornerRadius = preferredCornerRadius; self.isModalInPresentation = isModalInPresentation
        self.modalPresentationStyle = modalPresentationStyle; self.dismissal = dismissal; self.swiftui = swiftui
    }
}

/// `UIModalPresentationStyle` names.
public enum ModalPresentationStyle: String, Sendable, CaseIterable {
    /// iPhone: `sheetPresentationController` configures it (001).
    case pageSheet
    /// iPad card sheets: nothing anchors a popover to them; `sheetPresentationController` configures it (001).
    case formSheet
    /// iPad: configure `popoverPresentationController.adaptiveSheetPresentationController` (001).
    case popover
}

/// The gestures UIKit will honour, given `isModalInPresentation` and the delegate.
public struct IOSDismissal: Sendable, Equatable {
    /// A swipe down dismisses.
    public var swipe: Bool
    /// A tap on the dimming view dismisses.
    public var tapScrim: Bool
    /// The combination needs a `UIAdaptivePresentationControllerDelegate` whose
    /// `presentationControllerShouldDismiss` answers `swipe` while the sheet is being dragged and
    /// `tapScrim` otherwise: UIKit has no separate switch for the two gestures.
    public var requiresDelegate: Bool
    public init(swipe: Bool, tapScrim: Bool, requiresDelegate: Bool) {
        self.swipe = swipe; self.tapScrim = tapScrim; self.requiresDelegate = requiresDelegate
    }
}

/// A SwiftUI `PresentationDetent`: `.medium`, `.large` or `.height(height)`.
public struct SwiftUIDetent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable { case medium, large, height }
    public var kind: Kind
    /// Points, for `.height`; `nil` otherwise.
    public var height: Double?
    public init(kind: Kind, height: Double? = nil) { self.kind = kind; self.height = height }
}

/// `presentationBackgroundInteraction`: `.enabled(upThrough:)` or `.disabled`.
public struct SwiftUIBackgroundInteraction: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable { case enabled, disabled }
    public var kind: Kind
    /// The largest detent that lets the background take touches; `nil` when disabled.
    public var upThrough: SwiftUIDetent?
    public init(kind: Kind, upThrough: SwiftUIDetent? = nil) { self.kind = kind; self.upThrough = upThrough }
}

/// SwiftUI's sheet modifiers (iOS 16.4+), as 003 and 004 present sheets.
public struct SwiftUISheetConfiguration: Sendable, Equatable {
    /// `presentationDetents(_:selection:)`, smallest first.
    public var presentationDetents: [SwiftUIDetent]
    /// The `selection` binding's initial value; always one of `presentationDetents`.
    public var selection: SwiftUIDetent
    /// `presentationDragIndicator`: `visible` or `hidden`.
    public var presentationDragIndicator: Visibility
    public var presentationBackgroundInteraction: SwiftUIBackgroundInteraction
    /// `presentationContentInteraction`: `resizes` when scrolling at the edge grows the sheet, else `scrolls`.
    public var presentationContentInteraction: ContentInteraction
    /// `presentationCornerRadius`; `nil` keeps the system default.
    public var presentationCornerRadius: Double?
    /// `interactiveDismissDisabled`: SwiftUI has one switch for swipe and scrim tap; it follows the swipe
    /// (and the confirmation), since a refused scrim tap cannot be expressed without UIKit.
    public var interactiveDismissDisabled: Bool

    public enum Visibility: String, Sendable, CaseIterable { case visible, hidden }
    public enum ContentInteraction: String, Sendable, CaseIterable { case scrolls, resizes }

    public init(
        presentationDetents: [SwiftUIDetent], selection: SwiftUIDetent, presentationDragIndicator: Visibility,
        presentationBackgroundInteraction: SwiftUIBackgroundInteraction, presentationContentInteraction: ContentInteraction,
        presentationCornerRadius: Double?, interactiveDismissDisabled: Bool
    ) {
        self.presentationDetents = presentationDetents; self.selection = selection
        self.presentationDragIndicator = presentationDragIndicator
        self.presentationBackgroundInteraction = presentationBackgroundInteraction
        self.presentationContentInteraction = presentationContentInteraction
        self.presentationCornerRadius = presentationCornerRadius
        self.interactiveDismissDisabled = interactiveDismissDisabled
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
    /// Always true. 000: "On Android, all sheets are resizable"; Material 3 turns every drag off with it, so a
    /// sheet that must not be swiped away keeps gestures and vetoes `Hidden` (`confirmValueChange`) instead.
    public var sheetGesturesEnabled: Bool
    public var shouldDismissOnClickOutside: Bool
    /// Always true: Back always offers a way out, through the confirm dialog when nothing else does.
    public var shouldDismissOnBackPress: Bool
    /// `confirmValueChange` must ask (in a dialog) before the sheet goes `Hidden` (`confirmValueChange.hidden == .confirm`).
    public var confirmValueChangeRequiresDialog: Bool
    /// What `SheetState`'s `confirmValueChange` answers for `SheetValue.Hidden`.
    public var confirmValueChange: AndroidConfirmValueChange
    /// `ModalBottomSheet(scrimColor:)`: the sheet values at which the scrim is drawn.
    public var scrim: AndroidScrim
    /// `ModalBottomSheet(shape:)`.
    public var shape: AndroidShape
    /// `ModalBottomSheetProperties`, as Material 3 groups them (the same values as the members above).
    public var properties: AndroidSheetProperties
    /// Pad the content by the IME (`Modifier.imePadding()`): the sheet grows by the keyboard.
    public var imePadding: Bool

    public init(
        skipPartiallyExpanded: Bool, initialValue: AndroidSheetValue, dragHandle: Bool, sheetGesturesEnabled: Bool,
        shouldDismissOnClickOutside: Bool, shouldDismissOnBackPress: Bool, confirmValueChangeRequiresDialog: Bool,
        confirmValueChange: AndroidConfirmValueChange, scrim: AndroidScrim, shape: AndroidShape,
        properties: AndroidSheetProperties, imePadding: Bool
    ) {
        self.skipPartiallyExpanded = skipPartiallyExpanded; self.initialValue = initialValue
        self.dragHandle = dragHandle; self.sheetGesturesEnabled = sheetGesturesEnabled
        self.shouldDismissOnClickOutside = shouldDismissOnClickOutside
        self.shouldDismissOnBackPress = shouldDismissOnBackPress
        self.confirmValueChangeRequiresDialog = confirmValueChangeRequiresDialog
        self.confirmValueChange = confirmValueChange; self.scrim = scrim; self.shape = shape
        self.properties = properties; self.imePadding = imePadding
    }
}

/// The answer of `confirmValueChange` for `SheetValue.Hidden`.
public enum HiddenChange: String, Sendable, CaseIterable {
    /// Return true.
    case allow
    /// Return false: the sheet springs back (it still resizes).
    case veto
    /// Return false and show the confirm dialog; hide the sheet when the user confirms.
    case confirm
}

/// `confirmValueChange`, per target value (only `Hidden` is ever refused).
public struct AndroidConfirmValueChange: Sendable, Equatable {
    public var hidden: HiddenChange
    public init(hidden: HiddenChange) { self.hidden = hidden }
}

/// Where the scrim is drawn: `BottomSheetDefaults.ScrimColor` at these values, `Color.Transparent` at the others.
/// A `ModalBottomSheet` still takes every touch behind it; only the dimming follows `nonModalUpTo`.
public struct AndroidScrim: Sendable, Equatable {
    public var dimmedAt: [AndroidSheetValue]
    public init(dimmedAt: [AndroidSheetValue]) { self.dimmedAt = dimmedAt }
}

/// The sheet's shape: top corners rounded by `topCornerRadius` dp; `nil` keeps `BottomSheetDefaults.ExpandedShape`.
public struct AndroidShape: Sendable, Equatable {
    public var topCornerRadius: Double?
    public init(topCornerRadius: Double?) { self.topCornerRadius = topCornerRadius }
}

/// `ModalBottomSheetProperties(shouldDismissOnBackPress:shouldDismissOnClickOutside:)`.
public struct AndroidSheetProperties: Sendable, Equatable {
    public var shouldDismissOnBackPress: Bool
    public var shouldDismissOnClickOutside: Bool
    public init(shouldDismissOnBackPress: Bool, shouldDismissOnClickOutside: Bool) {
        self.shouldDismissOnBackPress = shouldDismissOnBackPress
        self.shouldDismissOnClickOutside = shouldDismissOnClickOutside
    }
}

/// Material 3 `SheetValue` names.
public enum AndroidSheetValue: String, Sendable, CaseIterable {
    case partiallyExpanded = "PartiallyExpanded"
    case expanded = "Expanded"
}

/// Exactly how to present a sheet on iOS, in `UISheetPresentationController`'s and SwiftUI's terms,
/// built from a decision's `ios` block.
///
/// Pure and platform-independent (tested on Linux): the UIKit and SwiftUI adapters only copy its
/// members onto the system API. Values a newer server adds that this client does not know (a detent
/// identifier, a presentation style) are left out or replaced by the nearest known one, never a crash.
public struct SheetPresentationPlan: Sendable, Equatable {
    /// One detent of the plan.
    public enum Detent: Sendable, Hashable {
        /// The system medium detent (about half the screen).
        case medium
        /// The system large detent (full height).
        case large
        /// A custom detent of a fixed height in points (`content`: the measured content height).
        case custom(identifier: String, height: Double)

        /// The identifier UIKit uses for it (`com.apple.UIKit.medium` for the system ones is UIKit's business: this is sheetd's).
        public var identifier: String {
            switch self {
            case .medium: "medium"
            case .large: "large"
            case .custom(let identifier, _): identifier
            }
        }
    }

    /// How the sheet is presented.
    public enum Style: Sendable, Hashable {
        /// A page sheet (`.pageSheet` / SwiftUI `.sheet`).
        case sheet
        /// A popover (iPad; `.popover`).
        case popover
        /// A sheet attached to the bottom edge in compact height.
        case edgeAttached
    }

    /// The detents, smallest first; never empty (falls back to `[.large]`).
    public var detents: [Detent]
    /// The detent the sheet rests at; always one of ``detents``.
    public var selectedDetent: Detent
    /// The largest detent at which what is behind stays undimmed and interactive; nil: dimmed at every detent.
    public var largestUndimmedDetent: Detent?
    /// Whether the grabber shows (`prefersGrabberVisible`; SwiftUI `presentationDragIndicator(.visible)`).
    public var prefersGrabberVisible: Bool
    /// `prefersScrollingExpandsWhenScrolledToEdge` (SwiftUI `presentationContentInteraction(.resizes)` when true).
    public var prefersScrollingExpandsWhenScrolledToEdge: Bool
    /// `prefersEdgeAttachedInCompactHeight`.
    public var prefersEdgeAttachedInCompactHeight: Bool
    /// `widthFollowsPreferredContentSizeWhenEdgeAttached`.
    public var widthFollowsPreferredContentSizeWhenEdgeAttached: Bool
    /// `preferredCornerRadius` in points; nil: the system's.
    public var preferredCornerRadius: Double?
    /// `isModalInPresentation` (SwiftUI `interactiveDismissDisabled`): swipe and scrim taps do not dismiss.
    public var isModalInPresentation: Bool
    /// Sheet, popover or edge-attached.
    public var style: Style

    /// A plan with every member.
    public init(detents: [Detent], selectedDetent: Detent, largestUndimmedDetent: Detent? = nil, prefersGrabberVisible: Bool = false,
                prefersScrollingExpandsWhenScrolledToEdge: Bool = true, prefersEdgeAttachedInCompactHeight: Bool = false,
                widthFollowsPreferredContentSizeWhenEdgeAttached: Bool = false, preferredCornerRadius: Double? = nil,
                isModalInPresentation: Bool = false, style: Style = .sheet) {
        let detents = detents.isEmpty ? [Detent.large] : detents
        self.detents = detents
        self.selectedDetent = detents.contains(selectedDetent) ? selectedDetent : detents[detents.count - 1]
        self.largestUndimmedDetent = largestUndimmedDetent.flatMap { detents.contains($0) ? $0 : nil }
        self.prefersGrabberVisible = prefersGrabberVisible
        self.prefersScrollingExpandsWhenScrolledToEdge = prefersScrollingExpandsWhenScrolledToEdge
        self.prefersEdgeAttachedInCompactHeight = prefersEdgeAttachedInCompactHeight
        self.widthFollowsPreferredContentSizeWhenEdgeAttached = widthFollowsPreferredContentSizeWhenEdgeAttached
        self.preferredCornerRadius = preferredCornerRadius
        self.isModalInPresentation = isModalInPresentation
        self.style = style
    }

    /// The plan of a decision's `ios` block; `presentationStyle` is the sheet's (``SheetPresentation/presentationStyle``).
    ///
    /// A custom detent without a height in `customDetentHeights` (or with a height that is not a positive
    /// number) and an unknown detent identifier are left out; with no detent left, the plan uses `large`.
    public init(ios: IosSheet, presentationStyle: PresentationStyle = .sheet) {
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
        let style: Style =
            switch presentationStyle {
            case .popover: .popover
            case .edgeAttached: .edgeAttached
            default: .sheet
            }
        self.init(
            detents: detents, selectedDetent: detent(ios.selectedDetentIdentifier) ?? detents.last ?? .large,
            largestUndimmedDetent: ios.largestUndimmedDetentIdentifier.flatMap(detent),
            prefersGrabberVisible: ios.prefersGrabberVisible,
            prefersScrollingExpandsWhenScrolledToEdge: ios.prefersScrollingExpandsWhenScrolledToEdge,
            prefersEdgeAttachedInCompactHeight: ios.prefersEdgeAttachedInCompactHeight,
            widthFollowsPreferredContentSizeWhenEdgeAttached: ios.widthFollowsPreferredContentSizeWhenEdgeAttached,
            preferredCornerRadius: ios.preferredCornerRadius.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil },
            isModalInPresentation: ios.isModalInPresentation, style: style)
    }

    /// The plan of a presented sheet, when it carries an `ios` block (nil for an Android decision).
    public init?(_ sheet: SheetPresentation) {
        guard let ios = sheet.ios else { return nil }
        self.init(ios: ios, presentationStyle: sheet.presentationStyle)
    }

    /// Whether the sheet leaves what is behind it interactive at some detent (SwiftUI
    /// `presentationBackgroundInteraction(.enabled(upThrough:))`).
    public var allowsBackgroundInteraction: Bool { largestUndimmedDetent != nil }

    /// Whether the sheet can be resized by dragging (more than one detent).
    public var isResizable: Bool { detents.count > 1 }
}

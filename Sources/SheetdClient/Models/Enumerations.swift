// The API's string enumerations (openapi.yaml `components.schemas` and inline enums), open to new values.

/// The client platform a decision is for.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct Platform: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `ios`.
    public static let ios: Self = "ios"
    /// `android`.
    public static let android: Self = "android"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.ios, .android]
}

/// What a sheet is for.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct SheetKind: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `cards`.
    public static let cards: Self = "cards"
    /// `informational`.
    public static let informational: Self = "informational"
    /// `action`.
    public static let action: Self = "action"
    /// `input`.
    public static let input: Self = "input"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.cards, .informational, .action, .input]
}

/// A sheet's size: `content` (sized to its content), `large`, or `medium` (medium-resizable).
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct SheetSize: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `content`.
    public static let content: Self = "content"
    /// `large`.
    public static let large: Self = "large"
    /// `medium`.
    public static let medium: Self = "medium"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.content, .large, .medium]
}

/// A sheet's anatomy: `strict` has a 56 pt sticky header with the title; `flexible` has none.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct SheetStyle: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `strict`.
    public static let strict: Self = "strict"
    /// `flexible`.
    public static let flexible: Self = "flexible"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.strict, .flexible]
}

/// The largest detent at which a sheet leaves what is behind it undimmed and interactive.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct UndimmedDetent: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `medium`.
    public static let medium: Self = "medium"
    /// `large`.
    public static let large: Self = "large"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.medium, .large]
}

/// A detent: the system `medium` and `large`, or the custom `content` detent (the measured content height).
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct DetentId: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `medium`.
    public static let medium: Self = "medium"
    /// `large`.
    public static let large: Self = "large"
    /// `content`.
    public static let content: Self = "content"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.medium, .large, .content]
}

/// The control a sheet shows for closing it.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct DismissAffordance: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `none`.
    public static let none: Self = "none"
    /// `closeIcon`.
    public static let closeIcon: Self = "closeIcon"
    /// `cancelButton`.
    public static let cancelButton: Self = "cancelButton"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.none, .closeIcon, .cancelButton]
}

/// How an opened sheet joins the user's stack: nested on the top (`push`) or as the next step of a flow (`replace`).
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct OpenMode: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `push`.
    public static let push: Self = "push"
    /// `replace`.
    public static let replace: Self = "replace"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.push, .replace]
}

/// Why the decision is what it is: one stable code, by precedence.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct DecisionReason: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `stack`.
    public static let stack: Self = "stack"
    /// `cards-available`.
    public static let cardsAvailable: Self = "cards-available"
    /// `latched`.
    public static let latched: Self = "latched"
    /// `no-cards`.
    public static let noCards: Self = "no-cards"
    /// `no-sheet-for-screen`.
    public static let noSheetForScreen: Self = "no-sheet-for-screen"
    /// `outside-schedule`: before the sheet's `schedule.start` or from its `schedule.end` on.
    public static let outsideSchedule: Self = "outside-schedule"
    /// `not-in-audience`: the context or the user does not match the sheet's `audience`.
    public static let notInAudience: Self = "not-in-audience"
    /// `cooling-down`: dismissed less than `cooldownSeconds` ago.
    public static let coolingDown: Self = "cooling-down"
    /// `frequency-capped`: `frequency.max` impressions in the last `periodSeconds`.
    public static let frequencyCapped: Self = "frequency-capped"
    /// `global-cap`: the settings' cap on card-sheet impressions is reached.
    public static let globalCap: Self = "global-cap"
    /// `min-interval`: the last card-sheet impression is more recent than the settings' minimum interval.
    public static let minInterval: Self = "min-interval"
    /// The values this client was built with.
    public static let knownValues: [Self] = [
        .stack, .cardsAvailable, .latched, .noCards, .noSheetForScreen, .outsideSchedule, .notInAudience, .coolingDown,
        .frequencyCapped, .globalCap, .minInterval,
    ]
}

/// How the user dismissed a sheet.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct DismissalMethod: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `swipe`.
    public static let swipe: Self = "swipe"
    /// `scrim`.
    public static let scrim: Self = "scrim"
    /// `closeButton`.
    public static let closeButton: Self = "closeButton"
    /// `cancelButton`.
    public static let cancelButton: Self = "cancelButton"
    /// `action`.
    public static let action: Self = "action"
    /// `programmatic`.
    public static let programmatic: Self = "programmatic"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.swipe, .scrim, .closeButton, .cancelButton, .action, .programmatic]
}

/// How a sheet arrives from the one before it.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct TransitionMode: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `push`.
    public static let push: Self = "push"
    /// `replaceContent`.
    public static let replaceContent: Self = "replaceContent"
    /// `resize`.
    public static let resize: Self = "resize"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.push, .replaceContent, .resize]
}

/// How a sheet is presented on the device: a sheet, a popover (iPad), or edge-attached.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct PresentationStyle: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `sheet`.
    public static let sheet: Self = "sheet"
    /// `popover`.
    public static let popover: Self = "popover"
    /// `edgeAttached`.
    public static let edgeAttached: Self = "edgeAttached"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.sheet, .popover, .edgeAttached]
}

/// The size of a presented sheet's primary button.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct PrimaryButtonSize: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `medium`.
    public static let medium: Self = "medium"
    /// `small`.
    public static let small: Self = "small"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.medium, .small]
}

/// A Material 3 `SheetValue` a bottom sheet starts at.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct AndroidSheetValue: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `PartiallyExpanded`.
    public static let partiallyExpanded: Self = "PartiallyExpanded"
    /// `Expanded`.
    public static let expanded: Self = "Expanded"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.partiallyExpanded, .expanded]
}

/// The device idiom in a decision context.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct Idiom: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `phone`.
    public static let phone: Self = "phone"
    /// `pad`.
    public static let pad: Self = "pad"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.phone, .pad]
}

/// The interface orientation in a decision context.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct Orientation: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `portrait`.
    public static let portrait: Self = "portrait"
    /// `landscape`.
    public static let landscape: Self = "landscape"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.portrait, .landscape]
}

/// What a sheet does while the keyboard is up: `growByKeyboard` keeps its detent and rises by the keyboard, `largeDetent` rests at large until the keyboard hides.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct KeyboardAdjustment: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `none`.
    public static let none: Self = "none"
    /// `growByKeyboard`.
    public static let growByKeyboard: Self = "growByKeyboard"
    /// `largeDetent`.
    public static let largeDetent: Self = "largeDetent"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.none, .growByKeyboard, .largeDetent]
}

/// The `modalPresentationStyle` of the presented view controller.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct ModalPresentationStyle: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `pageSheet`.
    public static let pageSheet: Self = "pageSheet"
    /// `formSheet`.
    public static let formSheet: Self = "formSheet"
    /// `popover`.
    public static let popover: Self = "popover"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.pageSheet, .formSheet, .popover]
}

/// The kind of a SwiftUI `PresentationDetent`.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct SwiftUIDetentKind: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `medium`.
    public static let medium: Self = "medium"
    /// `large`.
    public static let large: Self = "large"
    /// `height`.
    public static let height: Self = "height"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.medium, .large, .height]
}

/// A SwiftUI `Visibility` (of the drag indicator).
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct DragIndicatorVisibility: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `visible`.
    public static let visible: Self = "visible"
    /// `hidden`.
    public static let hidden: Self = "hidden"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.visible, .hidden]
}

/// Whether SwiftUI's `presentationBackgroundInteraction` is enabled.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct BackgroundInteractionKind: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `enabled`.
    public static let enabled: Self = "enabled"
    /// `disabled`.
    public static let disabled: Self = "disabled"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.enabled, .disabled]
}

/// SwiftUI's `presentationContentInteraction`: scrolling at the edge resizes the sheet or scrolls the content.
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct ContentInteraction: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `scrolls`.
    public static let scrolls: Self = "scrolls"
    /// `resizes`.
    public static let resizes: Self = "resizes"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.scrolls, .resizes]
}

/// What Compose's `confirmValueChange` answers for `SheetValue.Hidden`: `allow`, `veto` (spring back) or `confirm` (ask first).
///
/// Open: a value a newer server adds decodes as itself (see ``OpenEnumeration``).
public struct HiddenConfirmation: OpenEnumeration {
    /// The value as it appears in JSON.
    public let rawValue: String
    /// Wraps any raw value, known or not.
    public init(rawValue: String) { self.rawValue = rawValue }
    /// `allow`.
    public static let allow: Self = "allow"
    /// `veto`.
    public static let veto: Self = "veto"
    /// `confirm`.
    public static let confirm: Self = "confirm"
    /// The values this client was built with.
    public static let knownValues: [Self] = [.allow, .veto, .confirm]
}

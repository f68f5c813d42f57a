package dev.sheetd.client

// The API's string enumerations (openapi.yaml), open to new values: a value a newer server adds decodes
// as itself with `isKnown` false, so an app built today keeps working. Switch with an `else` branch.

/** An enumeration value as it appears in JSON, known to this client or not. */
abstract class OpenEnum(val rawValue: String) {
    /** Whether this client was built with the value. */
    abstract val isKnown: Boolean
    override fun equals(other: Any?) = other != null && other.javaClass == javaClass && (other as OpenEnum).rawValue == rawValue
    override fun hashCode() = rawValue.hashCode()
    override fun toString() = rawValue
}

/** The platform a decision's settings are for. */
class Platform(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val IOS = Platform("ios")
        @JvmField val ANDROID = Platform("android")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("ios", "android")
    }
}

/** Phone or tablet (`pad`). */
class Idiom(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val PHONE = Idiom("phone")
        @JvmField val PAD = Idiom("pad")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("phone", "pad")
    }
}

/** Portrait or landscape. */
class Orientation(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val PORTRAIT = Orientation("portrait")
        @JvmField val LANDSCAPE = Orientation("landscape")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("portrait", "landscape")
    }
}

/** What a sheet is for. */
class SheetKind(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val CARDS = SheetKind("cards")
        @JvmField val INFORMATIONAL = SheetKind("informational")
        @JvmField val ACTION = SheetKind("action")
        @JvmField val INPUT = SheetKind("input")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("cards", "informational", "action", "input")
    }
}

/** The design system's sizes. */
class SheetSize(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val CONTENT = SheetSize("content")
        @JvmField val LARGE = SheetSize("large")
        @JvmField val MEDIUM = SheetSize("medium")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("content", "large", "medium")
    }
}

/** A resting height's identifier. */
class DetentId(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val MEDIUM = DetentId("medium")
        @JvmField val LARGE = DetentId("large")
        @JvmField val CONTENT = DetentId("content")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("medium", "large", "content")
    }
}

/** The visible control that dismisses a sheet besides gestures. */
class DismissAffordance(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val NONE = DismissAffordance("none")
        @JvmField val CLOSE_ICON = DismissAffordance("closeIcon")
        @JvmField val CANCEL_BUTTON = DismissAffordance("cancelButton")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("none", "closeIcon", "cancelButton")
    }
}

/** How a sheet is opened: nested (`push`) or as a flow's next step (`replace`). */
class OpenMode(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val PUSH = OpenMode("push")
        @JvmField val REPLACE = OpenMode("replace")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("push", "replace")
    }
}

/** Why the decision came out as it did. */
class DecisionReason(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val STACK = DecisionReason("stack")
        @JvmField val CARDS_AVAILABLE = DecisionReason("cards-available")
        @JvmField val LATCHED = DecisionReason("latched")
        @JvmField val NO_CARDS = DecisionReason("no-cards")
        @JvmField val NO_SHEET_FOR_SCREEN = DecisionReason("no-sheet-for-screen")
        @JvmField val OUTSIDE_SCHEDULE = DecisionReason("outside-schedule")
        @JvmField val NOT_IN_AUDIENCE = DecisionReason("not-in-audience")
        @JvmField val COOLING_DOWN = DecisionReason("cooling-down")
        @JvmField val FREQUENCY_CAPPED = DecisionReason("frequency-capped")
        @JvmField val GLOBAL_CAP = DecisionReason("global-cap")
        @JvmField val MIN_INTERVAL = DecisionReason("min-interval")
        @JvmField val HOLDOUT = DecisionReason("holdout")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("stack", "cards-available", "latched", "no-cards", "no-sheet-for-screen", "outside-schedule", "not-in-audience", "cooling-down", "frequency-capped", "global-cap", "min-interval", "holdout")
    }
}

/** How a sheet was dismissed, as the server counts it (a card sheet latches unless `programmatic`). */
class DismissalMethod(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val SWIPE = DismissalMethod("swipe")
        @JvmField val SCRIM = DismissalMethod("scrim")
        @JvmField val CLOSE_BUTTON = DismissalMethod("closeButton")
        @JvmField val CANCEL_BUTTON = DismissalMethod("cancelButton")
        @JvmField val ACTION = DismissalMethod("action")
        @JvmField val PROGRAMMATIC = DismissalMethod("programmatic")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("swipe", "scrim", "closeButton", "cancelButton", "action", "programmatic")
    }
}

/** How the presented top arrives from the sheet before it. */
class TransitionMode(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val PUSH = TransitionMode("push")
        @JvmField val REPLACE_CONTENT = TransitionMode("replaceContent")
        @JvmField val RESIZE = TransitionMode("resize")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("push", "replaceContent", "resize")
    }
}

/** How the sheet is attached to the screen (always `sheet` on Android). */
class PresentationStyle(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val SHEET = PresentationStyle("sheet")
        @JvmField val POPOVER = PresentationStyle("popover")
        @JvmField val EDGE_ATTACHED = PresentationStyle("edgeAttached")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("sheet", "popover", "edgeAttached")
    }
}

/** The primary button's size. */
class ButtonSize(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val MEDIUM = ButtonSize("medium")
        @JvmField val SMALL = ButtonSize("small")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("medium", "small")
    }
}

/** What the sheet does while the keyboard is up. */
class KeyboardAdjustment(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val NONE = KeyboardAdjustment("none")
        @JvmField val GROW_BY_KEYBOARD = KeyboardAdjustment("growByKeyboard")
        @JvmField val LARGE_DETENT = KeyboardAdjustment("largeDetent")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("none", "growByKeyboard", "largeDetent")
    }
}

/** Material 3 `SheetValue` names. */
class SheetValue(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val PARTIALLY_EXPANDED = SheetValue("PartiallyExpanded")
        @JvmField val EXPANDED = SheetValue("Expanded")
        @JvmField val HIDDEN = SheetValue("Hidden")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("PartiallyExpanded", "Expanded", "Hidden")
    }
}

/** What `confirmValueChange` answers for `SheetValue.Hidden`: `allow`, `veto` (springs back) or `confirm` (ask in a dialog). */
class HiddenChange(rawValue: String) : OpenEnum(rawValue) {
    override val isKnown get() = rawValue in KNOWN
    companion object {
        @JvmField val ALLOW = HiddenChange("allow")
        @JvmField val VETO = HiddenChange("veto")
        @JvmField val CONFIRM = HiddenChange("confirm")
        /** The raw values this client was built with. */
        @JvmField val KNOWN: Set<String> = setOf("allow", "veto", "confirm")
    }
}

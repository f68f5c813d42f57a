package dev.sheetd.client

// The decision and the outcomes of the user routes (openapi.yaml), decoded leniently: members a newer
// server adds are ignored, enumeration values it adds are kept (see OpenEnum).

/** The decision for one user on one screen: whether a sheet is presented, which, and exactly how. */
data class Decision(
    val present: Boolean,
    val reason: DecisionReason,
    /** The sheets to display, bottom to top; empty when nothing is presented. */
    val stack: List<SheetPresentation>,
    /** Eligible card sheets that lost (to a higher priority or to the stack). */
    val yielded: List<String> = emptyList(),
    /** Card sheets held back by a campaign rule or an experiment's holdout. */
    val held: List<HeldSheet> = emptyList(),
    /** The rules applied, in plain words. */
    val trace: List<String> = emptyList()
) {
    /** The presented sheet: the top of [stack], or null. */
    val sheet: SheetPresentation? get() = stack.lastOrNull()

    companion object {
        /** Nothing presented (for fakes and previews). */
        @JvmStatic
        fun noSheet(reason: DecisionReason = DecisionReason.NO_SHEET_FOR_SCREEN) = Decision(false, reason, emptyList())

        /** `sheet` presented alone (for fakes and previews). */
        @JvmStatic
        fun presenting(sheet: SheetPresentation) = Decision(true, DecisionReason.CARDS_AVAILABLE, listOf(sheet))

        /** Decodes a decision body. */
        @JvmStatic
        fun fromJson(text: String): Decision = decode(JsonObject.parse(text, "decision"))

        internal fun decode(o: JsonObject) = Decision(
            present = o.bool("present"),
            reason = DecisionReason(o.string("reason")),
            stack = o.objects("stack").map(SheetPresentation.Companion::decode),
            yielded = o.strings("yielded"),
            held = o.objects("held").map { HeldSheet(it.string("sheetId"), DecisionReason(it.string("reason"))) },
            trace = o.strings("trace")
        )
    }
}

/** A card sheet held back, and the first rule holding it. */
data class HeldSheet(val sheetId: String, val reason: DecisionReason)

/** A resting height: dp for `content`, null for the system's medium and large. */
data class Detent(val id: DetentId, val height: Double? = null)

/** The sticky 56 dp header (strict sheets, and sheets whose affordance is a Cancel button). */
data class SheetHeader(val title: String, val height: Double = 56.0, val sticky: Boolean = true, val cancelButton: Boolean = false)

/** The sticky primary button slot. */
data class PrimaryButtonSlot(val label: String, val size: ButtonSize, val sticky: Boolean = true)

/** How the presented top arrived from the sheet before it. */
data class Transition(val from: String, val mode: TransitionMode, val waitForContentHeight: Boolean)

/** The sheet's experiment and the user's arm; `payload` is the arm's JSON object as parsed values. */
data class PresentedExperiment(val id: String, val arm: String, val payload: Map<String, Any?>?)

/** One presented sheet: the platform-neutral facts and the `android` block (Material 3). */
data class SheetPresentation(
    val id: String,
    val kind: SheetKind,
    val variant: SheetSize,
    val detents: List<Detent>,
    val selectedDetent: DetentId,
    val grabberVisible: Boolean = true,
    val swipeToDismiss: Boolean = true,
    val tapScrimToDismiss: Boolean = true,
    val largestUndimmedDetent: DetentId? = null,
    val dismissAffordance: DismissAffordance = DismissAffordance.NONE,
    val confirmBeforeDismiss: Boolean = false,
    val expandsOnScrollToEdge: Boolean = true,
    val parentScalesBehind: Boolean = false,
    val awaitingContentHeight: Boolean = false,
    val scrollable: Boolean = true,
    val scrimAccessibleAsClose: Boolean = true,
    val header: SheetHeader? = null,
    val primaryButton: PrimaryButtonSlot? = null,
    val presentationStyle: PresentationStyle = PresentationStyle.SHEET,
    val transition: Transition? = null,
    val keyboardAdjustment: KeyboardAdjustment = KeyboardAdjustment.NONE,
    val experiment: PresentedExperiment? = null,
    /** The Material 3 block; null in a decision made for another platform. */
    val android: AndroidSheet? = null
) {
    companion object {
        internal fun decode(o: JsonObject) = SheetPresentation(
            id = o.string("id"),
            kind = SheetKind(o.string("kind")),
            variant = SheetSize(o.string("variant")),
            detents = o.objects("detents").map { Detent(DetentId(it.string("id")), it.doubleOrNull("height")) },
            selectedDetent = DetentId(o.string("selectedDetent")),
            grabberVisible = o.bool("grabberVisible"),
            swipeToDismiss = o.bool("swipeToDismiss"),
            tapScrimToDismiss = o.bool("tapScrimToDismiss"),
            largestUndimmedDetent = o.stringOrNull("largestUndimmedDetent")?.let(::DetentId),
            dismissAffordance = DismissAffordance(o.string("dismissAffordance")),
            confirmBeforeDismiss = o.bool("confirmBeforeDismiss"),
            expandsOnScrollToEdge = o.bool("expandsOnScrollToEdge"),
            parentScalesBehind = o.bool("parentScalesBehind"),
            awaitingContentHeight = o.bool("awaitingContentHeight"),
            scrollable = o.bool("scrollable"),
            scrimAccessibleAsClose = o.boolOr("scrimAccessibleAsClose", o.bool("tapScrimToDismiss")),
            header = o.objOrNull("header")?.let {
                SheetHeader(it.string("title"), it.doubleOrNull("height") ?: 56.0, it.boolOr("sticky", true), it.boolOr("cancelButton", false))
            },
            primaryButton = o.objOrNull("primaryButton")?.let {
                PrimaryButtonSlot(it.string("label"), ButtonSize(it.string("size")), it.boolOr("sticky", true))
            },
            presentationStyle = PresentationStyle(o.stringOrNull("presentationStyle") ?: "sheet"),
            transition = o.objOrNull("transition")?.let {
                Transition(it.string("from"), TransitionMode(it.string("mode")), it.boolOr("waitForContentHeight", false))
            },
            keyboardAdjustment = KeyboardAdjustment(o.stringOrNull("keyboardAdjustment") ?: "none"),
            experiment = o.objOrNull("experiment")?.let {
                PresentedExperiment(it.string("id"), it.string("arm"), it.objOrNull("payload")?.members)
            },
            android = o.objOrNull("android")?.let(AndroidSheet.Companion::decode)
        )
    }
}

/** The `android` block: Material 3 `ModalBottomSheet` / `SheetState` settings, as the server names them. */
data class AndroidSheet(
    val skipPartiallyExpanded: Boolean,
    val initialValue: SheetValue,
    val dragHandle: Boolean,
    val sheetGesturesEnabled: Boolean,
    val shouldDismissOnClickOutside: Boolean,
    val shouldDismissOnBackPress: Boolean,
    val confirmValueChangeRequiresDialog: Boolean,
    /** What `confirmValueChange` answers for `Hidden`. */
    val hidden: HiddenChange,
    /** The sheet values at which the scrim dims. */
    val dimmedAt: List<SheetValue>,
    /** Top corner radius in dp; null keeps `BottomSheetDefaults.ExpandedShape`. */
    val topCornerRadius: Double?,
    val imePadding: Boolean
) {
    companion object {
        internal fun decode(o: JsonObject): AndroidSheet {
            val properties = o.objOrNull("properties")
            return AndroidSheet(
                skipPartiallyExpanded = o.bool("skipPartiallyExpanded"),
                initialValue = SheetValue(o.string("initialValue")),
                dragHandle = o.boolOr("dragHandle", true),
                sheetGesturesEnabled = o.boolOr("sheetGesturesEnabled", true),
                shouldDismissOnClickOutside = o.boolOr("shouldDismissOnClickOutside", properties?.boolOr("shouldDismissOnClickOutside", true) ?: true),
                shouldDismissOnBackPress = o.boolOr("shouldDismissOnBackPress", properties?.boolOr("shouldDismissOnBackPress", true) ?: true),
                confirmValueChangeRequiresDialog = o.boolOr("confirmValueChangeRequiresDialog", false),
                hidden = HiddenChange(o.objOrNull("confirmValueChange")?.stringOrNull("hidden") ?: "allow"),
                dimmedAt = o.objOrNull("scrim")?.strings("dimmedAt")?.map(::SheetValue) ?: listOf(SheetValue.PARTIALLY_EXPANDED, SheetValue.EXPANDED),
                topCornerRadius = o.objOrNull("shape")?.doubleOrNull("topCornerRadius"),
                imePadding = o.boolOr("imePadding", false)
            )
        }
    }
}

/** The stored count after a count report. */
data class CountOutcome(val containerId: String, val filter: String, val count: Int, val changed: Boolean, val applied: Boolean)

/** The user's stack after a dismissal, and whether the sheet is now latched (card sheets). */
data class DismissalOutcome(val stack: List<String>, val latched: Boolean)

/** The user's stack after an opening. */
data class PresentationOutcome(val stack: List<String>)

/** The stored content height. */
data class ContentHeightOutcome(val sheetId: String, val platform: Platform, val height: Double)

/** The user's impression total for the sheet. */
data class ImpressionOutcome(val sheetId: String, val impressions: Int)

/** Whether a conversion counted for an experiment arm. */
data class ConversionOutcome(val sheetId: String, val experimentId: String?, val goal: String?, val counted: Boolean, val arm: String?)

/** The global campaign settings. */
data class GlobalSettings(val globalCapMax: Int?, val globalCapPeriodSeconds: Int?, val minIntervalSeconds: Int?)

/** What is stored about the user (the support view). */
data class UserState(
    val userId: String,
    val containers: List<Container>,
    val latches: List<Latch>,
    val stack: List<String>,
    val contentHeights: List<ContentHeightOutcome>,
    val impressions: List<Impressions>,
    val lastDismissals: List<LastDismissal>,
    val segments: List<String>
) {
    data class Container(val containerId: String, val filter: String, val count: Int, val seq: Int?)
    data class Latch(val sheetId: String, val count: Int)
    data class Impressions(val sheetId: String, val total: Int, val recent: List<String>)
    data class LastDismissal(val sheetId: String, val at: String)

    companion object {
        internal fun decode(o: JsonObject) = UserState(
            userId = o.string("userId"),
            containers = o.objects("containers").map { Container(it.string("containerId"), it.stringOrNull("filter") ?: "", it.int("count"), it.intOrNull("seq")) },
            latches = o.objects("latches").map { Latch(it.string("sheetId"), it.int("count")) },
            stack = o.objects("stack").map { it.string("sheetId") },
            contentHeights = o.objects("contentHeights").map { ContentHeightOutcome(it.string("sheetId"), Platform(it.string("platform")), it.double("height")) },
            impressions = o.objects("impressions").map { Impressions(it.string("sheetId"), it.int("total"), it.strings("recent")) },
            lastDismissals = o.objects("lastDismissals").map { LastDismissal(it.string("sheetId"), it.string("at")) },
            segments = o.strings("segments")
        )
    }
}

/** An `application/problem+json` body (RFC 9457). */
data class Problem(
    val type: String,
    val title: String,
    val status: Int,
    val detail: String,
    /** The invalid fields, by name, with the reason. */
    val invalidParams: List<InvalidParam>
) {
    data class InvalidParam(val name: String, val reason: String)

    companion object {
        internal fun decodeOrNull(text: String): Problem? = try {
            val o = JsonObject.parse(text, "problem")
            Problem(
                o.stringOrNull("type") ?: "about:blank", o.stringOrNull("title") ?: "", o.intOrNull("status") ?: 0,
                o.stringOrNull("detail") ?: "", o.objects("invalid-params").map { InvalidParam(it.stringOrNull("name") ?: "", it.stringOrNull("reason") ?: "") }
            )
        } catch (e: SheetdException) {
            null
        }
    }
}

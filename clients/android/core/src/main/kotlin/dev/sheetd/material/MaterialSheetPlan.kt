package dev.sheetd.material

import dev.sheetd.client.AndroidSheet
import dev.sheetd.client.DetentId
import dev.sheetd.client.DismissAffordance
import dev.sheetd.client.HiddenChange
import dev.sheetd.client.PrimaryButtonSlot
import dev.sheetd.client.SheetHeader
import dev.sheetd.client.SheetPresentation
import dev.sheetd.client.SheetValue

// The decision's `android` block as the exact settings Material Components (Views) and Compose Material 3
// take, as plain types: every choice is made and tested here, the adapters only copy values across.

/** `BottomSheetBehavior`'s state constants (the values Material Components defines). */
enum class BehaviorState(val value: Int) {
    EXPANDED(3), COLLAPSED(4), HIDDEN(5), HALF_EXPANDED(6)
}

/** What a peek height the adapter sets resolves to (Material's automatic peek would add a resting state sheetd does not have). */
enum class PeekHeight {
    /** Half the parent's height: a sheet that cannot hide rests at half, never lower. */
    HALF_OF_PARENT,
    /** The sheet's own measured height: collapsed is the same as expanded. */
    SHEET_HEIGHT
}

/** What Back or a touch outside the sheet does in a `BottomSheetDialog`. */
enum class DialogAction {
    /** Cancel the dialog (the sheet goes; the dismissal is reported). */
    DISMISS,
    /** Show the confirm dialog; dismiss only when the user confirms. */
    CONFIRM,
    /** Nothing (`setCanceledOnTouchOutside(false)`). */
    IGNORE
}

/** `BottomSheetBehavior` and `BottomSheetDialog(Fragment)` settings. */
data class ViewsSheetSettings(
    /** The state to set before showing. */
    val state: BehaviorState,
    /** `skipCollapsed`: always true; Material 3 sheets have no collapsed resting state (000: medium or full). */
    val skipCollapsed: Boolean,
    /** `isFitToContents`: true for sheets without a half state (content, large); false where a half state exists. */
    val fitToContents: Boolean,
    /** `halfExpandedRatio` (0.5: "opens to half the screen height"); null leaves Material's. */
    val halfExpandedRatio: Float?,
    /** `expandedOffset` in dp (the top of an expanded sheet, as Compose's `ModalBottomSheet`). */
    val expandedOffsetDp: Int,
    val peekHeight: PeekHeight,
    /** `isHideable`: false vetoes a drag to Hidden (the sheet springs back; it still resizes). */
    val hideable: Boolean,
    /** `isDraggable`: always true (000: "on Android, all sheets are resizable"). */
    val draggable: Boolean,
    /** The sheet's content view is `MATCH_PARENT` tall (large and medium sheets), else `WRAP_CONTENT`. */
    val fullHeight: Boolean,
    val back: DialogAction,
    val touchOutside: DialogAction,
    /** The behavior states at which the window is dimmed (`FLAG_DIM_BEHIND`), none dimmed at the others. */
    val dimmedAt: Set<BehaviorState>,
    /** Top corner radius in dp for the `MaterialShapeDrawable`; null keeps the theme's. */
    val topCornerRadiusDp: Float?,
    /** Add a `BottomSheetDragHandleView`. */
    val dragHandle: Boolean,
    /** `SOFT_INPUT_ADJUST_RESIZE` and IME insets padding: the sheet grows by the keyboard. */
    val adjustForIme: Boolean
)

/** What `confirmValueChange` answers for one target value. */
enum class ConfirmAnswer {
    /** Return true. */
    ALLOW,
    /** Return false: the sheet springs back. */
    REFUSE,
    /** Return false and show the confirm dialog; hide when the user confirms. */
    ASK
}

/** Compose Material 3 `ModalBottomSheet` / `rememberModalBottomSheetState` settings. */
data class ComposeSheetSettings(
    val skipPartiallyExpanded: Boolean,
    /** `PartiallyExpanded` or `Expanded`: expand after the first composition when `Expanded` and a half state exists. */
    val initialValue: SheetValue,
    val sheetGesturesEnabled: Boolean,
    val dragHandle: Boolean,
    val shouldDismissOnBackPress: Boolean,
    val shouldDismissOnClickOutside: Boolean,
    val hidden: HiddenChange,
    /** Sheet values at which `scrimColor` is `BottomSheetDefaults.ScrimColor` (transparent at the others). */
    val dimmedAt: Set<SheetValue>,
    /** `RoundedCornerShape(topStart = r.dp, topEnd = r.dp)`; null keeps `BottomSheetDefaults.ExpandedShape`. */
    val topCornerRadiusDp: Float?,
    /** `Modifier.imePadding()` on the content. */
    val imePadding: Boolean
) {
    /**
     * `confirmValueChange(target)`. [closingByApp] is true while the adapter itself hides the sheet (a
     * close control, a confirmed dialog, the app in code): those always go through.
     */
    fun confirmValueChange(target: SheetValue, closingByApp: Boolean = false): ConfirmAnswer = when {
        target != SheetValue.HIDDEN || closingByApp -> ConfirmAnswer.ALLOW
        hidden == HiddenChange.ALLOW -> ConfirmAnswer.ALLOW
        hidden == HiddenChange.CONFIRM -> ConfirmAnswer.ASK
        else -> ConfirmAnswer.REFUSE // veto, and any value a newer server adds: keep the sheet
    }
}

/** The content's chrome, from the neutral facts: header, close icon, sticky button, scrolling. */
data class SheetChrome(
    val header: SheetHeader?,
    /** A close icon (`DismissAffordance.CLOSE_ICON`). */
    val closeIcon: Boolean,
    /** A Cancel text button in the header. */
    val cancelButton: Boolean,
    val primaryButton: PrimaryButtonSlot?,
    /** Wrap the content in a scroll container (`NestedScrollView`, `verticalScroll`). */
    val scrollable: Boolean,
    /** Measure the content and report its height (`PUT .../content-height`); keep the current size meanwhile. */
    val awaitingContentHeight: Boolean,
    /** The scrim is announced as a close control (`contentDescription`, click action) for screen readers. */
    val scrimAccessibleAsClose: Boolean
)

/**
 * One presented sheet for Material: [views] for `BottomSheetDialogFragment`, [compose] for
 * `ModalBottomSheet`, [chrome] for the content. Built from the decision's `android` block; null for a
 * sheet decided for another platform (ask with `platform = android`).
 */
data class MaterialSheetPlan(val sheetId: String, val views: ViewsSheetSettings, val compose: ComposeSheetSettings, val chrome: SheetChrome) {
    companion object {
        @JvmStatic
        fun of(sheet: SheetPresentation): MaterialSheetPlan? {
            val a = sheet.android ?: return null
            return MaterialSheetPlan(sheet.id, views(sheet, a), compose(a), chrome(sheet))
        }

        private fun views(sheet: SheetPresentation, a: AndroidSheet): ViewsSheetSettings {
            val halfState = !a.skipPartiallyExpanded
            val hidden = a.hidden
            // Back always offers a way out (the server's reading): through the dialog when the sheet must confirm.
            val back = if (hidden == HiddenChange.CONFIRM) DialogAction.CONFIRM else DialogAction.DISMISS
            val outside = when {
                !a.shouldDismissOnClickOutside -> DialogAction.IGNORE
                hidden == HiddenChange.CONFIRM -> DialogAction.CONFIRM
                else -> DialogAction.DISMISS
            }
            val dimmed = a.dimmedAt.mapNotNull {
                when (it) {
                    SheetValue.PARTIALLY_EXPANDED -> BehaviorState.HALF_EXPANDED
                    SheetValue.EXPANDED -> BehaviorState.EXPANDED
                    else -> null
                }
            }.toSet()
            return ViewsSheetSettings(
                state = if (halfState && a.initialValue == SheetValue.PARTIALLY_EXPANDED) BehaviorState.HALF_EXPANDED else BehaviorState.EXPANDED,
                skipCollapsed = true,
                fitToContents = !halfState,
                halfExpandedRatio = if (halfState) 0.5f else null,
                expandedOffsetDp = 0,
                peekHeight = if (halfState) PeekHeight.HALF_OF_PARENT else PeekHeight.SHEET_HEIGHT,
                hideable = hidden == HiddenChange.ALLOW,
                draggable = a.sheetGesturesEnabled,
                fullHeight = sheet.detents.any { it.id == DetentId.LARGE },
                back = back,
                touchOutside = outside,
                dimmedAt = dimmed,
                topCornerRadiusDp = a.topCornerRadius?.toFloat(),
                dragHandle = a.dragHandle,
                adjustForIme = a.imePadding
            )
        }

        private fun compose(a: AndroidSheet) = ComposeSheetSettings(
            skipPartiallyExpanded = a.skipPartiallyExpanded,
            initialValue = a.initialValue,
            sheetGesturesEnabled = a.sheetGesturesEnabled,
            dragHandle = a.dragHandle,
            shouldDismissOnBackPress = a.shouldDismissOnBackPress,
            shouldDismissOnClickOutside = a.shouldDismissOnClickOutside,
            hidden = a.hidden,
            dimmedAt = a.dimmedAt.toSet(),
            topCornerRadiusDp = a.topCornerRadius?.toFloat(),
            imePadding = a.imePadding
        )

        private fun chrome(sheet: SheetPresentation) = SheetChrome(
            header = sheet.header,
            closeIcon = sheet.dismissAffordance == DismissAffordance.CLOSE_ICON,
            cancelButton = sheet.header?.cancelButton == true,
            primaryButton = sheet.primaryButton,
            scrollable = sheet.scrollable,
            awaitingContentHeight = sheet.awaitingContentHeight,
            scrimAccessibleAsClose = sheet.scrimAccessibleAsClose
        )
    }
}

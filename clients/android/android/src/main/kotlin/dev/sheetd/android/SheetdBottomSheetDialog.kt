package dev.sheetd.android

import android.content.Context
import android.view.View
import android.view.ViewGroup
import android.view.WindowManager
import android.widget.LinearLayout
import androidx.activity.OnBackPressedCallback
import com.google.android.material.bottomsheet.BottomSheetBehavior
import com.google.android.material.bottomsheet.BottomSheetDialog
import com.google.android.material.bottomsheet.BottomSheetDragHandleView
import com.google.android.material.dialog.MaterialAlertDialogBuilder
import com.google.android.material.shape.MaterialShapeDrawable
import dev.sheetd.client.DismissalMethod
import dev.sheetd.client.SheetPresentation
import dev.sheetd.client.SheetdApi
import dev.sheetd.material.BehaviorState
import dev.sheetd.material.DialogAction
import dev.sheetd.material.PeekHeight
import dev.sheetd.material.SheetdSheetSession
import kotlinx.coroutines.CoroutineScope

// The Views adapter: copies the tested MaterialSheetPlan onto a BottomSheetDialog and feeds Material's
// callbacks to the tested SheetdSheetSession. It decides nothing itself. Not compiled on the sheetd
// build machines (no Android SDK there).

/** Asks the user whether to discard (the default: a Material dialog); call exactly one of the two. */
typealias ConfirmDismiss = (context: Context, discard: () -> Unit, keep: () -> Unit) -> Unit

val defaultConfirmDismiss: ConfirmDismiss = { context, discard, keep ->
    MaterialAlertDialogBuilder(context)
        .setMessage(R.string.sheetd_discard_changes)
        .setPositiveButton(R.string.sheetd_discard) { _, _ -> discard() }
        .setNegativeButton(R.string.sheetd_keep_editing) { _, _ -> keep() }
        .setOnCancelListener { keep() }
        .show()
}

/**
 * A `BottomSheetDialog` presenting [sheet] as the decision says, reporting its impression (on show),
 * its dismissal with the real method (a drag is `swipe`, a touch outside `scrim`, Back `swipe`, [close]
 * with a control's method, `dismiss()` in code `programmatic`) and its content height (when the sheet
 * sizes to its content) through [client]'s outbox.
 */
class SheetdBottomSheetDialog(
    context: Context,
    sheet: SheetPresentation,
    client: SheetdApi,
    scope: CoroutineScope,
    content: View,
    private val confirm: ConfirmDismiss = defaultConfirmDismiss,
    onError: (Throwable) -> Unit = {}
) : BottomSheetDialog(context) {
    val session = SheetdSheetSession(sheet, client, scope, onError)
    private val plan = requireNotNull(session.plan) { "the decision was not made for platform=android" }.views
    private val density = context.resources.displayMetrics.density
    private var canceled = false
    private var defaultDim = 0.32f

    init {
        val column = LinearLayout(context).apply { orientation = LinearLayout.VERTICAL }
        if (plan.dragHandle) column.addView(BottomSheetDragHandleView(context))
        column.addView(content, LinearLayout.LayoutParams(ViewGroup.LayoutParams.MATCH_PARENT, ViewGroup.LayoutParams.WRAP_CONTENT))
        setContentView(column)
        setCancelable(true) // BottomSheetDialog makes the sheet hideable here: set before the plan's value
        setCanceledOnTouchOutside(plan.touchOutside == DialogAction.DISMISS)
        behavior.apply {
            isFitToContents = plan.fitToContents
            plan.halfExpandedRatio?.let { halfExpandedRatio = it }
            expandedOffset = (plan.expandedOffsetDp * density).toInt()
            skipCollapsed = plan.skipCollapsed
            isHideable = plan.hideable
            isDraggable = plan.draggable
            state = plan.state.value
            addBottomSheetCallback(object : BottomSheetBehavior.BottomSheetCallback() {
                override fun onStateChanged(bottomSheet: View, newState: Int) {
                    when (newState) {
                        BottomSheetBehavior.STATE_DRAGGING -> session.dragStarted()
                        BottomSheetBehavior.STATE_EXPANDED, BottomSheetBehavior.STATE_HALF_EXPANDED, BottomSheetBehavior.STATE_COLLAPSED -> session.settled()
                    }
                    dimFor(newState)
                }

                override fun onSlide(bottomSheet: View, slideOffset: Float) {}
            })
        }
        if (plan.adjustForIme) window?.setSoftInputMode(WindowManager.LayoutParams.SOFT_INPUT_ADJUST_RESIZE)
        window?.attributes?.dimAmount?.let { defaultDim = it }
        onBackPressedDispatcher.addCallback(object : OnBackPressedCallback(true) {
            override fun handleOnBackPressed() = userClose(plan.back) { session.backPressed() }
        })
        setOnShowListener {
            findViewById<View>(com.google.android.material.R.id.touch_outside)?.setOnClickListener {
                userClose(plan.touchOutside) { session.touchedOutside() }
            }
            findViewById<View>(com.google.android.material.R.id.design_bottom_sheet)?.let(::layOut)
            dimFor(plan.state.value)
            session.appeared()
        }
        setOnCancelListener { canceled = true }
        setOnDismissListener { session.dismissed(interactive = canceled) }
        content.addOnLayoutChangeListener { view, _, _, _, _, _, _, _, _ -> session.measured(view.height / density.toDouble()) }
    }

    /** Closes the sheet because the decision no longer presents it: not reported (sheetd knows). */
    fun withdraw() {
        session.withdrawn()
        dismiss()
    }

    /** Closes the sheet through a control (`closeButton`, `cancelButton`, `action`): reported with [method]. */
    fun close(method: DismissalMethod) {
        session.willClose(method)
        dismiss()
    }

    private fun userClose(action: DialogAction, note: () -> Unit) {
        when (action) {
            DialogAction.DISMISS -> { note(); cancel() }
            DialogAction.CONFIRM -> { note(); confirm(context, { cancel() }, { session.closeDeclined() }) }
            DialogAction.IGNORE -> Unit
        }
    }

    /** Height, peek and corners, once the sheet view exists. */
    private fun layOut(sheetView: View) {
        if (plan.fullHeight) sheetView.layoutParams = sheetView.layoutParams.apply { height = ViewGroup.LayoutParams.MATCH_PARENT }
        plan.topCornerRadiusDp?.let { radius ->
            (sheetView.background as? MaterialShapeDrawable)?.let { drawable ->
                drawable.shapeAppearanceModel = drawable.shapeAppearanceModel.toBuilder()
                    .setTopLeftCornerSize(radius * density).setTopRightCornerSize(radius * density).build()
            }
        }
        sheetView.post {
            behavior.peekHeight = when (plan.peekHeight) {
                PeekHeight.HALF_OF_PARENT -> ((sheetView.parent as View).height * (plan.halfExpandedRatio ?: 0.5f)).toInt()
                PeekHeight.SHEET_HEIGHT -> sheetView.height
            }
        }
    }

    private fun dimFor(state: Int) {
        val dimmed = plan.dimmedAt.any { it.value == state } || state == BehaviorState.HIDDEN.value
        window?.setDimAmount(if (dimmed) defaultDim else 0f)
    }
}

package dev.sheetd.android

import androidx.compose.foundation.layout.Column
import androidx.compose.foundation.layout.ColumnScope
import androidx.compose.foundation.layout.imePadding
import androidx.compose.foundation.shape.RoundedCornerShape
import androidx.compose.material3.AlertDialog
import androidx.compose.material3.BottomSheetDefaults
import androidx.compose.material3.ExperimentalMaterial3Api
import androidx.compose.material3.ModalBottomSheet
import androidx.compose.material3.ModalBottomSheetProperties
import androidx.compose.material3.SheetValue
import androidx.compose.material3.Text
import androidx.compose.material3.TextButton
import androidx.compose.material3.rememberModalBottomSheetState
import androidx.compose.runtime.Composable
import androidx.compose.runtime.LaunchedEffect
import androidx.compose.runtime.getValue
import androidx.compose.runtime.mutableStateOf
import androidx.compose.runtime.remember
import androidx.compose.runtime.rememberCoroutineScope
import androidx.compose.runtime.setValue
import androidx.compose.ui.Modifier
import androidx.compose.ui.graphics.Color
import androidx.compose.ui.layout.onSizeChanged
import androidx.compose.ui.platform.LocalDensity
import androidx.compose.ui.res.stringResource
import androidx.compose.ui.unit.dp
import dev.sheetd.client.Decision
import dev.sheetd.client.DismissalMethod
import dev.sheetd.client.SheetPresentation
import dev.sheetd.client.SheetdApi
import dev.sheetd.material.ConfirmAnswer
import dev.sheetd.material.SheetPresentationGate
import dev.sheetd.material.SheetdSheetSession
import kotlinx.coroutines.launch
import dev.sheetd.client.SheetValue as SheetdSheetValue

// The Compose adapter: copies the tested MaterialSheetPlan onto ModalBottomSheet and SheetState and feeds
// their callbacks to the tested SheetdSheetSession and SheetPresentationGate. Not compiled on the sheetd
// build machines (no Android SDK there).

/** What the sheet's content can do: close it through a control, with the method sheetd counts. */
class SheetdSheetControls internal constructor(val sheet: SheetPresentation, private val closeWith: (DismissalMethod) -> Unit) {
    /** `closeButton`, `cancelButton`, `action` (or `programmatic` when the app replaces the sheet). */
    fun close(method: DismissalMethod) = closeWith(method)
}

/**
 * Presents the decision's sheet (nothing when it presents none, or holds one the user just dismissed
 * until sheetd answers anew) as a Material 3 `ModalBottomSheet`, and reports its impression, its
 * dismissal and its content height through [client]'s outbox. Compose reports every user dismissal
 * through one `onDismissRequest`: a gesture is `scrim` when only the scrim may dismiss the sheet, else
 * `swipe` (the Views adapter tells drags, Back and touches outside apart).
 */
@OptIn(ExperimentalMaterial3Api::class)
@Composable
fun SheetdModalBottomSheet(
    decision: Decision?,
    client: SheetdApi,
    onError: (Throwable) -> Unit = {},
    content: @Composable ColumnScope.(SheetdSheetControls) -> Unit
) {
    val gate = remember { SheetPresentationGate() }
    var revision by remember { mutableStateOf(0) } // the gate is a plain type: a change bumps this to recompose
    LaunchedEffect(decision) { gate.observe(decision); revision++ }
    val sheet = remember(decision, revision) { gate.sheet(decision) } ?: return // a withdrawn sheet is not reported: sheetd knows
    val scope = rememberCoroutineScope()
    val session = remember(sheet.id, decision) { SheetdSheetSession(sheet, client, scope, onError) }
    val plan = session.plan?.compose ?: return
    var closingByApp by remember(session) { mutableStateOf(false) }
    var confirming by remember(session) { mutableStateOf(false) }
    val state = rememberModalBottomSheetState(
        skipPartiallyExpanded = plan.skipPartiallyExpanded,
        confirmValueChange = { value ->
            val target = when (value) {
                SheetValue.Hidden -> SheetdSheetValue.HIDDEN
                SheetValue.Expanded -> SheetdSheetValue.EXPANDED
                SheetValue.PartiallyExpanded -> SheetdSheetValue.PARTIALLY_EXPANDED
            }
            when (plan.confirmValueChange(target, closingByApp)) {
                ConfirmAnswer.ALLOW -> true
                ConfirmAnswer.REFUSE -> false // springs back; it still resizes
                ConfirmAnswer.ASK -> { confirming = true; false }
            }
        }
    )
    fun ended(interactive: Boolean) {
        gate.dismissed(sheet.id, decision)
        revision++
        session.dismissed(interactive) { gate.dismissalReported(sheet.id) }
    }
    val controls = remember(session) {
        SheetdSheetControls(sheet) { method ->
            session.willClose(method)
            closingByApp = true
            scope.launch { state.hide() }.invokeOnCompletion { ended(interactive = false) }
        }
    }
    LaunchedEffect(session) {
        if (plan.initialValue == SheetdSheetValue.EXPANDED && !plan.skipPartiallyExpanded) state.expand()
        session.appeared()
    }
    val density = LocalDensity.current
    ModalBottomSheet(
        onDismissRequest = { ended(interactive = true) },
        sheetState = state,
        sheetGesturesEnabled = plan.sheetGesturesEnabled,
        shape = plan.topCornerRadiusDp?.let { RoundedCornerShape(topStart = it.dp, topEnd = it.dp) } ?: BottomSheetDefaults.ExpandedShape,
        scrimColor = if (state.targetValue.toSheetd() in plan.dimmedAt) BottomSheetDefaults.ScrimColor else Color.Transparent,
        dragHandle = if (plan.dragHandle) ({ BottomSheetDefaults.DragHandle() }) else null,
        properties = ModalBottomSheetProperties(
            shouldDismissOnBackPress = plan.shouldDismissOnBackPress,
            shouldDismissOnClickOutside = plan.shouldDismissOnClickOutside
        )
    ) {
        Column(
            (if (plan.imePadding) Modifier.imePadding() else Modifier)
                .onSizeChanged { session.measured(with(density) { it.height.toDp().value.toDouble() }) }
        ) { content(controls) }
    }
    if (confirming) {
        AlertDialog(
            onDismissRequest = { confirming = false; session.closeDeclined() },
            text = { Text(stringResource(R.string.sheetd_discard_changes)) },
            confirmButton = {
                TextButton(onClick = {
                    confirming = false
                    closingByApp = true
                    scope.launch { state.hide() }.invokeOnCompletion { ended(interactive = true) }
                }) { Text(stringResource(R.string.sheetd_discard)) }
            },
            dismissButton = {
                TextButton(onClick = { confirming = false; session.closeDeclined() }) { Text(stringResource(R.string.sheetd_keep_editing)) }
            }
        )
    }
}

private fun SheetValue.toSheetd() = when (this) {
    SheetValue.Hidden -> SheetdSheetValue.HIDDEN
    SheetValue.Expanded -> SheetdSheetValue.EXPANDED
    SheetValue.PartiallyExpanded -> SheetdSheetValue.PARTIALLY_EXPANDED
}

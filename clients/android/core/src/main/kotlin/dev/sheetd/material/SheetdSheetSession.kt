package dev.sheetd.material

import dev.sheetd.client.DismissalMethod
import dev.sheetd.client.FlushResult
import dev.sheetd.client.SheetPresentation
import dev.sheetd.client.SheetdApi
import dev.sheetd.client.SheetdEvent
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch

/**
 * One presented sheet wired to a client: the adapters call it from Material's callbacks, and it reports
 * the impression, the dismissal (with its method) and content heights as [SheetLifecycle] and
 * [ContentHeightReporter] decide. Reports go through the client's outbox, so one made just before the
 * process dies is delivered at the next start, with its event id (counted once). Each report runs in
 * [scope] and returns its job (tests join it); a failure goes to [onError], never to the UI.
 */
class SheetdSheetSession(
    sheet: SheetPresentation,
    private val client: SheetdApi,
    private val scope: CoroutineScope,
    private val onError: (Throwable) -> Unit = {}
) {
    val lifecycle = SheetLifecycle(sheet)
    val plan: MaterialSheetPlan? = MaterialSheetPlan.of(sheet)
    private val heights = ContentHeightReporter()
    val sheet: SheetPresentation get() = lifecycle.sheet

    /** The sheet is on screen: reports the impression the first time. */
    fun appeared(): Job? {
        if (!lifecycle.appeared()) return null
        return report(SheetdEvent.Impression(sheet.id, lifecycle.impressionEventId))
    }

    fun willClose(method: DismissalMethod) = lifecycle.willClose(method)
    fun dragStarted() = lifecycle.dragStarted()
    fun settled() = lifecycle.settled()
    fun backPressed() = lifecycle.backPressed()
    fun touchedOutside() = lifecycle.touchedOutside()
    fun closeDeclined() = lifecycle.closeDeclined()
    fun withdrawn() = lifecycle.withdrawn()

    /** The sheet is gone: reports the dismissal once; [completion] runs after the report, either way. */
    fun dismissed(interactive: Boolean, completion: () -> Unit = {}): Job? {
        val method = lifecycle.dismissed(interactive, plan) ?: return null
        return report(SheetdEvent.Dismissal(sheet.id, method, lifecycle.dismissalEventId), completion)
    }

    /** The content measures [dp]: reports it when the decision waits for it or it changed. */
    fun measured(dp: Double): Job? {
        val height = heights.heightToReport(dp, sheet) ?: return null
        return report(SheetdEvent.ContentHeight(sheet.id, height))
    }

    private fun report(event: SheetdEvent, completion: () -> Unit = {}): Job = scope.launch {
        try {
            val result: FlushResult = client.enqueue(event)
            result.error?.let(onError)
            result.refused.forEach { onError(it.second) }
        } catch (e: Exception) {
            onError(e)
        } finally {
            completion()
        }
    }
}

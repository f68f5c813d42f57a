package dev.sheetd.client

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Job
import kotlinx.coroutines.channels.ReceiveChannel
import kotlinx.coroutines.launch

/**
 * sheetd's user routes for one user: what app code depends on, so tests can pass the fake
 * ([dev.sheetd.client.testing.FakeSheetdClient]) instead of [SheetdClient].
 *
 * Live decisions are a [ReceiveChannel] (or a [DecisionListener] through [watch]), not a `Flow`: the
 * library compiles with Debian's kotlinx-coroutines 1.0, which has no `Flow` (1.2 added it), and with
 * today's; `decisions(context, scope).consumeAsFlow()` makes one in an app on a current version.
 */
interface SheetdApi {
    val userId: String

    /** The decision for [context] (revalidated with its ETag: a 304 returns the cached decision). */
    suspend fun decision(context: SheetContext): Decision

    /**
     * The decision for [context], live, in [scope]: the current one first, then each change (conflated:
     * a slow reader gets the latest). Closed with a [SheetdException] only when retrying cannot help;
     * cancel the channel (or the scope) to stop.
     */
    fun decisions(context: SheetContext, scope: CoroutineScope): ReceiveChannel<Decision>

    /** Sends [event] now, with retries; the receipt's outcome is the event's outcome type. */
    suspend fun send(event: SheetdEvent): EventReceipt<Any>

    /**
     * Keeps [event] in the outbox (a file when configured: it survives the process), then delivers
     * what is pending. Returns what the delivery did; nothing is lost when it failed.
     */
    suspend fun enqueue(event: SheetdEvent): FlushResult

    /** Delivers the outbox's events, oldest first; stops at the first one that cannot be delivered yet. */
    suspend fun flush(): FlushResult

    suspend fun state(): UserState
    suspend fun segments(): List<String>
    suspend fun settings(): GlobalSettings

    /** Erases everything stored about the user, and the client's cached decisions. */
    suspend fun erase()
}

/** What one delivery of the outbox did. */
data class FlushResult(
    /** Answered by sheetd (replays included). */
    val delivered: List<EventReceipt<Any>>,
    /** Refused for good (a 4xx retrying cannot fix): dropped from the outbox, with the reason. */
    val refused: List<Pair<SheetdEvent, SheetdException>>,
    /** Still in the outbox. */
    val pending: Int,
    /** Why the delivery stopped early (offline, 5xx after the retries), if it did. */
    val error: SheetdException?
)

/** Receives live decisions (see [watch]). */
interface DecisionListener {
    fun onDecision(decision: Decision)

    /** The live decision ended with an error retrying cannot fix (a 401 after a refresh, a 403, a bad context). */
    fun onError(error: SheetdException) {}
}

/** Follows [context] in [scope] (on Android a `lifecycleScope`, so the listener runs on the main thread). Cancel the job to stop. */
fun SheetdApi.watch(context: SheetContext, scope: CoroutineScope, listener: DecisionListener): Job = scope.launch {
    val channel = decisions(context, this) // a child: cancelling the job ends the stream
    try {
        for (decision in channel) listener.onDecision(decision)
    } catch (e: SheetdException) {
        listener.onError(e)
    } finally {
        channel.cancel()
    }
}

@Suppress("UNCHECKED_CAST")
private fun <T> EventReceipt<Any>.typed(): EventReceipt<T> = this as EventReceipt<T>

/** Reports a container's card count. */
suspend fun SheetdApi.reportCount(
    count: Int, containerId: String, seq: Int? = null, filter: String? = null, eventId: String = SheetdEvent.newEventId()
): EventReceipt<CountOutcome> = send(SheetdEvent.Count(containerId, count, seq, filter, eventId)).typed()

/** Reports a dismissal (a card sheet latches at its count, unless [method] is `programmatic`). */
suspend fun SheetdApi.dismiss(sheetId: String, method: DismissalMethod, eventId: String = SheetdEvent.newEventId()): EventReceipt<DismissalOutcome> =
    send(SheetdEvent.Dismissal(sheetId, method, eventId)).typed()

/** Reports an opened sheet: [mode] `push` nests it, `replace` is a flow's next step. */
suspend fun SheetdApi.present(
    sheetId: String, mode: OpenMode = OpenMode.PUSH, parentSheetId: String? = null, eventId: String = SheetdEvent.newEventId()
): EventReceipt<PresentationOutcome> = send(SheetdEvent.Presentation(sheetId, mode, parentSheetId, eventId)).typed()

/** Reports a sheet's measured content height in dp. */
suspend fun SheetdApi.reportContentHeight(
    height: Double, sheetId: String, platform: Platform = Platform.ANDROID, eventId: String = SheetdEvent.newEventId()
): EventReceipt<ContentHeightOutcome> = send(SheetdEvent.ContentHeight(sheetId, height, platform, eventId)).typed()

/** Reports that the sheet is on screen (what the caps count). */
suspend fun SheetdApi.reportImpression(sheetId: String, eventId: String = SheetdEvent.newEventId()): EventReceipt<ImpressionOutcome> =
    send(SheetdEvent.Impression(sheetId, eventId)).typed()

/** Reports a conversion for the sheet's experiment. */
suspend fun SheetdApi.reportConversion(sheetId: String, goal: String? = null, eventId: String = SheetdEvent.newEventId()): EventReceipt<ConversionOutcome> =
    send(SheetdEvent.Conversion(sheetId, goal, eventId)).typed()

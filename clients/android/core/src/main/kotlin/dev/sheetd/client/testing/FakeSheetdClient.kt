package dev.sheetd.client.testing

import dev.sheetd.client.ContentHeightOutcome
import dev.sheetd.client.ConversionOutcome
import dev.sheetd.client.CountOutcome
import dev.sheetd.client.Decision
import dev.sheetd.client.DismissalMethod
import dev.sheetd.client.DismissalOutcome
import dev.sheetd.client.EventReceipt
import dev.sheetd.client.FlushResult
import dev.sheetd.client.GlobalSettings
import dev.sheetd.client.ImpressionOutcome
import dev.sheetd.client.PresentationOutcome
import dev.sheetd.client.SheetContext
import dev.sheetd.client.SheetdApi
import dev.sheetd.client.SheetdEvent
import dev.sheetd.client.SheetdException
import dev.sheetd.client.UserState
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.ReceiveChannel
import kotlinx.coroutines.channels.SendChannel
import kotlinx.coroutines.channels.ClosedSendChannelException
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.launch

/**
 * A [SheetdApi] for app unit tests, without a server: decisions are scripted ([setDecision], per
 * screen or for every context), events are recorded ([events], in order; a reused event id is answered
 * as a replay and not recorded again), failures are scripted ([failNext]), [onEvent] lets a test react
 * like the server would (clear the decision after a dismissal).
 */
class FakeSheetdClient(decision: Decision = Decision.noSheet(), override val userId: String = "fake-user") : SheetdApi {
    private var defaultDecision = decision
    private val byScreen = HashMap<String, Decision>()
    private class Live(val context: SheetContext, val channel: SendChannel<Decision>, val scope: CoroutineScope)
    private val live = ArrayList<Live>()
    private val recorded = ArrayList<SheetdEvent>()
    private val pending = ArrayList<SheetdEvent>()
    private val failures = ArrayList<SheetdException>()
    private val impressions = HashMap<String, Int>()

    /** Called with every new event, after it is recorded. */
    var onEvent: ((SheetdEvent) -> Unit)? = null

    /** The events the app reported, in order (each once). */
    val events: List<SheetdEvent> @Synchronized get() = ArrayList(recorded)

    /** The decisions asked for, by context. */
    val decisionRequests: MutableList<SheetContext> = ArrayList()

    /** The decision for [screen] (null: every screen without its own), pushed to live channels too. */
    fun setDecision(decision: Decision, screen: String? = null) {
        val targets = synchronized(this) {
            if (screen == null) defaultDecision = decision else byScreen[screen] = decision
            live.filter { screen == null || it.context.screen == screen }.map { it to decisionFor(it.context) }
        }
        for ((subscriber, d) in targets) deliver(subscriber, d)
    }

    /** The next [times] calls fail with [error] (a TRANSPORT one by default: offline). */
    @Synchronized fun failNext(
        error: SheetdException = SheetdException(SheetdException.Kind.TRANSPORT, message = "offline (scripted)"),
        times: Int = 1
    ) { repeat(times) { failures.add(error) } }

    /** The events waiting in the fake's outbox (after scripted failures). */
    val pendingEvents: List<SheetdEvent> @Synchronized get() = ArrayList(pending)

    @Synchronized private fun decisionFor(context: SheetContext) = byScreen[context.screen] ?: defaultDecision

    @Synchronized private fun takeFailure(): SheetdException? = if (failures.isEmpty()) null else failures.removeAt(0)

    override suspend fun decision(context: SheetContext): Decision {
        synchronized(this) { decisionRequests.add(context) }
        takeFailure()?.let { throw it }
        return decisionFor(context)
    }

    override fun decisions(context: SheetContext, scope: CoroutineScope): ReceiveChannel<Decision> {
        val channel = Channel<Decision>(Channel.CONFLATED)
        val subscriber = Live(context, channel, scope)
        synchronized(this) { live.add(subscriber) }
        deliver(subscriber, decisionFor(context))
        return channel
    }

    // A conflated channel's send never suspends; a closed one is forgotten.
    private fun deliver(subscriber: Live, decision: Decision) {
        subscriber.scope.launch {
            try {
                subscriber.channel.send(decision)
            } catch (e: ClosedSendChannelException) {
                synchronized(this@FakeSheetdClient) { live.remove(subscriber) }
            } catch (e: CancellationException) {
                synchronized(this@FakeSheetdClient) { live.remove(subscriber) }
            }
        }
    }

    override suspend fun send(event: SheetdEvent): EventReceipt<Any> {
        takeFailure()?.let { throw it }
        val replayed: Boolean
        val outcome: Any
        synchronized(this) {
            replayed = recorded.any { it.eventId == event.eventId }
            if (!replayed) recorded.add(event)
            outcome = outcome(event, replayed)
        }
        if (!replayed) onEvent?.invoke(event)
        return EventReceipt(outcome, event.eventId, replayed, 1)
    }

    override suspend fun enqueue(event: SheetdEvent): FlushResult {
        synchronized(this) { if (pending.none { it.eventId == event.eventId }) pending.add(event) }
        return flush()
    }

    override suspend fun flush(): FlushResult {
        val delivered = ArrayList<EventReceipt<Any>>()
        for (event in pendingEvents) {
            try {
                delivered.add(send(event))
                synchronized(this) { pending.remove(event) }
            } catch (e: SheetdException) {
                return FlushResult(delivered, emptyList(), pendingEvents.size, e)
            }
        }
        return FlushResult(delivered, emptyList(), 0, null)
    }

    override suspend fun state(): UserState {
        takeFailure()?.let { throw it }
        return UserState(userId, emptyList(), emptyList(), emptyList(), emptyList(), emptyList(), emptyList(), emptyList())
    }

    override suspend fun segments(): List<String> = emptyList()
    override suspend fun settings(): GlobalSettings = GlobalSettings(null, null, null)

    override suspend fun erase() {
        synchronized(this) { recorded.clear(); impressions.clear() }
    }

    private fun outcome(event: SheetdEvent, replayed: Boolean): Any = when (event) {
        is SheetdEvent.Count -> CountOutcome(event.containerId, event.filter ?: "", event.count, !replayed, true)
        is SheetdEvent.Dismissal -> DismissalOutcome(emptyList(), event.dismissalMethod != DismissalMethod.PROGRAMMATIC)
        is SheetdEvent.Presentation -> PresentationOutcome(listOf(event.sheetId))
        is SheetdEvent.ContentHeight -> ContentHeightOutcome(event.sheetId, event.platform, event.height)
        is SheetdEvent.Impression -> {
            val total = (impressions[event.sheetId] ?: 0) + if (replayed) 0 else 1
            impressions[event.sheetId] = total
            ImpressionOutcome(event.sheetId, total)
        }
        is SheetdEvent.Conversion -> ConversionOutcome(event.sheetId, null, event.goal, false, null)
    }
}

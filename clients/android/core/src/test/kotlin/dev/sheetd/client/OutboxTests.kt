package dev.sheetd.client

import dev.sheetd.support.Live
import dev.sheetd.support.ScriptedProxy
import dev.sheetd.support.ScriptedProxy.Step
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File
import java.net.ServerSocket

/** The durable outbox: events keep their ids across a client restart and are applied once. */
class OutboxTests {
    private val proxy = ScriptedProxy(Live.url.substringAfterLast(':').toInt())
    private val file = File.createTempFile("outbox", ".json", Live.work).also { it.delete() }

    @AfterEach
    fun close() {
        proxy.close()
        file.delete()
    }

    private fun deadUrl() = "http://127.0.0.1:" + ServerSocket(0).use { it.localPort }

    @Test
    fun eventsQueuedOfflineAreDeliveredAfterARestartInOrderAndOnce() = runBlocking<Unit> {
        val user = Live.newUser()
        val offline = Live.client(user, baseUrl = deadUrl(), retry = RetryPolicy(maxAttempts = 1)) { it.copy(outboxFile = file) }
        val count = SheetdEvent.Count("offers-home", 2)
        val impression = SheetdEvent.Impression("home-offers")
        val dismissal = SheetdEvent.Dismissal("home-offers", DismissalMethod.SWIPE)
        for (event in listOf(count, impression, dismissal)) {
            val result = offline.enqueue(event)
            assertEquals(SheetdException.Kind.TRANSPORT, result.error!!.kind)
        }
        assertEquals(3, offline.outbox.size)
        // The app restarts: a new client over the same file, the server reachable again.
        val restarted = Live.client(user) { it.copy(outboxFile = file) }
        assertEquals(listOf(count, impression, dismissal), restarted.outbox.pending())
        val flushed = restarted.flush()
        assertNull(flushed.error)
        assertEquals(listOf(count.eventId, impression.eventId, dismissal.eventId), flushed.delivered.map { it.eventId })
        assertEquals(0, flushed.pending)
        assertTrue((flushed.delivered[2].outcome as DismissalOutcome).latched, "the dismissal came after the count: it latched")
        assertEquals(0, Live.client(user) { it.copy(outboxFile = file) }.outbox.size, "the file is empty once delivered")
        // A copy that was delivered but not removed (a crash in between) is answered as a replay.
        val replay = Live.client(user).send(impression)
        assertTrue(replay.replayed)
        assertEquals(1, Live.client(user).state().impressions.single().total)
    }

    @Test
    fun aRefusedEventIsDroppedAndDoesNotBlockTheOnesAfterIt() = runBlocking<Unit> {
        val user = Live.newUser()
        val client = Live.client(user) { it.copy(outboxFile = file) }
        val bad = SheetdEvent.Count("offers-home", -1)
        val good = SheetdEvent.Impression("home-offers")
        client.outbox.add(bad)
        val result = client.enqueue(good)
        assertEquals(400, result.refused.single().second.status)
        assertEquals(bad.eventId, result.refused.single().first.eventId)
        assertEquals(listOf(good.eventId), result.delivered.map { it.eventId })
        assertEquals(0, result.pending)
    }

    @Test
    fun aServerErrorKeepsTheEventAndTheOrder() = runBlocking<Unit> {
        val user = Live.newUser()
        val client = Live.client(user, baseUrl = proxy.url, retry = RetryPolicy(maxAttempts = 1)) { it.copy(outboxFile = file) }
        proxy.then(Step.Answer(503, body = """{"type":"about:blank","title":"x","status":503,"detail":"draining"}"""))
        val first = client.enqueue(SheetdEvent.Count("offers-home", 1))
        assertEquals(503, first.error!!.status)
        assertEquals(1, first.pending)
        val second = client.enqueue(SheetdEvent.Count("offers-home", 5))
        assertNull(second.error)
        assertEquals(listOf(1, 5), second.delivered.map { (it.outcome as CountOutcome).count })
        assertEquals(5, Live.client(user).state().containers.single().count)
    }

    @Test
    fun occurredAtIsSentOnlyWhenSwitchedOn() = runBlocking<Unit> {
        val user = Live.newUser()
        val off = Live.client(user, baseUrl = proxy.url) { it.copy(sendOccurredAt = false) }
        off.reportImpression("home-offers")
        assertFalse(proxy.requests.last().body.contains("occurredAt"))
        val event = SheetdEvent.Impression("home-offers", occurredAtMillis = System.currentTimeMillis() - 5_000)
        proxy.then(Step.Answer(201, body = """{"sheetId":"home-offers","impressions":1}"""))
        Live.client(user, baseUrl = proxy.url) { it.copy(sendOccurredAt = true) }.send(event)
        val body = Json.parse(proxy.requests.last().body) as Map<*, *>
        assertEquals(SheetdEvent.rfc3339(event.occurredAtMillis), body["occurredAt"])
        assertEquals(event.eventId, body["eventId"])
    }

    @Test
    fun anEventOlderThanTheServersWindowOrRefusedForItsTimeIsSentWithoutIt() = runBlocking<Unit> {
        val user = Live.newUser()
        val client = Live.client(user, baseUrl = proxy.url) { it.copy(sendOccurredAt = true) }
        val dayOld = SheetdEvent.Impression("home-offers", occurredAtMillis = System.currentTimeMillis() - 25 * 3_600_000L)
        proxy.then(Step.Answer(201, body = """{"sheetId":"home-offers","impressions":1}"""))
        client.send(dayOld)
        assertFalse(proxy.requests.last().body.contains("occurredAt"), "a day old: counted on arrival, not refused")
        val skewed = SheetdEvent.Impression("home-offers")
        proxy.then(
            Step.Answer(400, body = """{"type":"urn:sheetd:problem:invalid-params","title":"Invalid Parameters","status":400,"detail":"occurredAt is too far ahead","invalid-params":[{"name":"occurredAt","reason":"too far ahead"}]}"""),
            Step.Answer(201, body = """{"sheetId":"home-offers","impressions":1}""")
        )
        val receipt = client.send(skewed)
        assertEquals(skewed.eventId, receipt.eventId)
        val bodies = proxy.requests.takeLast(2).map { it.body }
        assertTrue(bodies[0].contains("occurredAt"))
        assertFalse(bodies[1].contains("occurredAt"))
        assertTrue(bodies[1].contains(skewed.eventId), "the same event, the same id")
    }

    @Test
    fun theOutboxKeepsAtMostItsLimitOldestDroppedFirst() {
        val outbox = EventOutbox(file, limit = 2)
        val events = (1..3).map { SheetdEvent.Count("offers-home", it) }
        events.forEach(outbox::add)
        outbox.add(events[2]) // the same id again is not a new event
        assertEquals(events.drop(1), EventOutbox(file).pending())
        file.writeText("not json")
        assertEquals(0, EventOutbox(file).size, "a damaged file starts empty")
        assertNotNull(outbox.pending())
    }
}

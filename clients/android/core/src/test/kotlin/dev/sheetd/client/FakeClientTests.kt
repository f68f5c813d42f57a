package dev.sheetd.client

import dev.sheetd.client.testing.FakeSheetdClient
import dev.sheetd.material.SheetdSheetSession
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The fake app tests use: scripted decisions, recorded events, scripted failures. */
class FakeClientTests {
    private val offers = SheetPresentation("home-offers", SheetKind.CARDS, SheetSize.CONTENT, listOf(Detent(DetentId.MEDIUM)), DetentId.MEDIUM, awaitingContentHeight = true)

    @Test
    fun scriptedDecisionsPerScreenAndLiveUpdates() = runBlocking<Unit> {
        val fake = FakeSheetdClient()
        fake.setDecision(Decision.presenting(offers), screen = "home")
        assertTrue(fake.decision(SheetContext("home")).present)
        assertFalse(fake.decision(SheetContext("payments")).present)
        val channel = fake.decisions(SheetContext("home"), this)
        assertTrue(withTimeout(5_000) { channel.receive() }.present)
        fake.setDecision(Decision.noSheet(DecisionReason.LATCHED), screen = "home")
        assertEquals(DecisionReason.LATCHED, withTimeout(5_000) { channel.receive() }.reason)
        channel.cancel()
        assertEquals(listOf("home", "payments"), fake.decisionRequests.map { it.screen })
    }

    @Test
    fun eventsAreRecordedOnceAndAReusedIdIsAReplay() = runBlocking<Unit> {
        val fake = FakeSheetdClient(Decision.presenting(offers))
        fake.onEvent = { if (it is SheetdEvent.Dismissal) fake.setDecision(Decision.noSheet(DecisionReason.LATCHED)) }
        assertEquals(1, fake.reportImpression("home-offers", eventId = "i1").outcome.impressions)
        assertTrue(fake.reportImpression("home-offers", eventId = "i1").replayed)
        assertTrue(fake.dismiss("home-offers", DismissalMethod.SWIPE).outcome.latched)
        assertEquals(listOf("i1"), fake.events.filterIsInstance<SheetdEvent.Impression>().map { it.eventId })
        assertEquals(DismissalMethod.SWIPE, (fake.events.last() as SheetdEvent.Dismissal).dismissalMethod)
        assertFalse(fake.decision(SheetContext("home")).present)
    }

    @Test
    fun scriptedFailuresKeepEventsPendingUntilAFlush() = runBlocking<Unit> {
        val fake = FakeSheetdClient()
        fake.failNext(times = 1)
        assertThrows(SheetdException::class.java) { runBlocking { fake.state() } }
        fake.failNext(times = 1)
        val result = fake.enqueue(SheetdEvent.Impression("home-offers"))
        assertEquals(SheetdException.Kind.TRANSPORT, result.error!!.kind)
        assertEquals(1, fake.pendingEvents.size)
        assertTrue(fake.events.isEmpty())
        assertEquals(1, fake.flush().delivered.size)
        assertEquals(1, fake.events.size)
    }

    @Test
    fun aSessionOnTheFakeReportsOneImpressionAndTheDismissal() = runBlocking<Unit> {
        val fake = FakeSheetdClient(Decision.presenting(offers))
        val session = SheetdSheetSession(offers, fake, CoroutineScope(Dispatchers.IO))
        session.appeared()?.join()
        assertEquals(null, session.appeared(), "shown again (a nested sheet closed): not a new impression")
        session.measured(280.4)?.join()
        session.dragStarted()
        session.dismissed(interactive = true)?.join()
        assertEquals(null, session.dismissed(interactive = true), "reported once")
        val events = fake.events
        assertEquals(3, events.size)
        assertEquals(SheetdEvent.Impression("home-offers", session.lifecycle.impressionEventId, events[0].occurredAtMillis), events[0])
        assertEquals(281.0, (events[1] as SheetdEvent.ContentHeight).height)
        assertEquals(DismissalMethod.SWIPE, (events[2] as SheetdEvent.Dismissal).dismissalMethod)
        assertEquals(session.lifecycle.dismissalEventId, events[2].eventId)
    }
}

package dev.sheetd.client

import dev.sheetd.support.Live
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.time.OffsetDateTime

/** `occurredAt` against the live sheetd: a dismissal delivered late counts when it happened. */
class OccurredAtTests {
    private val statements = SheetContext("statements")

    @Test
    fun aLateDismissalsOccurredAtIsHonoured() = runBlocking<Unit> {
        // statements-tips cools down for 60 s after a dismissal. Dismissed two minutes ago (delivered now,
        // as from the outbox after a restart), it is not cooling down when a new count releases the latch.
        val user = Live.newUser()
        val client = Live.client(user)
        assertTrue(client.configuration.sendOccurredAt, "on by default")
        client.reportCount(1, "tips-statements")
        val late = SheetdEvent.Dismissal("statements-tips", DismissalMethod.SWIPE, occurredAtMillis = System.currentTimeMillis() - 120_000)
        client.enqueue(late)
        val at = OffsetDateTime.parse(client.state().lastDismissals.single().at).toInstant().toEpochMilli()
        assertEquals(late.occurredAtMillis, at)
        client.reportCount(2, "tips-statements")
        assertEquals("statements-tips", client.decision(statements).sheet?.id)
        // The same dismissal without its time counts as now: cooling down.
        val other = Live.newUser()
        val now = Live.client(other) { it.copy(sendOccurredAt = false) }
        now.reportCount(1, "tips-statements")
        now.send(SheetdEvent.Dismissal("statements-tips", DismissalMethod.SWIPE, occurredAtMillis = System.currentTimeMillis() - 120_000))
        now.reportCount(2, "tips-statements")
        val held = now.decision(statements)
        assertEquals(DecisionReason.COOLING_DOWN, held.held.single { it.sheetId == "statements-tips" }.reason)
    }
}

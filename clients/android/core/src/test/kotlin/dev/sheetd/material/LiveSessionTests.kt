package dev.sheetd.material

import dev.sheetd.client.DecisionReason
import dev.sheetd.client.DetentId
import dev.sheetd.client.SheetContext
import dev.sheetd.client.reportCount
import dev.sheetd.support.Live
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.io.File

/** What the adapters report, end to end: a session on the real client makes caps, stats and latches count. */
class LiveSessionTests {
    private val home = SheetContext("home", "accounts")

    @Test
    fun aPresentedCardSheetCountsOneImpressionItsHeightAndLatchesWhenDragged() = runBlocking<Unit> {
        val user = Live.newUser()
        val file = File.createTempFile("session-outbox", ".json", Live.work).also { it.delete() }
        val client = Live.client(user) { it.copy(outboxFile = file) }
        client.reportCount(2, "offers-home")
        val sheet = client.decision(home).sheet!!
        val session = SheetdSheetSession(sheet, client, CoroutineScope(Dispatchers.IO)) { throw AssertionError(it) }
        session.appeared()!!.join()
        assertEquals(null, session.appeared())
        session.measured(287.3)!!.join()
        val measured = client.decision(home).sheet!!
        assertEquals(288.0, measured.detents.single { it.id == DetentId.CONTENT }.height)
        session.dragStarted()
        session.dismissed(interactive = true)!!.join()
        val state = client.state()
        assertEquals(1, state.impressions.single().total)
        assertEquals(2, state.latches.single().count)
        assertEquals(DecisionReason.LATCHED, client.decision(home).reason)
        assertEquals(0, client.outbox.size)
        file.delete()
    }

    @Test
    fun aSheetWithdrawnInCodeIsProgrammaticAndDoesNotLatch() = runBlocking<Unit> {
        val user = Live.newUser()
        val client = Live.client(user)
        client.reportCount(1, "offers-home")
        val session = SheetdSheetSession(client.decision(home).sheet!!, client, CoroutineScope(Dispatchers.IO))
        session.appeared()!!.join()
        session.dismissed(interactive = false)!!.join()
        assertTrue(client.state().latches.isEmpty())
        assertTrue(client.decision(home).present)
        assertFalse(session.lifecycle.endedWith!!.rawValue != "programmatic")
    }
}

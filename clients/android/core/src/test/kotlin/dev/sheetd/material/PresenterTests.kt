package dev.sheetd.material

import dev.sheetd.client.Decision
import dev.sheetd.client.DecisionReason
import dev.sheetd.client.Detent
import dev.sheetd.client.DetentId
import dev.sheetd.client.DismissalMethod
import dev.sheetd.client.SheetKind
import dev.sheetd.client.SheetPresentation
import dev.sheetd.client.SheetSize
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The presenter logic the adapters feed: impressions, dismissal methods, the gate, content heights. */
class PresenterTests {
    private val card = SheetPresentation("home-offers", SheetKind.CARDS, SheetSize.CONTENT, listOf(Detent(DetentId.MEDIUM)), DetentId.MEDIUM, awaitingContentHeight = true)

    @Test
    fun oneImpressionPerPresentationWithAFixedEventId() {
        val lifecycle = SheetLifecycle(card)
        assertTrue(lifecycle.appeared())
        assertFalse(lifecycle.appeared(), "revealed again when a nested sheet closed")
        assertTrue(SheetLifecycle(card).appeared(), "a new presentation is a new impression")
        assertTrue(SheetLifecycle(card).impressionEventId != lifecycle.impressionEventId)
    }

    @Test
    fun aDragToHiddenIsASwipe() {
        val lifecycle = SheetLifecycle(card)
        lifecycle.dragStarted()
        assertEquals(DismissalMethod.SWIPE, lifecycle.dismissed(interactive = true))
        assertEquals(DismissCause.DRAG, lifecycle.cause)
        assertNull(lifecycle.dismissed(interactive = true), "reported once")
    }

    @Test
    fun aTouchOutsideIsAScrimTapAndBackIsTheSystemGesture() {
        val outside = SheetLifecycle(card)
        outside.touchedOutside()
        assertEquals(DismissalMethod.SCRIM, outside.dismissed(interactive = true))
        val back = SheetLifecycle(card)
        back.dragStarted()
        back.settled() // pulled back up
        back.backPressed()
        assertEquals(DismissalMethod.SWIPE, back.dismissed(interactive = true))
        assertEquals(DismissCause.BACK_PRESS, back.cause)
    }

    @Test
    fun aControlWinsAndTheAppClosingInCodeIsProgrammatic() {
        val control = SheetLifecycle(card)
        control.dragStarted()
        control.willClose(DismissalMethod.CLOSE_BUTTON)
        assertEquals(DismissalMethod.CLOSE_BUTTON, control.dismissed(interactive = false))
        val code = SheetLifecycle(card)
        assertEquals(DismissalMethod.PROGRAMMATIC, code.dismissed(interactive = false), "no latch when the app replaces the sheet")
        val withdrawn = SheetLifecycle(card)
        withdrawn.withdrawn()
        assertNull(withdrawn.dismissed(interactive = false), "the count went to 0: sheetd knows, nothing to report")
        val afterEnd = SheetLifecycle(card)
        afterEnd.dismissed(interactive = false)
        assertFalse(afterEnd.appeared(), "no impression after the end")
    }

    @Test
    fun aDeclinedConfirmationForgetsWhatAskedAndWithoutACauseTheOnlyGestureAllowedWins() {
        val lifecycle = SheetLifecycle(card)
        lifecycle.backPressed()
        lifecycle.closeDeclined()
        lifecycle.touchedOutside()
        assertEquals(DismissalMethod.SCRIM, lifecycle.dismissed(interactive = true))
        // Compose says nothing about the gesture: a sheet that cannot hide by dragging was closed by the scrim.
        val vetoed = MaterialSheetPlan.of(card.copy(android = androidBlock(hidden = "veto")))!!
        assertEquals(DismissalMethod.SCRIM, SheetLifecycle(card).dismissed(interactive = true, plan = vetoed))
        val both = MaterialSheetPlan.of(card.copy(android = androidBlock(hidden = "allow")))!!
        assertEquals(DismissalMethod.SWIPE, SheetLifecycle(card).dismissed(interactive = true, plan = both))
    }

    @Test
    fun theGateHoldsADismissedSheetUntilTheServerAnswersAnew() {
        val gate = SheetPresentationGate()
        val shown = Decision.presenting(card)
        assertSame(card, gate.sheet(shown))
        gate.dismissed("home-offers", shown)
        assertNull(gate.sheet(shown), "the decision that presented it is still in effect")
        gate.dismissalReported("home-offers")
        assertNull(gate.sheet(shown), "the same decision still")
        val released = Decision(true, DecisionReason.CARDS_AVAILABLE, listOf(card), trace = listOf("count 3"))
        assertSame(card, gate.sheet(released), "a new count released the latch")
        gate.dismissed("home-offers", released)
        gate.observe(Decision.noSheet(DecisionReason.LATCHED))
        assertFalse(gate.isHolding("home-offers"))
        assertNull(gate.sheet(Decision.noSheet()))
    }

    @Test
    fun contentHeightsAreReportedWhenNewRoundedUpAndCapped() {
        val reporter = ContentHeightReporter()
        assertEquals(241.0, reporter.heightToReport(240.2, card))
        assertNull(reporter.heightToReport(240.9, card), "the same height again")
        assertEquals(10_000.0, reporter.heightToReport(20_000.0, card))
        assertNull(reporter.heightToReport(0.0, card))
        assertNull(reporter.heightToReport(Double.NaN, card))
        val measured = card.copy(awaitingContentHeight = false, detents = listOf(Detent(DetentId.CONTENT, 300.0)))
        assertNull(ContentHeightReporter().heightToReport(299.2, measured), "the decision knows it")
        assertEquals(320.0, ContentHeightReporter().heightToReport(320.0, measured))
        val large = card.copy(variant = SheetSize.LARGE, awaitingContentHeight = false, detents = listOf(Detent(DetentId.LARGE)))
        assertNull(ContentHeightReporter().heightToReport(500.0, large), "a large sheet does not size to its content")
    }

    private fun androidBlock(hidden: String) = dev.sheetd.client.AndroidSheet(
        true, dev.sheetd.client.SheetValue.EXPANDED, true, true, true, true, hidden == "confirm", dev.sheetd.client.HiddenChange(hidden),
        listOf(dev.sheetd.client.SheetValue.EXPANDED), null, false
    )
}

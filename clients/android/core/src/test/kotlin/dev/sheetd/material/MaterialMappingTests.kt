package dev.sheetd.material

import dev.sheetd.client.ButtonSize
import dev.sheetd.client.DetentId
import dev.sheetd.client.Detent
import dev.sheetd.client.OpenMode
import dev.sheetd.client.Platform
import dev.sheetd.client.PrimaryButtonSlot
import dev.sheetd.client.SheetContext
import dev.sheetd.client.SheetPresentation
import dev.sheetd.client.SheetValue
import dev.sheetd.client.present
import dev.sheetd.client.reportContentHeight
import dev.sheetd.client.reportCount
import dev.sheetd.support.Live
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/**
 * The Material mapping of every example in examples/catalog.json, decided by the live sheetd for
 * `platform=android`, against hand-written expectations from the design documents: a content or large
 * sheet has no half state (fit to contents, expanded, collapsed skipped), a medium sheet opens at half
 * (000: "opens to half the screen height") and grows to full, a sheet that must not be swiped away
 * vetoes Hidden but keeps dragging (000: "on Android, all sheets are resizable"), a dirty form asks
 * before it goes (000: "confirming dismissal through a Dialog"), a refused scrim tap ignores outside
 * touches, and Back always offers a way out.
 */
class MaterialMappingTests {
    /** The presented sheet for a new user after [setup], on [screen]/[tab] for Android. */
    private fun presented(screen: String, tab: String? = null, dirty: Boolean? = null, setup: suspend (dev.sheetd.client.SheetdClient) -> Unit): SheetPresentation = runBlocking {
        val client = Live.client(Live.newUser())
        setup(client)
        val decision = client.decision(SheetContext(screen, tab, dirty = dirty, appVersion = "2.10", locale = "de"))
        assertTrue(decision.present, "nothing presented on $screen: ${decision.reason} ${decision.trace}")
        decision.sheet!!
    }

    private fun opened(sheetId: String, screen: String, tab: String? = null, dirty: Boolean? = null) =
        presented(screen, tab, dirty) { it.present(sheetId, OpenMode.PUSH) }

    private fun plan(sheet: SheetPresentation) = MaterialSheetPlan.of(sheet)!!

    /** A sheet without a half state: fitted, expanded, collapsed skipped, resting nowhere lower. */
    private fun fitted(fullHeight: Boolean, hideable: Boolean = true, back: DialogAction = DialogAction.DISMISS, outside: DialogAction = DialogAction.DISMISS, radius: Float? = null) =
        ViewsSheetSettings(
            BehaviorState.EXPANDED, skipCollapsed = true, fitToContents = true, halfExpandedRatio = null, expandedOffsetDp = 0,
            peekHeight = PeekHeight.SHEET_HEIGHT, hideable = hideable, draggable = true, fullHeight = fullHeight, back = back,
            touchOutside = outside, dimmedAt = setOf(BehaviorState.EXPANDED), topCornerRadiusDp = radius, dragHandle = true, adjustForIme = false
        )

    /** A medium sheet: opens at half, grows to full, half resting height also when it cannot hide. */
    private fun halfAndFull(hideable: Boolean, dimmedAt: Set<BehaviorState>) = ViewsSheetSettings(
        BehaviorState.HALF_EXPANDED, skipCollapsed = true, fitToContents = false, halfExpandedRatio = 0.5f, expandedOffsetDp = 0,
        peekHeight = PeekHeight.HALF_OF_PARENT, hideable = hideable, draggable = true, fullHeight = true, back = DialogAction.DISMISS,
        touchOutside = DialogAction.DISMISS, dimmedAt = dimmedAt, topCornerRadiusDp = null, dragHandle = true, adjustForIme = false
    )

    private fun cardSheet(containerId: String, screen: String, tab: String? = null, filter: String? = null) =
        presented(screen, tab) { it.reportCount(2, containerId, filter = filter) }

    @Test
    fun homeSecurityAlertsAStrictCardSheetAwaitingItsHeight() {
        val p = plan(cardSheet("alerts-home", "home", "accounts", filter = "category:security"))
        assertEquals(fitted(fullHeight = false), p.views)
        assertEquals("Security alerts", p.chrome.header!!.title)
        assertFalse(p.chrome.closeIcon, "004: card sheets are swiped away, no close control")
        assertTrue(p.chrome.awaitingContentHeight)
        assertTrue(p.compose.skipPartiallyExpanded)
        assertEquals(ConfirmAnswer.ALLOW, p.compose.confirmValueChange(SheetValue.HIDDEN))
    }

    @Test
    fun homeOffersKeepsItsCornerRadius() {
        val p = plan(cardSheet("offers-home", "home", "accounts"))
        assertEquals(fitted(fullHeight = false, radius = 16f), p.views)
        assertEquals(16f, p.compose.topCornerRadiusDp)
        assertNull(p.chrome.header, "flexible: no header")
    }

    @Test
    fun homeRemindersIsAPlainCardSheet() {
        val p = plan(cardSheet("reminders-home", "home", "accounts"))
        assertEquals(fitted(fullHeight = false), p.views)
        assertEquals(setOf(SheetValue.EXPANDED), p.compose.dimmedAt)
    }

    @Test
    fun offerDetailIsALargeSheetWithItsStickyButton() {
        val p = plan(opened("offer-detail", "home", "accounts"))
        assertEquals(fitted(fullHeight = true), p.views)
        assertEquals(PrimaryButtonSlot("Get this offer", ButtonSize.MEDIUM, true), p.chrome.primaryButton)
        assertFalse(p.chrome.closeIcon, "003 strict: no close icon")
        assertTrue(p.chrome.scrollable)
    }

    @Test
    fun transactionsFiltersHasACancelButtonInItsHeader() {
        val p = plan(opened("transactions-filters", "transactions"))
        assertEquals(fitted(fullHeight = true), p.views)
        assertTrue(p.chrome.cancelButton)
        assertEquals("Filter Transactions", p.chrome.header!!.title)
    }

    @Test
    fun accountActionsHasNoDismissControl() {
        val p = plan(opened("account-actions", "account-detail"))
        assertEquals(fitted(fullHeight = false), p.views)
        assertFalse(p.chrome.closeIcon)
        assertFalse(p.chrome.cancelButton)
    }

    @Test
    fun accountInfoFitsItsMeasuredContent() {
        val sheet = presented("account-detail") {
            it.present("account-info", OpenMode.PUSH)
            it.reportContentHeight(240.0, "account-info", Platform.ANDROID)
        }
        assertEquals(listOf(Detent(DetentId.CONTENT, 240.0)), sheet.detents)
        val p = plan(sheet)
        assertEquals(fitted(fullHeight = false), p.views)
        assertTrue(p.chrome.closeIcon)
        assertFalse(p.chrome.awaitingContentHeight)
    }

    @Test
    fun accountRenameWhenDirtyVetoesHiddenAndAsks() {
        val p = plan(opened("account-rename", "account-detail", dirty = true))
        assertEquals(fitted(fullHeight = false, hideable = false, back = DialogAction.CONFIRM, outside = DialogAction.CONFIRM), p.views)
        assertEquals(ConfirmAnswer.ASK, p.compose.confirmValueChange(SheetValue.HIDDEN))
        assertEquals(ConfirmAnswer.ALLOW, p.compose.confirmValueChange(SheetValue.HIDDEN, closingByApp = true), "Save, or the dialog's Discard")
        assertEquals(ConfirmAnswer.ALLOW, p.compose.confirmValueChange(SheetValue.EXPANDED))
    }

    @Test
    fun transferAmountAsksOnlyOnceItIsDirty() {
        assertEquals(fitted(fullHeight = true), plan(opened("transfer-amount", "payments", dirty = false)).views)
        val dirty = plan(opened("transfer-amount", "payments", dirty = true))
        assertEquals(fitted(fullHeight = true, hideable = false, back = DialogAction.CONFIRM, outside = DialogAction.CONFIRM), dirty.views)
    }

    @Test
    fun transferConfirmIgnoresTouchesOutside() {
        val p = plan(opened("transfer-confirm", "payments"))
        assertEquals(fitted(fullHeight = true, outside = DialogAction.IGNORE), p.views)
        assertFalse(p.compose.shouldDismissOnClickOutside)
        assertTrue(p.compose.shouldDismissOnBackPress, "Back is always a way out")
        assertEquals(PrimaryButtonSlot("Send money", ButtonSize.MEDIUM, true), p.chrome.primaryButton)
    }

    @Test
    fun statementPreviewOpensAtHalfAndGrows() {
        val p = plan(opened("statement-preview", "statements"))
        assertEquals(halfAndFull(hideable = true, dimmedAt = setOf(BehaviorState.HALF_EXPANDED, BehaviorState.EXPANDED)), p.views)
        assertFalse(p.compose.skipPartiallyExpanded)
        assertEquals(SheetValue.PARTIALLY_EXPANDED, p.compose.initialValue)
    }

    @Test
    fun atmFinderCannotBeSwipedAwayButStillResizesAndIsUndimmedAtHalf() {
        val p = plan(opened("atm-finder", "atm-locator"))
        assertEquals(halfAndFull(hideable = false, dimmedAt = setOf(BehaviorState.EXPANDED)), p.views)
        assertTrue(p.compose.sheetGesturesEnabled, "turning gestures off would stop resizing too")
        assertEquals(ConfirmAnswer.REFUSE, p.compose.confirmValueChange(SheetValue.HIDDEN))
        assertEquals(ConfirmAnswer.ALLOW, p.compose.confirmValueChange(SheetValue.HIDDEN, closingByApp = true), "its close icon")
        assertEquals(ConfirmAnswer.ALLOW, p.compose.confirmValueChange(SheetValue.EXPANDED))
        assertTrue(p.chrome.closeIcon)
    }

    @Test
    fun statementsTipsIsACardSheet() {
        assertEquals(fitted(fullHeight = false), plan(cardSheet("tips-statements", "statements")).views)
    }

    @Test
    fun paymentsOfferForItsAudience() {
        assertEquals(fitted(fullHeight = false), plan(cardSheet("offers-payments", "payments")).views)
    }

    @Test
    fun accountDetailHolidayWithinItsSchedule() {
        val sheet = cardSheet("holiday-account", "account-detail")
        assertEquals("account-detail-holiday", sheet.id)
        assertEquals(fitted(fullHeight = false), plan(sheet).views)
    }

    @Test
    fun aDecisionForIosHasNoMaterialPlan() = runBlocking<Unit> {
        val client = Live.client(Live.newUser())
        client.reportCount(1, "offers-home")
        val sheet = client.decision(SheetContext("home", "accounts", Platform.IOS)).sheet!!
        assertNull(sheet.android)
        assertNull(MaterialSheetPlan.of(sheet))
    }

    @Test
    fun anUnknownHiddenAnswerKeepsTheSheet() {
        val sheet = cardSheet("offers-home", "home", "accounts")
        val future = sheet.copy(android = sheet.android!!.copy(hidden = dev.sheetd.client.HiddenChange("undo")))
        val p = plan(future)
        assertEquals(ConfirmAnswer.REFUSE, p.compose.confirmValueChange(SheetValue.HIDDEN))
        assertFalse(p.views.hideable)
        assertEquals(DialogAction.DISMISS, p.views.back)
    }
}

package dev.sheetd.client

import dev.sheetd.support.Live
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** Every user route the client wraps, against the live sheetd with the example catalog. */
class LiveClientTests {
    private val home = SheetContext("home", "accounts", appVersion = "2.10.0", locale = "de-CH")

    @Test
    fun aCountPresentsTheCardSheetWithItsAndroidBlock() = runBlocking<Unit> {
        val client = Live.client(Live.newUser())
        val receipt = client.reportCount(2, "offers-home")
        assertEquals(CountOutcome("offers-home", "", 2, true, true), receipt.outcome)
        assertFalse(receipt.replayed)
        val decision = client.decision(home)
        assertTrue(decision.present)
        assertEquals(DecisionReason.CARDS_AVAILABLE, decision.reason)
        assertEquals("home-offers", decision.sheet!!.id)
        assertNotNull(decision.sheet!!.android)
        assertEquals(16.0, decision.sheet!!.android!!.topCornerRadius)
        assertTrue(decision.trace.isNotEmpty())
    }

    @Test
    fun theSecondDecisionIsRevalidatedWithItsETagAnd304() = runBlocking<Unit> {
        val log = Live.ExchangeLog()
        val client = Live.client(Live.newUser(), log = log)
        client.reportCount(1, "offers-home")
        val first = client.decision(home)
        val etag = client.cachedETag(home)
        assertNotNull(etag)
        val second = client.decision(home)
        assertEquals(first, second)
        val last = log.exchanges.last()
        assertEquals(304, last.status)
        assertEquals(etag, last.requestHeaders["If-None-Match"])
    }

    @Test
    fun theEtagCacheKeepsAtMostItsLimitLeastRecentlyUsedFirst() = runBlocking<Unit> {
        val client = Live.client(Live.newUser()) { it.copy(decisionCacheLimit = 2) }
        val screens = listOf("home", "payments", "statements")
        for (screen in screens) client.decision(SheetContext(screen))
        assertEquals(listOf(SheetContext("payments"), SheetContext("statements")), client.cachedContexts())
        client.decision(SheetContext("payments"))
        client.decision(SheetContext("account-detail"))
        assertEquals(listOf(SheetContext("payments"), SheetContext("account-detail")), client.cachedContexts())
    }

    @Test
    fun aSwipedCardSheetLatchesAndAProgrammaticCloseDoesNot() = runBlocking<Unit> {
        val client = Live.client(Live.newUser())
        client.reportCount(2, "offers-home")
        val closed = client.dismiss("home-offers", DismissalMethod.PROGRAMMATIC)
        assertFalse(closed.outcome.latched)
        assertTrue(client.decision(home).present)
        val swiped = client.dismiss("home-offers", DismissalMethod.SWIPE)
        assertTrue(swiped.outcome.latched)
        val after = client.decision(home)
        assertFalse(after.present)
        assertEquals(DecisionReason.LATCHED, after.reason)
        client.reportCount(3, "offers-home")
        assertTrue(client.decision(home).present, "a new count releases the latch")
    }

    @Test
    fun aRetriedEventIdIsAnsweredAsAReplayAndAppliedOnce() = runBlocking<Unit> {
        val client = Live.client(Live.newUser())
        val first = client.reportImpression("home-offers", eventId = "imp-1")
        val again = client.reportImpression("home-offers", eventId = "imp-1")
        assertEquals(1, first.outcome.impressions)
        assertEquals(first.outcome, again.outcome)
        assertTrue(again.replayed)
        assertEquals(2, client.reportImpression("home-offers").outcome.impressions)
    }

    @Test
    fun presentationsStackNestedSheetsOnTheRootsScreen() = runBlocking<Unit> {
        val client = Live.client(Live.newUser())
        client.reportCount(1, "offers-home")
        val opened = client.present("offer-detail", OpenMode.PUSH, parentSheetId = "home-offers")
        assertEquals(listOf("home-offers", "offer-detail"), opened.outcome.stack)
        val decision = client.decision(home)
        assertEquals(DecisionReason.STACK, decision.reason)
        assertEquals(listOf("home-offers", "offer-detail"), decision.stack.map { it.id })
        assertEquals(TransitionMode.PUSH, decision.sheet!!.transition!!.mode)
        val closed = client.dismiss("offer-detail", DismissalMethod.CLOSE_BUTTON)
        assertFalse("offer-detail" in closed.outcome.stack)
        assertEquals("home-offers", client.decision(home).sheet!!.id, "back to the original sheet")
    }

    @Test
    fun aMeasuredContentHeightBecomesTheContentDetent() = runBlocking<Unit> {
        val client = Live.client(Live.newUser())
        client.reportCount(1, "offers-home")
        assertTrue(client.decision(home).sheet!!.awaitingContentHeight)
        val stored = client.reportContentHeight(312.5, "home-offers")
        assertEquals(ContentHeightOutcome("home-offers", Platform.ANDROID, 312.5), stored.outcome)
        val sheet = client.decision(home).sheet!!
        assertFalse(sheet.awaitingContentHeight)
        assertEquals(listOf(Detent(DetentId.CONTENT, 312.5)), sheet.detents)
    }

    @Test
    fun conversionsStateSegmentsSettingsAndErase() = runBlocking<Unit> {
        val user = Live.newUser()
        val client = Live.client(user)
        client.reportCount(4, "offers-home", seq = 9)
        client.reportImpression("home-offers")
        val conversion = client.reportConversion("home-offers", goal = "signup")
        assertFalse(conversion.outcome.counted, "the example catalog has no experiment")
        assertEquals(Live.admin("PUT", "/v1/users/$user/attributes", """{"segments":["beta","vip"]}""").first, 200)
        assertEquals(listOf("beta", "vip"), client.segments())
        val state = client.state()
        assertEquals(user, state.userId)
        assertEquals(listOf(UserState.Container("offers-home", "", 4, 9)), state.containers)
        assertEquals(1, state.impressions.single().total)
        assertEquals(listOf("beta", "vip"), state.segments)
        assertNotNull(client.settings())
        client.erase()
        assertNull(client.cachedETag(home))
        assertTrue(client.state().containers.isEmpty())
    }

    @Test
    fun aBadContextIsA400NamingTheParameterAndIsNotRetried() = runBlocking<Unit> {
        val log = Live.ExchangeLog()
        val client = Live.client(Live.newUser(), log = log)
        val error = assertThrows(SheetdException::class.java) { runBlocking { client.decision(SheetContext("home", appVersion = "two")) } }
        assertEquals(400, error.status)
        assertEquals(listOf("appVersion"), error.invalidParams.map { it.name })
        assertEquals(1, log.exchanges.size)
    }

    @Test
    fun anotherUsersRoutesAreForbidden() = runBlocking<Unit> {
        val client = SheetdClient(Live.url, "someone-else", Live.CountingTokens(Live.token(Live.newUser())))
        val error = assertThrows(SheetdException::class.java) { runBlocking { client.state() } }
        assertEquals(403, error.status)
        assertEquals(SheetdException.Kind.SERVER, error.kind)
    }

    @Test
    fun audiencesNeedAppVersionAndLocale() = runBlocking<Unit> {
        val client = Live.client(Live.newUser())
        client.reportCount(1, "offers-payments")
        assertEquals(DecisionReason.NOT_IN_AUDIENCE, client.decision(SheetContext("payments")).held.single().reason)
        assertEquals("payments-offer", client.decision(SheetContext("payments", appVersion = "2.10", locale = "de")).sheet!!.id)
    }
}

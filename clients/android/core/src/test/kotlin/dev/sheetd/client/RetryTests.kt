package dev.sheetd.client

import dev.sheetd.support.Live
import dev.sheetd.support.ScriptedProxy
import dev.sheetd.support.ScriptedProxy.Step
import kotlinx.coroutines.runBlocking
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.net.ServerSocket

/** Each retry path, through a local proxy that answers from a script before forwarding to sheetd. */
class RetryTests {
    private val proxy = ScriptedProxy(Live.url.substringAfterLast(':').toInt())

    @AfterEach
    fun close() = proxy.close()

    private fun problem(status: Int) = """{"type":"about:blank","title":"scripted","status":$status,"detail":"scripted $status"}"""

    /** Every retryable status once, then sheetd: the event is applied once, with one id on every attempt. */
    private fun retriedOnceThenApplied(status: Int) = runBlocking<Unit> {
        val user = Live.newUser()
        val log = Live.ExchangeLog()
        val client = Live.client(user, baseUrl = proxy.url, log = log)
        proxy.then(Step.Answer(status, body = problem(status)))
        val receipt = client.reportCount(2, "offers-home")
        assertEquals(2, receipt.attempts)
        assertEquals(listOf(status, 200), log.statuses())
        val bodies = proxy.requestsTo("/v1/users/$user/containers").map { it.body }
        assertEquals(2, bodies.size)
        assertEquals(bodies[0], bodies[1], "the retry sends the same body, eventId included")
        assertTrue(bodies[0].contains(receipt.eventId))
    }

    @Test fun a500IsRetried() = retriedOnceThenApplied(500)
    @Test fun a502IsRetried() = retriedOnceThenApplied(502)
    @Test fun a504IsRetried() = retriedOnceThenApplied(504)
    @Test fun a408IsRetried() = retriedOnceThenApplied(408)

    @Test
    fun a429WaitsForItsRetryAfterInSeconds() = runBlocking<Unit> {
        val client = Live.client(Live.newUser(), baseUrl = proxy.url)
        proxy.then(Step.Answer(429, mapOf("Retry-After" to "1"), problem(429)))
        val started = System.nanoTime()
        client.decision(SheetContext("home"))
        val waited = (System.nanoTime() - started) / 1e9
        assertTrue(waited >= 0.95, "waited $waited s, the backoff alone is at most 0.2 s")
    }

    @Test
    fun a429WaitsForItsRetryAfterAsAnHttpDateCappedByTheLimit() = runBlocking<Unit> {
        val client = Live.client(Live.newUser(), baseUrl = proxy.url) // maxRetryAfter = 2 s
        val inOneHour = RetryAfter.httpDate(System.currentTimeMillis() + 3_600_000)
        proxy.then(Step.Answer(429, mapOf("Retry-After" to inOneHour), problem(429)))
        val started = System.nanoTime()
        client.decision(SheetContext("home"))
        val waited = (System.nanoTime() - started) / 1e9
        assertTrue(waited >= 1.9 && waited < 5, "waited $waited s for a date an hour ahead, capped at 2 s")
    }

    @Test
    fun a401RefreshesTheTokenOnceAndRetries() = runBlocking<Unit> {
        val user = Live.newUser()
        val tokens = Live.CountingTokens(Live.token(user, ttlSeconds = -120), Live.token(user))
        val client = Live.client(user, tokens = tokens) // straight to sheetd: the first token has expired
        assertEquals(CountOutcome("offers-home", "", 1, true, true), client.reportCount(1, "offers-home").outcome)
        assertEquals(1, tokens.refreshes)
    }

    @Test
    fun a401AfterTheRefreshFails() = runBlocking<Unit> {
        val user = Live.newUser()
        val tokens = Live.CountingTokens(Live.token(user, ttlSeconds = -120), Live.token(user, ttlSeconds = -100))
        val client = Live.client(user, tokens = tokens)
        val error = assertThrows(SheetdException::class.java) { runBlocking { client.state() } }
        assertEquals(401, error.status)
        assertEquals(1, tokens.refreshes)
    }

    @Test
    fun a401ThenServingThroughTheProxy() = runBlocking<Unit> {
        val user = Live.newUser()
        val fresh = Live.token(user)
        val tokens = Live.CountingTokens("stale-token", fresh)
        val log = Live.ExchangeLog()
        val client = Live.client(user, baseUrl = proxy.url, tokens = tokens, log = log)
        proxy.then(Step.Answer(401, body = problem(401)))
        client.state()
        assertEquals(listOf(401, 200), log.statuses())
        assertEquals(listOf("Bearer stale-token", "Bearer $fresh"), proxy.requests.map { it.header("Authorization") })
        assertEquals(1, tokens.refreshes)
    }

    @Test
    fun otherClientErrorsAreNotRetried() = runBlocking<Unit> {
        val log = Live.ExchangeLog()
        val client = Live.client(Live.newUser(), baseUrl = proxy.url, log = log)
        proxy.then(Step.Answer(409, body = problem(409)))
        val error = assertThrows(SheetdException::class.java) { runBlocking { client.reportImpression("home-offers") } }
        assertEquals(409, error.status)
        assertEquals("scripted 409", error.problem!!.detail)
        assertEquals(listOf(409), log.statuses())
    }

    @Test
    fun aDroppedConnectionIsRetriedAsATransportFailure() = runBlocking<Unit> {
        val log = Live.ExchangeLog()
        val client = Live.client(Live.newUser(), baseUrl = proxy.url, log = log)
        proxy.then(Step.Drop)
        val receipt = client.reportImpression("home-offers")
        assertEquals(1, receipt.outcome.impressions)
        assertEquals(listOf(null, 200), log.statuses())
    }

    @Test
    fun theRetriesEndWithTheLastErrorAfterMaxAttempts() = runBlocking<Unit> {
        val client = Live.client(Live.newUser(), baseUrl = proxy.url)
        repeat(4) { proxy.then(Step.Answer(503, body = problem(503))) }
        val error = assertThrows(SheetdException::class.java) { runBlocking { client.decision(SheetContext("home")) } }
        assertEquals(503, error.status)
        assertTrue(error.isRetryable)
        assertEquals(4, proxy.requests.size)
    }

    @Test
    fun aServerThatIsNotThereIsATransportErrorWithItsIOException() = runBlocking<Unit> {
        val port = ServerSocket(0).use { it.localPort }
        val client = Live.client(Live.newUser(), baseUrl = "http://127.0.0.1:$port")
        val error = assertThrows(SheetdException::class.java) { runBlocking { client.decision(SheetContext("home")) } }
        assertEquals(SheetdException.Kind.TRANSPORT, error.kind)
        assertTrue(error.ioException is java.net.ConnectException, "${error.ioException}")
        assertFalse(error.status != null)
    }
}

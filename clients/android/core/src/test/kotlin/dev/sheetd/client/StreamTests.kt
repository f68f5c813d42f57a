package dev.sheetd.client

import dev.sheetd.support.Live
import dev.sheetd.support.ScriptedProxy
import dev.sheetd.support.ScriptedProxy.Step
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.channels.ReceiveChannel
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.AfterEach
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.concurrent.CountDownLatch
import java.util.concurrent.LinkedBlockingQueue
import java.util.concurrent.TimeUnit

/** Live decisions: the stream, its resumption with Last-Event-ID, the long-poll fallback, the listener. */
class StreamTests {
    private val proxy = ScriptedProxy(Live.url.substringAfterLast(':').toInt())
    private val home = SheetContext("home", "accounts")

    @AfterEach
    fun close() = proxy.close()

    /** The next decision from [channel] that satisfies [predicate], within 15 s. */
    private suspend fun ReceiveChannel<Decision>.awaitDecision(predicate: (Decision) -> Boolean): Decision = withTimeout(15_000) {
        var decision = receive()
        while (!predicate(decision)) decision = receive()
        decision
    }

    @Test
    fun theStreamDeliversTheDecisionThenEachChange() = runBlocking<Unit> {
        val user = Live.newUser()
        val client = Live.client(user)
        val writer = Live.client(user)
        val channel = client.decisions(home, CoroutineScope(Dispatchers.IO))
        try {
            assertFalse(channel.awaitDecision { true }.present)
            writer.reportCount(2, "offers-home")
            assertEquals("home-offers", channel.awaitDecision { it.present }.sheet!!.id)
            writer.dismiss("home-offers", DismissalMethod.SWIPE)
            assertEquals(DecisionReason.LATCHED, channel.awaitDecision { !it.present }.reason)
        } finally {
            channel.cancel()
        }
    }

    @Test
    fun aCutStreamResumesWithLastEventId() = runBlocking<Unit> {
        val user = Live.newUser()
        val log = Live.ExchangeLog()
        val client = Live.client(user, baseUrl = proxy.url, log = log)
        proxy.then(Step.ForwardThenCut)
        val channel = client.decisions(home, CoroutineScope(Dispatchers.IO))
        try {
            channel.awaitDecision { !it.present }
            val etag = client.cachedETag(home)!!
            Live.client(user).reportCount(1, "offers-home")
            channel.awaitDecision { it.present }
            val streams = proxy.requestsTo("/v1/users/$user/decision/stream")
            assertTrue(streams.size >= 2, "reconnected: ${streams.size}")
            assertEquals(null, streams[0].header("Last-Event-ID"))
            assertEquals(etag, streams[1].header("Last-Event-ID"))
        } finally {
            channel.cancel()
        }
    }

    @Test
    fun shutdownAndTokenExpiredReconnectAtOnceTheLatterWithAFreshToken() = runBlocking<Unit> {
        val user = Live.newUser()
        val first = Live.token(user)
        val second = Live.token(user, ttlSeconds = 7200)
        val tokens = Live.CountingTokens(first, second)
        val client = Live.client(user, baseUrl = proxy.url, tokens = tokens)
        proxy.then(Step.Events("event: shutdown\ndata: {}\n\n"), Step.Events("event: token-expired\ndata: {}\n\n"))
        val channel = client.decisions(home, CoroutineScope(Dispatchers.IO))
        try {
            assertFalse(channel.awaitDecision { true }.present)
            val streams = proxy.requestsTo("/v1/users/$user/decision/stream")
            assertEquals(3, streams.size)
            assertEquals(listOf("Bearer $first", "Bearer $first", "Bearer $second"), streams.map { it.header("Authorization") })
            assertEquals(1, tokens.refreshes)
        } finally {
            channel.cancel()
        }
    }

    @Test
    fun aRefusedStreamFallsBackToLongPolling() = runBlocking<Unit> {
        val user = Live.newUser()
        val log = Live.ExchangeLog()
        val client = Live.client(user, baseUrl = proxy.url, log = log)
        proxy.then(Step.Answer(404, body = """{"type":"about:blank","title":"Not Found","status":404,"detail":"no streams here"}"""))
        val channel = client.decisions(home, CoroutineScope(Dispatchers.IO))
        try {
            assertFalse(channel.awaitDecision { true }.present)
            Live.client(user).reportCount(3, "offers-home")
            assertTrue(channel.awaitDecision { it.present }.present)
            val polls = log.exchanges.filter { it.target.startsWith("/v1/users/$user/decision?") }
            assertTrue(polls.any { it.requestHeaders["Prefer"] == "wait=2" && it.requestHeaders["If-None-Match"] != null }, "$polls")
        } finally {
            channel.cancel()
        }
    }

    @Test
    fun aProxyAnsweringWithoutEventStreamAlsoFallsBack() = runBlocking<Unit> {
        val user = Live.newUser()
        val client = Live.client(user, baseUrl = proxy.url)
        proxy.then(Step.Answer(200, mapOf("Content-Type" to "text/html"), "<html>buffering proxy</html>"))
        val channel = client.decisions(home, CoroutineScope(Dispatchers.IO))
        try {
            assertFalse(channel.awaitDecision { true }.present)
            assertEquals(1, proxy.requestsTo("/v1/users/$user/decision/stream").size)
            assertTrue(proxy.requestsTo("/v1/users/$user/decision?").isNotEmpty())
        } finally {
            channel.cancel()
        }
    }

    @Test
    fun longPollOnlyWhenConfigured() = runBlocking<Unit> {
        val user = Live.newUser()
        val client = Live.client(user, baseUrl = proxy.url) { it.copy(liveUpdates = SheetdConfiguration.LiveUpdates.LONG_POLL) }
        val channel = client.decisions(home, CoroutineScope(Dispatchers.IO))
        try {
            channel.awaitDecision { true }
            Live.client(user).reportCount(1, "offers-home")
            channel.awaitDecision { it.present }
            assertTrue(proxy.requestsTo("/v1/users/$user/decision/stream").isEmpty())
        } finally {
            channel.cancel()
        }
    }

    @Test
    fun aForbiddenStreamEndsTheListenerWithItsError() = runBlocking<Unit> {
        val client = SheetdClient(Live.url, "not-me", Live.CountingTokens(Live.token(Live.newUser())))
        val errors = LinkedBlockingQueue<SheetdException>()
        val job = client.watch(home, CoroutineScope(Dispatchers.IO), object : DecisionListener {
            override fun onDecision(decision: Decision) {}
            override fun onError(error: SheetdException) { errors.add(error) }
        })
        val error = errors.poll(15, TimeUnit.SECONDS)
        assertEquals(403, error!!.status)
        job.cancel()
    }

    @Test
    fun theListenerGetsDecisionsUntilItsJobIsCancelled() = runBlocking<Unit> {
        val user = Live.newUser()
        val client = Live.client(user)
        val seen = java.util.Collections.synchronizedList(ArrayList<Decision>())
        val presented = CountDownLatch(1)
        val job = client.watch(home, CoroutineScope(Dispatchers.IO), object : DecisionListener {
            override fun onDecision(decision: Decision) {
                seen.add(decision)
                if (decision.present) presented.countDown()
            }
        })
        Live.client(user).reportCount(2, "offers-home")
        assertTrue(presented.await(15, TimeUnit.SECONDS))
        job.cancel()
        job.join()
        val count = seen.size
        Live.client(user).dismiss("home-offers", DismissalMethod.SWIPE)
        Thread.sleep(300)
        assertEquals(count, seen.size, "no decision after cancel")
    }
}

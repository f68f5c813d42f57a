package dev.sheetd.client

import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.ReceiveChannel
import kotlinx.coroutines.channels.SendChannel
import kotlinx.coroutines.channels.produce
import kotlinx.coroutines.suspendCancellableCoroutine
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import java.io.IOException
import java.util.concurrent.Executors
import kotlin.coroutines.resume
import kotlin.random.Random

/**
 * A typed client of sheetd's user routes, for one user.
 *
 * ```
 * val client = SheetdClient("https://sheetd.example.com", userId = "user-8431", tokenProvider = auth)
 * client.reportCount(2, "offers-home")
 * val decision = client.decision(SheetContext(screen = "home", tab = "accounts", appVersion = ..., locale = ...))
 * ```
 * - Every call retries transport failures, 408, 429, 500, 502, 503 and 504 (honouring `Retry-After`)
 *   with capped exponential backoff and jitter ([RetryPolicy]); a 401 asks the token provider for a
 *   fresh token once. Failures throw [SheetdException].
 * - Events carry their `eventId` from creation; every retry and every later delivery from the outbox
 *   sends it again, so sheetd applies each once.
 * - [decision] keeps the last ETag per [SheetContext] (LRU, [SheetdConfiguration.decisionCacheLimit]).
 */
class SheetdClient(
    /** The server, e.g. `https://sheetd.example.com` (a path prefix is kept). */
    val baseUrl: String,
    override val userId: String,
    tokenProvider: SheetdTokenProvider,
    val configuration: SheetdConfiguration = SheetdConfiguration()
) : SheetdApi {
    internal val core = HttpCore(baseUrl, tokenProvider, configuration)
    private val cache = LruCache<SheetContext, Cached>(configuration.decisionCacheLimit)
    /** The events not yet delivered. */
    val outbox = EventOutbox(configuration.outboxFile, configuration.outboxLimit)
    private val flushing = Mutex()
    private val userPath = "/v1/users/${HttpCore.segment(userId)}"

    internal class Cached(val etag: String, val decision: Decision)

    // ---- Decision ---------------------------------------------------------------------------------

    override suspend fun decision(context: SheetContext): Decision {
        val cached = cache.get(context)
        val headers = if (cached != null) mapOf("If-None-Match" to cached.etag) else emptyMap()
        val answer = core.send("GET", "$userPath/decision", context.queryItems(), headers = headers)
        if (answer.status == 304) {
            return cached?.decision ?: throw SheetdException(SheetdException.Kind.INVALID_RESPONSE, 304, message = "a 304 without a cached decision")
        }
        val decision = Decision.decode(JsonObject.parse(answer.body, "decision"))
        answer.header("ETag")?.let { cache.put(context, Cached(it, decision)) }
        return decision
    }

    /** The ETag of the cached decision for [context], if any. */
    fun cachedETag(context: SheetContext): String? = cache.get(context)?.etag

    /** The contexts whose decisions are cached, least recently used first. */
    fun cachedContexts(): List<SheetContext> = cache.keys()

    /** Forgets every cached decision. */
    fun clearDecisionCache() = cache.clear()

    // ---- Live decisions ---------------------------------------------------------------------------

    override fun decisions(context: SheetContext, scope: CoroutineScope): ReceiveChannel<Decision> =
        scope.produce(Dispatchers.IO, capacity = Channel.CONFLATED) {
            // The error ends the channel (the reader gets it), not the caller's scope.
            try {
                follow(context, channel)
            } catch (e: SheetdException) {
                channel.close(e)
            }
        }

    private enum class StreamEnd { SHUTDOWN, CLOSED, TOKEN_EXPIRED }

    /**
     * Follows `GET .../decision/stream`, reconnecting whenever it ends: at once after `event: shutdown`
     * (a restart or drain) and after `event: token-expired` (with a refreshed token); after a failure
     * the retry policy retries with backoff up to [SheetdConfiguration.maxReconnectDelay]. Each
     * reconnection sends `Last-Event-ID` (the last decision's ETag), so an up-to-date client gets
     * nothing until a change. Long-polls where the stream is refused, or when configured.
     */
    private suspend fun follow(context: SheetContext, out: SendChannel<Decision>) {
        var last = cache.get(context)
        last?.let { out.send(it.decision) }
        var longPoll = configuration.liveUpdates == SheetdConfiguration.LiveUpdates.LONG_POLL
        val backoff = configuration.retry.copy(maxDelay = configuration.maxReconnectDelay)
        var failures = 0
        var retryHint = 2.0
        var refreshedBearer: String? = null
        var refreshed = false
        while (true) {
            var bearer = ""
            try {
                if (longPoll) {
                    longPollOnce(context, last?.etag)?.let {
                        last = it
                        out.send(it.decision)
                    }
                    failures = 0
                    continue
                }
                val parser = ServerSentEventParser()
                val override = refreshedBearer
                refreshedBearer = null
                val end = streamOnce(context, last?.etag, override, { bearer = it }, parser, {
                    failures = 0
                    refreshed = false
                }) { entry ->
                    if (entry.etag != last?.etag) out.send(entry.decision)
                    last = entry
                }
                parser.retryMillis?.let { retryHint = it / 1000.0 }
                when (end) {
                    StreamEnd.TOKEN_EXPIRED -> refreshedBearer = core.freshToken(bearer)
                    StreamEnd.SHUTDOWN -> HttpCore.pause(Random.nextDouble(0.0, 0.25))
                    StreamEnd.CLOSED -> HttpCore.pause(Math.min(retryHint, configuration.maxReconnectDelay))
                }
            } catch (e: SheetdException) {
                when {
                    e.kind == SheetdException.Kind.SERVER && e.status == 401 && !refreshed && bearer.isNotEmpty() -> {
                        refreshed = true
                        val fresh = core.freshToken(bearer)
                        if (fresh == bearer) throw e // the same token would be rejected again
                        refreshedBearer = fresh
                    }
                    e.kind == SheetdException.Kind.SERVER && e.status in streamRefusals && !longPoll -> longPoll = true
                    backoff.retries(e) -> {
                        failures++
                        HttpCore.pause(backoff.delay(failures, e.retryAfterSeconds, Random.nextDouble()))
                    }
                    else -> throw e
                }
            }
        }
    }

    /** One long-poll: the new decision, or null when it did not change within the wait. */
    private suspend fun longPollOnce(context: SheetContext, etag: String?): Cached? {
        val wait = configuration.longPollWait.coerceIn(1, 60)
        val headers = if (etag != null) mapOf("If-None-Match" to etag, "Prefer" to "wait=$wait") else emptyMap()
        val answer = core.send("GET", "$userPath/decision", context.queryItems(), headers = headers, timeout = wait + configuration.requestTimeout)
        if (answer.status == 304) return null
        val entry = Cached(answer.header("ETag") ?: "", Decision.decode(JsonObject.parse(answer.body, "decision")))
        if (entry.etag.isNotEmpty()) cache.put(context, entry)
        return entry
    }

    /** One stream connection, until the server ends it. */
    private suspend fun streamOnce(
        context: SheetContext, lastEventId: String?, bearer: String?, used: (String) -> Unit, parser: ServerSentEventParser,
        connected: () -> Unit, deliver: suspend (Cached) -> Unit
    ): StreamEnd {
        val token = bearer ?: core.token()
        used(token)
        val headers = LinkedHashMap<String, String>()
        headers["Accept"] = "text/event-stream"
        lastEventId?.let { headers["Last-Event-ID"] = it }
        // The read timeout is a dead-peer detector: heartbeats arrive every 15 s by default.
        val connection = core.open("GET", "$userPath/decision/stream", context.queryItems(), headers, 75.0, token)
        val target = "$userPath/decision/stream"
        try {
            val status = try {
                interruptible(connection) { connection.responseCode }
            } catch (e: IOException) {
                core.report("GET", target, 1, null, emptyMap(), headers)
                throw SheetdException(SheetdException.Kind.TRANSPORT, message = "decision stream: $e", cause = e)
            }
            val fields = HttpCore.headers(connection)
            core.report("GET", target, 1, status, fields, headers)
            if (status != 200) {
                val body = try {
                    interruptible(connection) { HttpCore.readAll(connection.errorStream ?: connection.inputStream) }
                } catch (e: IOException) {
                    ""
                }
                throw HttpCore.error(status, body, fields)
            }
            if (fields["content-type"]?.startsWith("text/event-stream") != true) {
                throw SheetdException(SheetdException.Kind.SERVER, 406, message = "the stream answered ${fields["content-type"] ?: "no content type"}")
            }
            connected()
            val buffer = ByteArray(8192)
            while (true) {
                // A stream that was open and got cut (a lost network, a proxy's idle timeout): reconnect.
                val count = try {
                    interruptible(connection) { connection.inputStream.read(buffer) }
                } catch (e: IOException) {
                    return StreamEnd.CLOSED
                }
                if (count < 0) return StreamEnd.CLOSED
                for (event in parser.feed(buffer, count)) {
                    when (event.event) {
                        "decision" -> {
                            val decision = Decision.decode(JsonObject.parse(event.data, "streamed decision"))
                            val entry = Cached(event.id ?: "", decision)
                            if (entry.etag.isNotEmpty()) cache.put(context, entry)
                            deliver(entry)
                        }
                        "shutdown" -> return StreamEnd.SHUTDOWN
                        "token-expired" -> return StreamEnd.TOKEN_EXPIRED
                        else -> Unit // an event type a newer server added
                    }
                }
            }
        } finally {
            // Off this coroutine: the JDK's disconnect waits for a read in progress to return.
            blockingCalls.execute { connection.disconnect() }
        }
    }

    private class Attempt<T>(val value: T?, val error: Throwable?)

    /**
     * Runs a blocking call of [connection] on the client's stream threads; cancelling the caller
     * returns at once and closes the connection, which ends the call (the JDK's `HttpURLConnection`
     * holds a lock during a read, so the read cannot be stopped from the reading coroutine).
     */
    private suspend fun <T> interruptible(connection: java.net.HttpURLConnection, call: () -> T): T {
        val attempt = suspendCancellableCoroutine<Attempt<T>> { continuation ->
            blockingCalls.execute {
                val result = try {
                    Attempt(call(), null)
                } catch (e: Throwable) {
                    Attempt<T>(null, e)
                }
                continuation.resume(result)
            }
            continuation.invokeOnCancellation { blockingCalls.execute { connection.disconnect() } }
        }
        attempt.error?.let { throw it }
        @Suppress("UNCHECKED_CAST")
        return attempt.value as T
    }

    // ---- Events -----------------------------------------------------------------------------------

    override suspend fun send(event: SheetdEvent): EventReceipt<Any> {
        val age = (System.currentTimeMillis() - event.occurredAtMillis) / 1000.0
        val withTime = configuration.sendOccurredAt && age <= configuration.occurredAtMaxAge
        val answer = try {
            core.send(event.method, userPath + event.path, body = event.body(withTime))
        } catch (e: SheetdException) {
            // Outside the server's window (a device clock far off): the event still counts, as of now.
            if (!withTime || e.status != 400 || e.invalidParams.none { it.name == "occurredAt" }) throw e
            core.send(event.method, userPath + event.path, body = event.body(false))
        }
        val outcome = event.decodeOutcome(JsonObject.parse(answer.body, "${event.type} outcome"))
        return EventReceipt(outcome, event.eventId, answer.header("Idempotent-Replayed") == "true", answer.attempts)
    }

    override suspend fun enqueue(event: SheetdEvent): FlushResult {
        outbox.add(event)
        return flush()
    }

    override suspend fun flush(): FlushResult = flushing.withLock {
        val delivered = ArrayList<EventReceipt<Any>>()
        val refused = ArrayList<Pair<SheetdEvent, SheetdException>>()
        var error: SheetdException? = null
        for (event in outbox.pending()) {
            try {
                delivered.add(send(event))
                outbox.remove(event.eventId)
            } catch (e: SheetdException) {
                if (refusedForGood(e)) {
                    refused.add(event to e)
                    outbox.remove(event.eventId)
                } else {
                    error = e // offline, overloaded, or the token: keep it and the ones after it, in order
                    break
                }
            }
        }
        FlushResult(delivered, refused, outbox.size, error)
    }

    // ---- State ------------------------------------------------------------------------------------

    override suspend fun state(): UserState = UserState.decode(JsonObject.parse(core.send("GET", "$userPath/state").body, "state"))

    override suspend fun segments(): List<String> = JsonObject.parse(core.send("GET", "$userPath/attributes").body, "attributes").strings("segments")

    override suspend fun settings(): GlobalSettings {
        val o = JsonObject.parse(core.send("GET", "/v1/settings").body, "settings")
        val cap = o.objOrNull("globalCap")
        return GlobalSettings(cap?.intOrNull("max"), cap?.intOrNull("periodSeconds"), o.intOrNull("minIntervalSeconds"))
    }

    override suspend fun erase() {
        core.send("DELETE", userPath)
        clearDecisionCache()
    }

    companion object {
        /** This library's version (also the Gradle artifacts'). */
        const val VERSION = "0.1.0"

        /** Threads for the streams' blocking reads (daemons: they never keep an app or a test JVM alive). */
        private val blockingCalls = Executors.newCachedThreadPool { runnable ->
            Thread(runnable, "sheetd-stream").apply { isDaemon = true }
        }

        /** The statuses of a stream route that is not there (or not streaming): long-poll instead. */
        private val streamRefusals = setOf(404, 405, 406, 501)

        /** A 4xx that no retry or token can fix: the event is dropped rather than blocking the ones after it. */
        internal fun refusedForGood(e: SheetdException) =
            (e.kind == SheetdException.Kind.SERVER && e.status != null && e.status in 400..499 && e.status != 401 && !RetryPolicy().retries(e)) ||
                e.kind == SheetdException.Kind.INVALID_RESPONSE
    }
}

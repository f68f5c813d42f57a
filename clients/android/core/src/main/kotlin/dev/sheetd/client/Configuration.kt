package dev.sheetd.client

import java.io.File
import java.net.HttpURLConnection

/** Settings of a [SheetdClient]. Times are seconds. */
data class SheetdConfiguration(
    /** Retries of single requests (the live loop reconnects for as long as it is followed). */
    val retry: RetryPolicy = RetryPolicy(),
    /** Seconds a single request may take (a long-poll gets its wait on top). */
    val requestTimeout: Double = 30.0,
    /** Seconds to connect. */
    val connectTimeout: Double = 10.0,
    /** Seconds a long-poll asks the server to hold the request (`Prefer: wait=N`, 1 to 60). */
    val longPollWait: Int = 30,
    /** The longest pause between two reconnections of the live loop. */
    val maxReconnectDelay: Double = 10.0,
    /** How live decisions are followed. */
    val liveUpdates: LiveUpdates = LiveUpdates.AUTOMATIC,
    /** The most decisions (one per [SheetContext]) kept with their ETags; 0 keeps none. */
    val decisionCacheLimit: Int = 64,
    /**
     * Where the outbox keeps events not yet delivered (one JSON file; use `context.filesDir`). Null: in
     * memory only, so events still pending when the process dies are lost.
     */
    val outboxFile: File? = null,
    /** The most events the outbox keeps; the oldest are dropped beyond it. */
    val outboxLimit: Int = 500,
    /**
     * Send each event's `occurredAt` (RFC 3339, the time the app created it), so a report delivered late
     * (from the outbox, after a restart) counts at the time it happened: a dismissal's cooldown, an
     * impression's place in the caps' windows. Turn it off for a sheetd older than the member (it
     * refuses unknown members with a 400).
     */
    val sendOccurredAt: Boolean = true,
    /**
     * The oldest event, in seconds, sent with its `occurredAt`: sheetd takes times up to 24 h back (and
     * 60 s ahead of its clock); an older event is sent without it and counts when it arrives, rather
     * than being refused. A 400 naming `occurredAt` (a device clock far off) is also sent again without it.
     */
    val occurredAtMaxAge: Double = 23 * 3600.0,
    /** Adapts every request before it is sent (your headers, `User-Agent`); runs after the client's own. */
    val requestAdapter: ((HttpURLConnection) -> Unit)? = null,
    /** Called after every HTTP exchange (logs, metrics, tests). Never sees the token. */
    val onExchange: ((Exchange) -> Unit)? = null
) {
    enum class LiveUpdates {
        /** Server-Sent Events; long-poll where the stream is refused (404, 405, 406, 501, or not `text/event-stream`). */
        AUTOMATIC,
        /** Only long-poll (`Prefer: wait=`), e.g. behind a proxy that buffers streams. */
        LONG_POLL
    }

    /** One HTTP exchange, as reported to [onExchange]. */
    data class Exchange(
        val method: String,
        /** The path and query. */
        val target: String,
        /** 1 for the first try, 2 for the first retry, ... */
        val attempt: Int,
        /** The status, null when no answer came. */
        val status: Int?,
        /** `etag`, `idempotent-replayed`, `retry-after`, `preference-applied`, lower-cased. */
        val headers: Map<String, String>,
        /** The request headers that matter to tests and logs (`If-None-Match`, `Last-Event-ID`, `Prefer`). */
        val requestHeaders: Map<String, String> = emptyMap()
    )
}

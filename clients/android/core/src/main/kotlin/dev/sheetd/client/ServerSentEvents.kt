package dev.sheetd.client

import java.io.ByteArrayOutputStream

/** One Server-Sent Event: its type (`message` when none), data lines joined with newlines, last id. */
data class ServerSentEvent(val event: String, val data: String, val id: String?)

/**
 * An incremental parser of `text/event-stream` bytes (WHATWG HTML, "Server-sent events"): lines end
 * with LF, CRLF or CR (also split across chunks), comments are ignored, a blank line dispatches an
 * event that has data, `retry:` sets [retryMillis].
 */
class ServerSentEventParser {
    var retryMillis: Long? = null
        private set
    var lastEventId: String? = null
        private set
    private val line = ByteArrayOutputStream()
    private var lastWasCR = false
    private var eventType = ""
    private val data = StringBuilder()
    private var hasData = false

    /** Parses [count] bytes of [bytes] and returns the events they completed. */
    fun feed(bytes: ByteArray, count: Int = bytes.size): List<ServerSentEvent> {
        val events = ArrayList<ServerSentEvent>()
        for (i in 0 until count) {
            val b = bytes[i]
            if (lastWasCR) {
                lastWasCR = false
                if (b == LF) continue
            }
            when (b) {
                CR -> { lastWasCR = true; endLine()?.let(events::add) }
                LF -> endLine()?.let(events::add)
                else -> line.write(b.toInt())
            }
        }
        return events
    }

    private fun endLine(): ServerSentEvent? {
        val text = String(line.toByteArray(), Charsets.UTF_8)
        line.reset()
        if (text.length == 0) return dispatch()
        if (text.startsWith(":")) return null
        val colon = text.indexOf(':')
        val name = if (colon < 0) text else text.substring(0, colon)
        var value = if (colon < 0) "" else text.substring(colon + 1)
        if (value.startsWith(" ")) value = value.substring(1)
        when (name) {
            "event" -> eventType = value
            "data" -> {
                if (hasData) data.append('\n')
                data.append(value)
                hasData = true
            }
            "id" -> if (!value.contains('\u0000')) lastEventId = value
            "retry" -> value.toLongOrNull()?.takeIf { it >= 0 }?.let { retryMillis = it }
        }
        return null
    }

    private fun dispatch(): ServerSentEvent? {
        val event = if (hasData) ServerSentEvent(if (eventType.length == 0) "message" else eventType, data.toString(), lastEventId) else null
        eventType = ""
        data.setLength(0)
        hasData = false
        return event
    }

    private companion object {
        const val CR: Byte = 13
        const val LF: Byte = 10
    }
}

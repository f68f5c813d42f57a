package dev.sheetd.client

import java.text.SimpleDateFormat
import java.util.Date
import java.util.Locale
import java.util.TimeZone
import java.util.UUID

/**
 * An event the app reports. Each carries its [eventId] from creation (every retry and every delivery
 * from the outbox, after a restart too, sends the same id, so sheetd applies it once) and the time it
 * happened ([occurredAtMillis], sent as `occurredAt` when [SheetdConfiguration.sendOccurredAt] is on).
 */
sealed class SheetdEvent {
    abstract val eventId: String
    abstract val occurredAtMillis: Long
    internal abstract val type: String
    internal abstract val method: String
    /** The path below `/v1/users/{userId}`. */
    internal abstract val path: String
    /** The body's own members (without `eventId` and `occurredAt`). */
    internal abstract fun members(): MutableMap<String, Any?>

    /** `PUT .../containers/{containerId}/count`: a container's card count (a stale [seq] is not applied). */
    data class Count(
        val containerId: String, val count: Int, val seq: Int? = null, val filter: String? = null,
        override val eventId: String = newEventId(), override val occurredAtMillis: Long = System.currentTimeMillis()
    ) : SheetdEvent() {
        override val type get() = "count"
        override val method get() = "PUT"
        override val path get() = "/containers/${HttpCore.segment(containerId)}/count"
        override fun members() = linkedMapOf<String, Any?>("count" to count).also { m ->
            seq?.let { m["seq"] = it }
            filter?.let { m["filter"] = it }
        }
    }

    /** `POST .../dismissals`: the user (or the app, `programmatic`) dismissed a sheet; a card sheet latches. */
    data class Dismissal(
        val sheetId: String, val dismissalMethod: DismissalMethod,
        override val eventId: String = newEventId(), override val occurredAtMillis: Long = System.currentTimeMillis()
    ) : SheetdEvent() {
        override val type get() = "dismissal"
        override val method get() = "POST"
        override val path get() = "/dismissals"
        override fun members() = linkedMapOf<String, Any?>("sheetId" to sheetId, "method" to dismissalMethod.rawValue)
    }

    /** `POST .../presentations`: a sheet opened, nested (`push`) or as a flow's next step (`replace`). */
    data class Presentation(
        val sheetId: String, val mode: OpenMode = OpenMode.PUSH, val parentSheetId: String? = null,
        override val eventId: String = newEventId(), override val occurredAtMillis: Long = System.currentTimeMillis()
    ) : SheetdEvent() {
        override val type get() = "presentation"
        override val method get() = "POST"
        override val path get() = "/presentations"
        override fun members() = linkedMapOf<String, Any?>("sheetId" to sheetId, "mode" to mode.rawValue).also { m ->
            parentSheetId?.let { m["parentSheetId"] = it }
        }
    }

    /** `PUT .../sheets/{sheetId}/content-height`: the content's measured height in dp. */
    data class ContentHeight(
        val sheetId: String, val height: Double, val platform: Platform = Platform.ANDROID,
        override val eventId: String = newEventId(), override val occurredAtMillis: Long = System.currentTimeMillis()
    ) : SheetdEvent() {
        override val type get() = "contentHeight"
        override val method get() = "PUT"
        override val path get() = "/sheets/${HttpCore.segment(sheetId)}/content-height"
        override fun members() = linkedMapOf<String, Any?>("height" to height, "platform" to platform.rawValue)
    }

    /** `POST .../impressions`: the sheet is on screen (what caps, stats and experiments count). */
    data class Impression(
        val sheetId: String,
        override val eventId: String = newEventId(), override val occurredAtMillis: Long = System.currentTimeMillis()
    ) : SheetdEvent() {
        override val type get() = "impression"
        override val method get() = "POST"
        override val path get() = "/impressions"
        override fun members() = linkedMapOf<String, Any?>("sheetId" to sheetId)
    }

    /** `POST .../conversions`: the user converted for the sheet's experiment. */
    data class Conversion(
        val sheetId: String, val goal: String? = null,
        override val eventId: String = newEventId(), override val occurredAtMillis: Long = System.currentTimeMillis()
    ) : SheetdEvent() {
        override val type get() = "conversion"
        override val method get() = "POST"
        override val path get() = "/conversions"
        override fun members() = linkedMapOf<String, Any?>("sheetId" to sheetId).also { m -> goal?.let { m["goal"] = it } }
    }

    /** The request body: the members, `eventId`, and `occurredAt` when [withOccurredAt]. */
    fun body(withOccurredAt: Boolean): String {
        val body = members()
        body["eventId"] = eventId
        if (withOccurredAt) body["occurredAt"] = rfc3339(occurredAtMillis)
        return Json.write(body)
    }

    /** The outcome of a 2xx answer to this event. */
    internal fun decodeOutcome(o: JsonObject): Any = when (this) {
        is Count -> CountOutcome(o.string("containerId"), o.stringOrNull("filter") ?: "", o.int("count"), o.bool("changed"), o.bool("applied"))
        is Dismissal -> DismissalOutcome(o.strings("stack"), o.bool("latched"))
        is Presentation -> PresentationOutcome(o.strings("stack"))
        is ContentHeight -> ContentHeightOutcome(o.string("sheetId"), Platform(o.string("platform")), o.double("height"))
        is Impression -> ImpressionOutcome(o.string("sheetId"), o.int("impressions"))
        is Conversion -> ConversionOutcome(o.string("sheetId"), o.stringOrNull("experimentId"), o.stringOrNull("goal"), o.bool("counted"), o.stringOrNull("arm"))
    }

    /** The outbox's stored form: the body's members plus `type`, `eventId`, `occurredAtMillis`. */
    internal fun stored(): MutableMap<String, Any?> = members().also {
        when (this) {
            is Count -> it["containerId"] = containerId
            is ContentHeight -> it["sheetId"] = sheetId
            else -> Unit
        }
        it["type"] = type
        it["eventId"] = eventId
        it["occurredAtMillis"] = occurredAtMillis
    }

    companion object {
        /** A new event id (a lowercase UUID): one per logical event, reused by its retries. */
        @JvmStatic
        fun newEventId(): String = UUID.randomUUID().toString()

        /** [millis] as RFC 3339 in UTC with milliseconds (`2026-12-06T05:01:02.250Z`). */
        @JvmStatic
        fun rfc3339(millis: Long): String {
            val format = SimpleDateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'", Locale.US)
            format.timeZone = TimeZone.getTimeZone("UTC")
            return format.format(Date(millis))
        }

        /** An event from the outbox's stored form; null for one this version cannot read. */
        internal fun fromStored(o: JsonObject): SheetdEvent? {
            val id = o.stringOrNull("eventId") ?: return null
            val at = (o.members["occurredAtMillis"] as? Number)?.toLong() ?: return null
            return when (o.stringOrNull("type")) {
                "count" -> Count(o.string("containerId"), o.int("count"), o.intOrNull("seq"), o.stringOrNull("filter"), id, at)
                "dismissal" -> Dismissal(o.string("sheetId"), DismissalMethod(o.string("method")), id, at)
                "presentation" -> Presentation(o.string("sheetId"), OpenMode(o.string("mode")), o.stringOrNull("parentSheetId"), id, at)
                "contentHeight" -> ContentHeight(o.string("sheetId"), o.double("height"), Platform(o.string("platform")), id, at)
                "impression" -> Impression(o.string("sheetId"), id, at)
                "conversion" -> Conversion(o.string("sheetId"), o.stringOrNull("goal"), id, at)
                else -> null
            }
        }
    }
}

/** What the server answered to an event: the outcome, the event id, whether it was a replay of an earlier attempt. */
data class EventReceipt<T>(val outcome: T, val eventId: String, val replayed: Boolean, val attempts: Int)

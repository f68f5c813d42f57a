package dev.sheetd.client

import java.io.File
import java.io.IOException

/**
 * Events not yet delivered, in the order they happened, kept in one JSON file (written to a temporary
 * file and renamed over it, so a crash leaves the old or the new list, never half of one). An event
 * leaves the outbox when sheetd answered it (a replay counts: the server had it) or refused it for good
 * (a 4xx other than 401, 408 and 429: retrying cannot fix it; [SheetdClient.flush] reports it).
 */
class EventOutbox(private val file: File?, private val limit: Int = 500) {
    private val events = ArrayList<SheetdEvent>()

    init {
        if (file != null && file.exists()) {
            try {
                val list = Json.parse(file.readText(Charsets.UTF_8)) as? List<*> ?: emptyList<Any?>()
                for (element in list) {
                    val map = element as? Map<*, *> ?: continue
                    SheetdEvent.fromStored(JsonObject(JsonObject.cast(map), "outbox"))?.let { events.add(it) }
                }
            } catch (e: IllegalArgumentException) {
                // A damaged file (not ours, or cut by a full disk): start empty rather than never sending again.
            } catch (e: SheetdException) {
            }
        }
    }

    /** The pending events, oldest first. */
    @Synchronized fun pending(): List<SheetdEvent> = ArrayList(events)

    val size: Int @Synchronized get() = events.size

    /** Adds [event] (not again when its id is pending already) and saves; the oldest go beyond the limit. */
    @Synchronized fun add(event: SheetdEvent) {
        if (events.any { it.eventId == event.eventId }) return
        events.add(event)
        while (events.size > limit) events.removeAt(0)
        save()
    }

    /** Removes the event with [eventId] and saves. */
    @Synchronized fun remove(eventId: String) {
        if (events.removeAll { it.eventId == eventId }) save()
    }

    private fun save() {
        val target = file ?: return
        try {
            target.parentFile?.mkdirs()
            val temporary = File(target.path + ".tmp")
            temporary.writeText(Json.write(events.map { it.stored() }), Charsets.UTF_8)
            if (!temporary.renameTo(target)) {
                target.delete()
                if (!temporary.renameTo(target)) throw IOException("cannot rename $temporary to $target")
            }
        } catch (e: IOException) {
            throw SheetdException(SheetdException.Kind.INVALID_REQUEST, message = "the outbox could not be saved: $e", cause = e)
        }
    }
}

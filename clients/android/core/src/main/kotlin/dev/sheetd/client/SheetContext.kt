package dev.sheetd.client

import java.util.Locale

/**
 * The query parameters of `GET .../decision` and its stream; also the key of the client's ETag cache
 * (equal contexts share one cached decision). Pass [appVersion] and [locale] ([appVersion] and
 * [locale] in the companion check them), or sheets whose audience names either are held as
 * `not-in-audience`.
 */
data class SheetContext(
    val screen: String,
    val tab: String? = null,
    val platform: Platform = Platform.ANDROID,
    /** `phone` or `pad` (a tablet); null: the server's default, phone. */
    val idiom: Idiom? = null,
    val orientation: Orientation? = null,
    val keyboardVisible: Boolean? = null,
    /** The presented sheet holds unsaved input. */
    val dirty: Boolean? = null,
    /** The usable height in dp, when known. */
    val viewportHeight: Double? = null,
    /** Dotted numbers (`2.10.0`): `BuildConfig.VERSION_NAME` through [appVersion]. */
    val appVersion: String? = null,
    /** A BCP 47 tag (`de-CH`): `Locale.getDefault()` through [locale]. */
    val locale: String? = null
) {
    /** The query items, in the API's order; null members are left out. */
    fun queryItems(): List<Pair<String, String>> {
        val items = ArrayList<Pair<String, String>>()
        items.add("screen" to screen)
        tab?.let { items.add("tab" to it) }
        items.add("platform" to platform.rawValue)
        idiom?.let { items.add("idiom" to it.rawValue) }
        orientation?.let { items.add("orientation" to it.rawValue) }
        keyboardVisible?.let { items.add("keyboard" to it.toString()) }
        dirty?.let { items.add("dirty" to it.toString()) }
        viewportHeight?.let { items.add("viewportHeight" to Json.number(it)) }
        appVersion?.let { items.add("appVersion" to it) }
        locale?.let { items.add("locale" to it) }
        return items
    }

    companion object {
        private val versionPattern = Regex("[0-9]{1,9}(\\.[0-9]{1,9}){0,7}")
        private val localePattern = Regex("[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*")

        /** [text] when the server accepts it as `appVersion` (1 to 8 dotted numbers of 1 to 9 digits), else null. */
        @JvmStatic
        fun appVersion(text: String?): String? = text?.takeIf { versionPattern.matches(it) }

        /**
         * [text] when the server accepts it as `locale` (at most 64 characters, subtags of 1 to 8 letters
         * or digits joined by `-`, the first of 2 to 8 letters), else null. `de_CH` is read as `de-CH`.
         */
        @JvmStatic
        fun locale(text: String?): String? = text?.replace('_', '-')?.takeIf { it.length <= 64 && localePattern.matches(it) }

        /** The tag of a [Locale] (`Locale.getDefault()`), when the server accepts it. */
        @JvmStatic
        fun locale(value: Locale): String? = locale(value.toLanguageTag())
    }
}

package dev.sheetd.client

import java.io.IOException
import java.net.MalformedURLException
import java.net.UnknownServiceException
import java.text.ParsePosition
import java.text.SimpleDateFormat
import java.util.Locale
import java.util.TimeZone
import javax.net.ssl.SSLHandshakeException
import javax.net.ssl.SSLPeerUnverifiedException

/**
 * When and how long the client waits before retrying a request (as the Swift client and Alamofire's
 * `RetryPolicy`): the statuses in [retryableStatuses] (408, 429, 500, 502, 503, 504) and transport
 * failures (refused, reset, timed out, DNS), never another 4xx, never an untrusted certificate. A 401
 * is not the policy's: the client asks the token provider for a fresh token once and retries.
 *
 * The delay before retry `n` (1-based) is `baseDelay * 2^(n-1)` capped at [maxDelay], with equal
 * jitter (a random point in its upper half) so clients that failed together do not retry together.
 * A `Retry-After` (seconds or an HTTP-date) is the lower bound, itself capped at [maxRetryAfter]. Times
 * are seconds.
 */
data class RetryPolicy(
    /** Attempts in all, the first included (1: never retry). */
    val maxAttempts: Int = 4,
    val baseDelay: Double = 0.2,
    val maxDelay: Double = 5.0,
    /** The longest `Retry-After` honoured: a longer one waits this long. */
    val maxRetryAfter: Double = 10.0,
    val retryableStatuses: Set<Int> = DEFAULT_RETRYABLE_STATUSES
) {
    /** Whether this policy retries [error] (attempts aside). */
    fun retries(error: SheetdException): Boolean = when (error.kind) {
        SheetdException.Kind.TRANSPORT -> retriesTransport(error.ioException)
        SheetdException.Kind.SERVER -> error.status != null && error.status in retryableStatuses
        else -> false
    }

    /**
     * Seconds to wait before retry [retry] (1-based); [unit] is a random number in 0 until 1 (injected,
     * so the function is pure); [retryAfter] is the server's `Retry-After` in seconds.
     */
    fun delay(retry: Int, retryAfter: Double? = null, unit: Double): Double {
        val exponent = (retry - 1).coerceIn(0, 30)
        val capped = Math.min(maxDelay, baseDelay * (1L shl exponent))
        val jittered = capped / 2 + capped / 2 * unit.coerceIn(0.0, 1.0)
        return Math.max(jittered, Math.min(retryAfter ?: 0.0, maxRetryAfter))
    }

    companion object {
        @JvmField val DEFAULT_RETRYABLE_STATUSES: Set<Int> = setOf(408, 429, 500, 502, 503, 504)

        /** Never retries. */
        @JvmField val NONE = RetryPolicy(maxAttempts = 1)

        /** Failures a later attempt may not meet; not a bad URL, an unsupported protocol or a certificate. */
        internal fun retriesTransport(e: IOException?): Boolean = when (e) {
            is MalformedURLException, is UnknownServiceException, is SSLPeerUnverifiedException -> false
            is SSLHandshakeException -> e.cause !is java.security.cert.CertificateException
            else -> true
        }
    }
}

/** `Retry-After` (RFC 9110, section 10.2.3): delay-seconds or an HTTP-date. */
object RetryAfter {
    private val formats = listOf("EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy")

    /**
     * Seconds to wait from [nowMillis]: an integer as is, an HTTP-date (IMF-fixdate, or the obsolete
     * RFC 850 and asctime forms) as its distance from now (0 when past); null for anything else.
     */
    @JvmStatic
    @JvmOverloads
    fun seconds(value: String, nowMillis: Long = System.currentTimeMillis()): Double? {
        val text = value.trim()
        if (text.isNotEmpty() && text.all { it in '0'..'9' }) return text.toDoubleOrNull()
        val normalized = text.replace("  ", " ")
        for (pattern in formats) {
            val format = SimpleDateFormat(pattern, Locale.US)
            format.timeZone = TimeZone.getTimeZone("GMT")
            format.isLenient = false
            val position = ParsePosition(0)
            val date = format.parse(normalized, position) ?: continue
            if (position.index != normalized.length) continue
            return Math.max(0.0, (date.time - nowMillis) / 1000.0)
        }
        return null
    }

    /** The IMF-fixdate of [millis] (`Sun, 06 Nov 1994 08:49:37 GMT`), as servers send it. */
    @JvmStatic
    fun httpDate(millis: Long): String {
        val format = SimpleDateFormat("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
        format.timeZone = TimeZone.getTimeZone("GMT")
        return format.format(java.util.Date(millis))
    }
}

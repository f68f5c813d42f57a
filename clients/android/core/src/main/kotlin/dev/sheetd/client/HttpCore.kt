package dev.sheetd.client

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.delay
import kotlinx.coroutines.withContext
import java.io.IOException
import java.io.InputStream
import java.net.HttpURLConnection
import java.net.URL
import java.net.URLEncoder
import kotlin.random.Random

/**
 * The request machinery: URLs, the bearer token, retries, problem+json errors. `HttpURLConnection`
 * (the JDK's and Android's alike) so the library has no HTTP dependency and one source compiles with
 * old and new Kotlin; every blocking call runs on `Dispatchers.IO`.
 */
internal class HttpCore(
    baseUrl: String,
    private val provider: SheetdTokenProvider,
    val configuration: SheetdConfiguration
) {
    private val base = baseUrl.trimEnd('/')
    private val refresher = TokenRefresher(provider)

    /** One answer: status, body (empty for a 304) and headers with lower-cased names. */
    class Answer(val status: Int, val body: String, val headers: Map<String, String>, val attempts: Int) {
        fun header(name: String): String? = headers[lower(name)]
    }

    fun url(path: String, query: List<Pair<String, String>> = emptyList()): URL {
        val q = if (query.isEmpty()) "" else query.joinToString("&", "?") { (k, v) -> encode(k) + "=" + encode(v) }
        return URL(base + path + q)
    }

    /**
     * Sends a request, retrying what the policy retries (backoff, `Retry-After`) and a 401 once with a
     * refreshed token. A 2xx or 304 is returned; any other status throws [SheetdException].
     */
    suspend fun send(
        method: String,
        path: String,
        query: List<Pair<String, String>> = emptyList(),
        body: String? = null,
        headers: Map<String, String> = emptyMap(),
        timeout: Double? = null
    ): Answer {
        val policy = configuration.retry
        var attempt = 0
        var retries = 0
        var bearer: String? = null
        var refreshed = false
        while (true) {
            attempt++
            val token = bearer ?: token()
            val error: SheetdException = try {
                val answer = exchange(method, path, query, body, headers, timeout, token, attempt)
                if (answer.status in 200..299 || answer.status == 304) return answer
                error(answer.status, answer.body, answer.headers)
            } catch (e: SheetdException) {
                if (e.kind != SheetdException.Kind.TRANSPORT) throw e
                e
            }
            if (error.status == 401 && !refreshed) {
                // Not a retry of the policy: the same request, authenticated anew (once).
                refreshed = true
                val fresh = freshToken(token)
                if (fresh != token) {
                    bearer = fresh
                    continue
                }
            }
            if (!policy.retries(error) || retries + 1 >= policy.maxAttempts) throw error
            retries++
            pause(policy.delay(retries, error.retryAfterSeconds, Random.nextDouble()))
        }
    }

    suspend fun token(): String = try {
        provider.token()
    } catch (e: kotlinx.coroutines.CancellationException) {
        throw e
    } catch (e: Exception) {
        throw SheetdException(SheetdException.Kind.TOKEN, message = "the token provider threw: $e", cause = e)
    }

    suspend fun freshToken(rejected: String): String = try {
        refresher.fresh(rejected)
    } catch (e: kotlinx.coroutines.CancellationException) {
        throw e
    } catch (e: Exception) {
        throw SheetdException(SheetdException.Kind.TOKEN, message = "the token provider's refresh threw: $e", cause = e)
    }

    /** Opens a connection with the client's headers, then the app's adapter. */
    fun open(method: String, path: String, query: List<Pair<String, String>>, headers: Map<String, String>, timeout: Double?, token: String): HttpURLConnection {
        val connection = url(path, query).openConnection() as HttpURLConnection
        connection.requestMethod = method
        connection.connectTimeout = (configuration.connectTimeout * 1000).toInt()
        connection.readTimeout = ((timeout ?: configuration.requestTimeout) * 1000).toInt()
        connection.useCaches = false
        connection.instanceFollowRedirects = false
        connection.setRequestProperty("Authorization", "Bearer $token")
        connection.setRequestProperty("Accept", "application/json")
        for ((name, value) in headers) connection.setRequestProperty(name, value)
        configuration.requestAdapter?.let { adapt ->
            try {
                adapt(connection)
            } catch (e: Exception) {
                connection.disconnect()
                throw SheetdException(SheetdException.Kind.INVALID_REQUEST, message = "the request adapter threw: $e", cause = e)
            }
        }
        return connection
    }

    /** One exchange on `Dispatchers.IO`: the answer whatever its status; no answer throws a TRANSPORT error. */
    private suspend fun exchange(
        method: String, path: String, query: List<Pair<String, String>>, body: String?, headers: Map<String, String>,
        timeout: Double?, token: String, attempt: Int
    ): Answer = withContext(Dispatchers.IO) {
        val target = path + if (query.isEmpty()) "" else "?" + query.joinToString("&") { (k, v) -> encode(k) + "=" + encode(v) }
        val connection = open(method, path, query, headers, timeout, token)
        try {
            if (body != null) {
                val bytes = body.toByteArray(Charsets.UTF_8)
                connection.doOutput = true
                connection.setRequestProperty("Content-Type", "application/json")
                connection.setFixedLengthStreamingMode(bytes.size)
                connection.outputStream.use { it.write(bytes) }
            }
            val status = connection.responseCode
            val responseHeaders = headers(connection)
            // A 304 has no body but sheetd sends the 200's Content-Length with it: never wait for bytes.
            val text = if (status == 304) "" else readAll(if (status >= 400) connection.errorStream else connection.inputStream)
            report(method, target, attempt, status, responseHeaders, headers)
            if (status == 304) connection.disconnect()
            Answer(status, text, responseHeaders, attempt)
        } catch (e: IOException) {
            connection.disconnect()
            report(method, target, attempt, null, emptyMap(), headers)
            throw SheetdException(SheetdException.Kind.TRANSPORT, message = "$method $target: $e", cause = e)
        }
    }

    fun report(method: String, target: String, attempt: Int, status: Int?, headers: Map<String, String>, requestHeaders: Map<String, String>) {
        val onExchange = configuration.onExchange ?: return
        onExchange(
            SheetdConfiguration.Exchange(
                method, target, attempt, status,
                headers.filterKeys { it in reportedHeaders },
                requestHeaders.filterKeys { lower(it) in reportedRequestHeaders }
            )
        )
    }

    companion object {
        private val reportedHeaders = setOf("etag", "idempotent-replayed", "retry-after", "preference-applied", "content-type")
        private val reportedRequestHeaders = setOf("if-none-match", "last-event-id", "prefer")

        fun encode(text: String): String = URLEncoder.encode(text, "UTF-8").replace("+", "%20")

        /** Escapes one path segment. */
        fun segment(text: String): String = encode(text)

        /** ASCII lower case (locale-independent, and the same call on old and new Kotlin). */
        fun lower(text: String): String {
            val chars = text.toCharArray()
            for (i in chars.indices) if (chars[i] in 'A'..'Z') chars[i] = chars[i] + ('a' - 'A')
            return String(chars)
        }

        fun headers(connection: HttpURLConnection): Map<String, String> {
            val out = HashMap<String, String>()
            for ((name, values) in connection.headerFields) {
                if (name != null && values != null && values.isNotEmpty()) out[lower(name)] = values.joinToString(", ")
            }
            return out
        }

        fun readAll(stream: InputStream?): String = stream?.use { String(it.readBytes(), Charsets.UTF_8) } ?: ""

        /** The typed error of an error status: the problem+json when the body is one. */
        fun error(status: Int, body: String, headers: Map<String, String>): SheetdException {
            val problem = Problem.decodeOrNull(body)
            val retryAfter = headers["retry-after"]?.let { RetryAfter.seconds(it) }
            val message = problem?.detail?.takeIf { it.isNotEmpty() } ?: "HTTP $status: ${body.take(200)}"
            return SheetdException(SheetdException.Kind.SERVER, status, problem, retryAfter, message)
        }

        suspend fun pause(seconds: Double) = delay(Math.max(0.0, seconds * 1000).toLong())
    }
}

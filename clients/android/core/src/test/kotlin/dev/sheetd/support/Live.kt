package dev.sheetd.support

import dev.sheetd.client.RetryPolicy
import dev.sheetd.client.SheetdClient
import dev.sheetd.client.SheetdConfiguration
import dev.sheetd.client.SheetdTokenProvider
import java.io.File
import java.net.HttpURLConnection
import java.net.URL
import java.util.Base64
import java.util.Collections
import java.util.UUID
import javax.crypto.Mac
import javax.crypto.spec.SecretKeySpec

/**
 * The live sheetd `scripts/android-test.sh` started (a free port, a temporary database, the example
 * catalog): its URL and secrets come from the environment. Each test uses users of its own.
 */
object Live {
    val url: String = env("SHEETD_TEST_URL")
    val adminToken: String = env("SHEETD_TEST_ADMIN_TOKEN")
    private val jwtSecret: String = env("SHEETD_TEST_JWT_SECRET")
    val work: File = File(env("SHEETD_TEST_WORK"))

    private fun env(name: String) = System.getenv(name) ?: throw IllegalStateException("$name is not set: run the tests with scripts/android-test.sh")

    fun newUser(prefix: String = "u") = "$prefix-" + UUID.randomUUID().toString().substring(0, 12)

    /** An HS256 user token as sheetd verifies it (`sub`, `iat`, `exp`). */
    fun token(user: String, ttlSeconds: Long = 3600): String {
        val now = System.currentTimeMillis() / 1000
        val encoder = Base64.getUrlEncoder().withoutPadding()
        val header = encoder.encodeToString("""{"alg":"HS256","typ":"JWT"}""".toByteArray())
        val payload = encoder.encodeToString("""{"sub":"$user","iat":$now,"exp":${now + ttlSeconds}}""".toByteArray())
        val mac = Mac.getInstance("HmacSHA256")
        mac.init(SecretKeySpec(jwtSecret.toByteArray(), "HmacSHA256"))
        return "$header.$payload." + encoder.encodeToString(mac.doFinal("$header.$payload".toByteArray()))
    }

    /** Every exchange a client made, for assertions. */
    class ExchangeLog {
        val exchanges: MutableList<SheetdConfiguration.Exchange> = Collections.synchronizedList(ArrayList())
        fun statuses() = synchronized(exchanges) { exchanges.map { it.status } }
    }

    /** A token provider that counts its calls; [tokens] are handed out in order (the last one repeats). */
    class CountingTokens(private vararg val tokens: String) : SheetdTokenProvider {
        @Volatile var asked = 0
        @Volatile var refreshes = 0
        private var index = 0
        override suspend fun token(): String = synchronized(this) { asked++; tokens[Math.min(index, tokens.size - 1)] }
        override suspend fun refreshToken(rejected: String): String = synchronized(this) {
            refreshes++
            index++
            tokens[Math.min(index, tokens.size - 1)]
        }
    }

    /** A client for [user] with fast retries. */
    fun client(
        user: String,
        baseUrl: String = url,
        log: ExchangeLog? = null,
        tokens: SheetdTokenProvider = CountingTokens(token(user)),
        retry: RetryPolicy = RetryPolicy(maxAttempts = 4, baseDelay = 0.02, maxDelay = 0.2, maxRetryAfter = 2.0),
        configure: (SheetdConfiguration) -> SheetdConfiguration = { it }
    ): SheetdClient {
        val configuration = SheetdConfiguration(
            retry = retry, requestTimeout = 10.0, longPollWait = 2, maxReconnectDelay = 0.3,
            onExchange = log?.let { l -> { e: SheetdConfiguration.Exchange -> l.exchanges.add(e); Unit } }
        )
        return SheetdClient(baseUrl, user, tokens, configure(configuration))
    }

    /** An admin request; returns the status and body. */
    fun admin(method: String, path: String, body: String? = null): Pair<Int, String> {
        val connection = URL(url + path).openConnection() as HttpURLConnection
        connection.requestMethod = method
        connection.setRequestProperty("Authorization", "Bearer $adminToken")
        if (body != null) {
            connection.doOutput = true
            connection.setRequestProperty("Content-Type", "application/json")
            connection.outputStream.use { it.write(body.toByteArray()) }
        }
        val status = connection.responseCode
        val text = (if (status >= 400) connection.errorStream else connection.inputStream)?.use { String(it.readBytes()) } ?: ""
        return status to text
    }
}

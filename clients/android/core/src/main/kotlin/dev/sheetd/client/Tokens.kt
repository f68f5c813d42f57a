package dev.sheetd.client

import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock

/**
 * Where the client gets the user's bearer token (an HS256 JWT whose `sub` is the user id). [token] is
 * asked before every request: return a cached one and renew it before its `exp`. After a 401 the
 * client calls [refreshToken] once with the token the server rejected, and retries with the answer.
 */
interface SheetdTokenProvider {
    suspend fun token(): String

    /** A token other than [rejected]; the default asks [token] again. */
    suspend fun refreshToken(rejected: String): String = token()
}

/** One refresh for concurrent 401s: callers rejected with the same token share the refreshed one. */
internal class TokenRefresher(private val provider: SheetdTokenProvider) {
    private val mutex = Mutex()
    private var last: Pair<String, String>? = null // rejected to fresh

    suspend fun fresh(rejected: String): String = mutex.withLock {
        last?.let { (was, fresh) -> if (was == rejected) return@withLock fresh }
        val fresh = provider.refreshToken(rejected)
        last = rejected to fresh
        fresh
    }
}

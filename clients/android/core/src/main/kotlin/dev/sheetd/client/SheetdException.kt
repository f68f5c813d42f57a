package dev.sheetd.client

import java.io.IOException

/**
 * Every failure of the client. [kind] says where it failed; a server answer carries its [status] and
 * the problem+json ([problem]); a transport failure carries the [IOException] (`cause`), e.g.
 * `ConnectException` versus `SocketTimeoutException`.
 */
class SheetdException(
    val kind: Kind,
    val status: Int? = null,
    val problem: Problem? = null,
    /** The server's `Retry-After`, in seconds. */
    val retryAfterSeconds: Double? = null,
    message: String,
    cause: Throwable? = null
) : Exception(message, cause) {
    enum class Kind {
        /** No answer: connection refused, reset, timed out, DNS, TLS. */
        TRANSPORT,
        /** The server answered with an error status. */
        SERVER,
        /** The answer could not be read. */
        INVALID_RESPONSE,
        /** The token provider failed. */
        TOKEN,
        /** The request could not be built (the request adapter threw). */
        INVALID_REQUEST
    }

    /** The fields a 400 names (`invalid-params`). */
    val invalidParams: List<Problem.InvalidParam> get() = problem?.invalidParams ?: emptyList()

    /** The transport failure, when [kind] is [Kind.TRANSPORT]. */
    val ioException: IOException? get() = cause as? IOException

    /** Whether the default retry policy retries this failure. */
    val isRetryable: Boolean get() = RetryPolicy().retries(this)
}

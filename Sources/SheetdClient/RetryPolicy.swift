/// When and how long the client waits before retrying a request.
///
/// Retried: transport failures (connection refused or reset, timeouts), 503 and 429; never another
/// 4xx, never a 500. The delay before retry `n` (1-based) is `baseDelay * 2^(n-1)`, capped at
/// `maxDelay`, with "equal jitter" (a random point in its upper half), so many clients that failed
/// together do not retry together. A `Retry-After` from the server is honoured as the lower bound.
/// Event bodies keep their `eventId` across retries, so a retry of an event the server already applied
/// is answered with the first outcome and applied once.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included (1: never retry).
    public var maxAttempts: Int
    /// Seconds before the first retry.
    public var baseDelay: Double
    /// Seconds the growing delay is capped at (a longer `Retry-After` still wins).
    public var maxDelay: Double

    /// A policy; the default tries 4 times, waiting about 0.2, 0.4 and 0.8 s.
    public init(maxAttempts: Int = 4, baseDelay: Double = 0.2, maxDelay: Double = 5) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
    }

    /// Never retries.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// Seconds to wait before retry `retry` (1-based). `unit` is a random number in 0..<1 (injected, so
    /// the function is pure); `retryAfter` is the server's `Retry-After` in seconds.
    public func delay(beforeRetry retry: Int, retryAfter: Double? = nil, unit: Double) -> Double {
        let exponent = min(max(retry - 1, 0), 30)
        let capped = min(maxDelay, baseDelay * Double(1 << exponent))
        let jittered = capped / 2 + capped / 2 * min(max(unit, 0), 1)
        return max(jittered, retryAfter ?? 0)
    }
}

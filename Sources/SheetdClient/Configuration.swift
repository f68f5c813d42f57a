import Foundation

/// Settings shared by ``SheetdClient`` and ``SheetdAdminClient``.
public struct SheetdConfiguration: Sendable {
    /// How live decisions are followed by ``SheetdClient/decisions(for:)``.
    public enum LiveUpdates: Sendable, Equatable {
        /// The Server-Sent Events stream; long-poll when the server has no stream route (404, 405).
        case automatic
        /// Only long-poll (`Prefer: wait=`), e.g. behind a proxy that buffers streams.
        case longPoll
    }

    /// Retries of single requests (not of the live loop, which reconnects for as long as it is followed).
    public var retry: RetryPolicy
    /// Seconds a single request may take (a long-poll gets its wait on top).
    public var requestTimeout: Double
    /// Seconds a long-poll asks the server to hold the request (`Prefer: wait=N`, 1 to 60).
    public var longPollWait: Int
    /// The longest pause between two reconnection attempts of the live loop, in seconds.
    public var maxReconnectDelay: Double
    /// How live decisions are followed.
    public var liveUpdates: LiveUpdates
    /// Called after every HTTP exchange (logging, metrics, tests). Never sees the token.
    public var onExchange: (@Sendable (Exchange) -> Void)?

    /// The defaults: ``RetryPolicy/init(maxAttempts:baseDelay:maxDelay:)``'s, 30 s requests, 30 s long-polls.
    public init(
        retry: RetryPolicy = RetryPolicy(), requestTimeout: Double = 30, longPollWait: Int = 30, maxReconnectDelay: Double = 10,
        liveUpdates: LiveUpdates = .automatic, onExchange: (@Sendable (Exchange) -> Void)? = nil
    ) {
        self.retry = retry
        self.requestTimeout = requestTimeout
        self.longPollWait = min(max(longPollWait, 1), 60)
        self.maxReconnectDelay = maxReconnectDelay
        self.liveUpdates = liveUpdates
        self.onExchange = onExchange
    }

    /// One HTTP exchange, as reported to ``onExchange``.
    public struct Exchange: Sendable, Equatable {
        /// `GET`, `PUT`, ...
        public var method: String
        /// The path and query.
        public var target: String
        /// 1 for the first try, 2 for the first retry, ...
        public var attempt: Int
        /// The answer's status, nil when none came.
        public var status: Int?
        /// Response headers that matter to clients (`ETag`, `Idempotent-Replayed`, `Retry-After`), lower-cased names.
        public var headers: [String: String]
    }
}

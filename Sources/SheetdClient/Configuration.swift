// URLSession and URLRequest are in FoundationNetworking on Linux, in Foundation on Apple platforms.
#if canImport(FoundationNetworking)
import Foundation
public import FoundationNetworking
#else
public import Foundation
#endif

/// Settings shared by ``SheetdUserClient`` and ``SheetdAdminClient``.
public struct SheetdConfiguration: Sendable {
    /// How live decisions are followed by ``SheetdUserClient/decisions(for:)``.
    public enum LiveUpdates: Sendable, Equatable {
        /// The Server-Sent Events stream; long-poll where streams are refused (a 404, 405, 406 or 501
        /// for the stream route, or a proxy answering it with something other than `text/event-stream`).
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
    /// Adapts every request just before it is sent (after the client set `Authorization`, `Accept`
    /// and its own headers): add your headers, a `User-Agent`, a tracing id. Throwing fails the call
    /// (not retried).
    public var requestAdapter: (@Sendable (URLRequest) async throws -> URLRequest)?
    /// Use the `/v1/me/...` form of the user routes: the user is the token's `sub`, and the user id
    /// travels in no URL (nor proxy or access log). Off by default: it needs a server with those routes
    /// (sheetd from issue 43 on; an older one answers 404).
    public var usesMeRoutes: Bool
    /// Send each stored event's `occurredAt` (when it happened) with it, so a dismissal delivered late
    /// starts its cooldown from when it happened. On by default: a server without `occurredAt` answers
    /// 400 naming it, and the outbox sends the event again without it.
    public var sendsOccurredAt: Bool
    /// The shortest time in seconds between two long-poll answers: a server or proxy answering at
    /// once, again and again, is not asked faster than this (clamped to 0.1 ... 60).
    public var longPollMinimumInterval: Double
    /// The most decisions (one per ``SheetContext``) the client keeps with their ETags, the least
    /// recently used going first; 0 keeps none (every ``SheetdUserClient/decision(for:)`` downloads).
    public var decisionCacheLimit: Int
    /// The app's URLSession for single requests (its delegate, protocol classes, metrics). Nil: an
    /// ephemeral session of ``sessionConfiguration``. The decision stream needs a data delegate of its
    /// own, so it opens its sessions from this session's `configuration`; their authentication
    /// challenges (certificate pinning) go to this session's delegate too.
    public var session: URLSession?
    /// The configuration of the sessions the client makes (proxies, TLS, headers, `waitsForConnectivity`);
    /// nil: `URLSessionConfiguration.ephemeral`. Copied when set and when used: the client never changes
    /// yours, and sets its own copies' request timeout and cache.
    public var sessionConfiguration: URLSessionConfiguration? {
        get { sessionConfigurationBox?.copy() }
        set { sessionConfigurationBox = newValue.map(SessionConfigurationBox.init) }
    }
    private var sessionConfigurationBox: SessionConfigurationBox?

    /// The defaults: ``RetryPolicy/init(maxAttempts:baseDelay:maxDelay:maxRetryAfter:retryableStatuses:retryableURLErrorCodes:)``'s,
    /// 30 s requests, 30 s long-polls, 64 cached decisions, an ephemeral session.
    public init(
        retry: RetryPolicy = RetryPolicy(), requestTimeout: Double = 30, longPollWait: Int = 30, maxReconnectDelay: Double = 10,
        liveUpdates: LiveUpdates = .automatic, decisionCacheLimit: Int = 64, session: URLSession? = nil,
        sessionConfiguration: URLSessionConfiguration? = nil, requestAdapter: (@Sendable (URLRequest) async throws -> URLRequest)? = nil,
        onExchange: (@Sendable (Exchange) -> Void)? = nil, usesMeRoutes: Bool = false, sendsOccurredAt: Bool = true,
        longPollMinimumInterval: Double = 1
    ) {
        self.usesMeRoutes = usesMeRoutes
        self.sendsOccurredAt = sendsOccurredAt
        self.longPollMinimumInterval = min(max(longPollMinimumInterval, 0.1), 60)
        self.retry = retry
        self.requestTimeout = requestTimeout
        self.longPollWait = min(max(longPollWait, 1), 60)
        self.maxReconnectDelay = maxReconnectDelay
        self.liveUpdates = liveUpdates
        self.decisionCacheLimit = max(0, decisionCacheLimit)
        self.session = session
        self.requestAdapter = requestAdapter
        self.onExchange = onExchange
        self.sessionConfiguration = sessionConfiguration
    }

    /// A copy of the configured session configuration (or an ephemeral one) for a session the client
    /// makes: no URL cache (the client revalidates with its own ETags) and a request timeout that
    /// does not cut a request's own (a long-poll's is longer).
    func makeSessionConfiguration(requestTimeout: Double) -> URLSessionConfiguration {
        let configuration = (session?.configuration.copy() as? URLSessionConfiguration) ?? sessionConfiguration ?? .ephemeral
        configuration.timeoutIntervalForRequest = requestTimeout
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        return configuration
    }

    /// Holds the app's configuration, never handed out or changed: only copies leave it.
    private final class SessionConfigurationBox: @unchecked Sendable {
        // @unchecked Sendable: `value` is a private copy, only read (copied) after init.
        private let value: URLSessionConfiguration
        init(_ value: URLSessionConfiguration) { self.value = value.copy() as! URLSessionConfiguration }
        func copy() -> URLSessionConfiguration { value.copy() as! URLSessionConfiguration }
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

public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A typed client of sheetd's user routes, for one user.
///
/// ```swift
/// let client = SheetdUserClient(baseURL: URL(string: "https://sheetd.example.com")!, userId: "user-8431") {
///     try await session.sheetdToken()   // the user's HS256 token, refreshed by your app
/// }
/// try await client.reportCount(2, container: "offers-home")
/// let decision = try await client.decision(for: SheetContext(screen: "home", tab: "accounts"))
/// ```
///
/// - Every call retries transport failures, 408, 429, 500, 502, 503 and 504 (honouring `Retry-After`)
///   with capped exponential backoff and jitter (``RetryPolicy``); no other 4xx is retried. A 401 asks
///   the token provider for a fresh token once. Failures throw ``SheetdError``.
/// - Events get an `eventId` once per call, reused by every retry of that call, so a retry of an
///   event the server already applied is answered with its first outcome and not applied twice.
/// - ``decision(for:)`` keeps the last ETag per ``SheetContext`` (at most
///   ``SheetdConfiguration/decisionCacheLimit`` contexts, least recently used dropped first) and
///   revalidates with `If-None-Match`; a 304 returns the cached decision. ``decisions(for:)`` follows
///   the decision live.
/// - App tests use ``SheetdClientProtocol`` and the `SheetdClientTesting` product's fake instead.
public final class SheetdUserClient: SheetdClientProtocol {
    /// This library's semantic version: the one place it is written. The CHANGELOG's newest heading
    /// and the release's git tag must match it (VersionTests checks the CHANGELOG).
    public static let version = "0.3.0"

    /// The server, e.g. `https://sheetd.example.com` (a path prefix is kept).
    public let baseURL: URL
    /// The user every call is about.
    public let userId: String
    /// The shared settings.
    public var configuration: SheetdConfiguration { core.configuration }

    let core: HTTPCore
    /// The last decision and its ETag, per context, least recently used dropped first.
    let cache: LockedBox<LRUCache<SheetContext, CachedDecision>>

    struct CachedDecision: Sendable {
        var etag: String
        var decision: Decision
    }

    /// A client for `userId`. `token` is asked for the bearer token before every request (return a
    /// cached one; refresh it when it nears its `exp`), and once more after a 401 (see ``ClosureTokenProvider``).
    public convenience init(
        baseURL: URL, userId: String, token: @escaping @Sendable () async throws -> String,
        configuration: SheetdConfiguration = SheetdConfiguration()
    ) {
        self.init(baseURL: baseURL, userId: userId, tokenProvider: ClosureTokenProvider(token), configuration: configuration)
    }

    /// A client for `userId` whose tokens come from `tokenProvider` (asked before every request;
    /// ``SheetdTokenProvider/refreshToken(rejecting:)`` once after a 401).
    public init(
        baseURL: URL, userId: String, tokenProvider: any SheetdTokenProvider, configuration: SheetdConfiguration = SheetdConfiguration()
    ) {
        self.baseURL = baseURL
        self.userId = userId
        self.core = HTTPCore(baseURL: baseURL, tokens: tokenProvider, configuration: configuration)
        self.cache = LockedBox(LRUCache(limit: configuration.decisionCacheLimit))
    }

    /// The user's routes: `/v1/me` (the user taken from the token, so the id is in no URL or proxy
    /// log) with ``SheetdConfiguration/usesMeRoutes``, else `/v1/users/{userId}`.
    var userPath: String { configuration.usesMeRoutes ? "/v1/me" : "/v1/users/\(HTTPCore.segment(userId))" }

    // MARK: - Decision

    /// The decision for `context`. Sends `If-None-Match` with the ETag of the last decision for an equal
    /// context; a 304 returns that cached decision without a body on the wire.
    /// - Throws: ``SheetdError`` (a 400 names the invalid parameter in ``SheetdError/invalidParams``).
    public func decision(for context: SheetContext) async throws -> Decision {
        let cached = cache.withLock { $0.value(for: context) }
        let answer = try await core.send(
            "GET", userPath + "/decision", query: context.queryItems, headers: cached.map { ["If-None-Match": $0.etag] } ?? [:])
        return try remember(answer, for: context, cached: cached)
    }

    /// Stores a 200's decision under its ETag, or returns the cached one for a 304.
    func remember(_ answer: HTTPCore.Answer, for context: SheetContext, cached: CachedDecision?) throws -> Decision {
        if answer.status == 304 {
            guard let cached else { throw SheetdError(kind: .invalidResponse, status: 304, message: "a 304 without a cached decision") }
            return cached.decision
        }
        let decision = try HTTPCore.decode(Decision.self, answer)
        if let etag = answer.header("ETag") { remember(CachedDecision(etag: etag, decision: decision), for: context) }
        return decision
    }

    func remember(_ entry: CachedDecision, for context: SheetContext) {
        cache.withLock { $0.set(entry, for: context) }
    }

    /// The ETag of the cached decision for `context`, if any.
    public func cachedETag(for context: SheetContext) -> String? { cache.withLock { $0.peek(context)?.etag } }

    /// Forgets every cached decision (the next ``decision(for:)`` downloads it again).
    public func clearDecisionCache() { cache.withLock { $0.removeAll() } }

    // MARK: - Events

    /// A new event id: generated once per logical event, reused by its retries.
    public static func makeEventId() -> String { UUID().uuidString.lowercased() }

    /// Reports a container's card count (`PUT .../containers/{containerId}/count`).
    /// - Parameters:
    ///   - seq: optional sequence number; a report at or below the last applied one is not applied.
    ///   - filter: the filter the count was observed under (nil: none).
    ///   - eventId: the event's id; nil generates one (pass your own to make a retry across app launches idempotent).
    @discardableResult
    public func reportCount(
        _ count: Int, container: String, seq: Int? = nil, filter: String? = nil, eventId: String? = nil
    )
        async throws -> EventReceipt<CountOutcome>
    {
        let report = CountReport(count: count, seq: seq, filter: filter, eventId: eventId ?? Self.makeEventId())
        return try await sendEvent("PUT", userPath + "/containers/\(HTTPCore.segment(container))/count", report, eventId: report.eventId!)
    }

    /// Reports that the user dismissed a sheet (`POST .../dismissals`).
    @discardableResult
    public func dismiss(_ sheetId: String, method: DismissalMethod, eventId: String? = nil) async throws -> EventReceipt<DismissalOutcome> {
        let body = Dismissal(sheetId: sheetId, method: method, eventId: eventId ?? Self.makeEventId())
        return try await sendEvent("POST", userPath + "/dismissals", body, eventId: body.eventId!)
    }

    /// Reports that a sheet was opened (`POST .../presentations`): `push` nests it, `replace` is a flow's next step.
    @discardableResult
    public func present(
        _ sheetId: String, mode: OpenMode = .push, parentSheetId: String? = nil, eventId: String? = nil
    )
        async throws -> EventReceipt<PresentationOutcome>
    {
        let body = Presentation(sheetId: sheetId, mode: mode, parentSheetId: parentSheetId, eventId: eventId ?? Self.makeEventId())
        return try await sendEvent("POST", userPath + "/presentations", body, eventId: body.eventId!)
    }

    /// Reports a sheet's measured content height in points (`PUT .../sheets/{sheetId}/content-height`).
    @discardableResult
    public func reportContentHeight(
        _ height: Double, sheetId: String, platform: Platform = .ios, eventId: String? = nil
    )
        async throws -> EventReceipt<ContentHeightOutcome>
    {
        let body = ContentHeight(height: height, platform: platform, eventId: eventId ?? Self.makeEventId())
        return try await sendEvent("PUT", userPath + "/sheets/\(HTTPCore.segment(sheetId))/content-height", body, eventId: body.eventId!)
    }

    /// Reports that the app presented a sheet (`POST .../impressions`): what the frequency cap, the
    /// global cap and the minimum interval count. Call it once the sheet is on screen (a decision is
    /// not an impression). The outcome carries the user's total for the sheet.
    @discardableResult
    public func reportImpression(_ sheetId: String, eventId: String? = nil) async throws -> EventReceipt<ImpressionOutcome> {
        let body = Impression(sheetId: sheetId, eventId: eventId ?? Self.makeEventId())
        return try await sendEvent("POST", userPath + "/impressions", body, eventId: body.eventId!)
    }

    /// Reports that the user converted for the sheet's experiment (`POST /v1/users/{userId}/conversions`):
    /// it counts for the user's arm within the experiment's window after their exposure, else as
    /// unattributed. Retries keep the event id, so a conversion counts once.
    @discardableResult
    public func reportConversion(_ sheetId: String, goal: String? = nil, eventId: String? = nil) async throws -> EventReceipt<ConversionOutcome> {
        let body = Conversion(sheetId: sheetId, goal: goal, eventId: eventId ?? Self.makeEventId())
        return try await sendEvent("POST", userPath + "/conversions", body, eventId: body.eventId!)
    }

    /// Sends a stored event with its `eventId`, and its `occurredAt` when
    /// ``SheetdConfiguration/sendsOccurredAt`` is on (`occurredAt` past the server's window, 24 h,
    /// is left out: see ``SheetdOutbox``).
    public func deliver(_ event: SheetdEvent) async throws -> SheetdDelivery {
        let at = configuration.sendsOccurredAt ? event.occurredAt.map(Self.rfc3339) : nil
        let id = event.eventId
        let answer: HTTPCore.Answer
        switch event.kind {
        case .count(let container, let count, let seq, let filter):
            let body = CountReport(count: count, seq: seq, filter: filter, eventId: id, occurredAt: at)
            answer = try await core.send("PUT", userPath + "/containers/\(HTTPCore.segment(container))/count", body: try HTTPCore.encode(body))
        case .impression(let sheetId):
            answer = try await core.send(
                "POST", userPath + "/impressions", body: try HTTPCore.encode(Impression(sheetId: sheetId, eventId: id, occurredAt: at)))
        case .dismissal(let sheetId, let method):
            let body = Dismissal(sheetId: sheetId, method: method, eventId: id, occurredAt: at)
            answer = try await core.send("POST", userPath + "/dismissals", body: try HTTPCore.encode(body))
        case .presentation(let sheetId, let mode, let parentSheetId):
            let body = Presentation(sheetId: sheetId, mode: mode, parentSheetId: parentSheetId, eventId: id, occurredAt: at)
            answer = try await core.send("POST", userPath + "/presentations", body: try HTTPCore.encode(body))
        case .contentHeight(let sheetId, let height, let platform):
            let body = ContentHeight(height: height, platform: platform, eventId: id, occurredAt: at)
            answer = try await core.send("PUT", userPath + "/sheets/\(HTTPCore.segment(sheetId))/content-height", body: try HTTPCore.encode(body))
        case .conversion(let sheetId, let goal):
            let body = Conversion(sheetId: sheetId, goal: goal, eventId: id, occurredAt: at)
            answer = try await core.send("POST", userPath + "/conversions", body: try HTTPCore.encode(body))
        }
        return SheetdDelivery(replayed: answer.header("Idempotent-Replayed") == "true", attempts: answer.attempts)
    }

    /// `date` as RFC 3339 in UTC with milliseconds (`2026-12-01T09:00:00.250Z`), as `occurredAt` takes it.
    public static func rfc3339(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// Sends one event body (its `eventId` fixed) with retries, and reads the outcome.
    private func sendEvent<Body: Encodable, Outcome: Decodable & Sendable & Equatable>(
        _ method: String, _ path: String, _ body: Body, eventId: String
    ) async throws -> EventReceipt<Outcome> {
        let answer = try await core.send(method, path, body: try HTTPCore.encode(body))
        return EventReceipt(
            outcome: try HTTPCore.decode(Outcome.self, answer), eventId: eventId,
            replayed: answer.header("Idempotent-Replayed") == "true", attempts: answer.attempts)
    }

    // MARK: - State

    /// What is stored about the user (`GET .../state`).
    public func state() async throws -> UserState {
        try HTTPCore.decode(UserState.self, try await core.send("GET", userPath + "/state"))
    }

    /// The user's segments (`GET .../attributes`); the operator sets them (``SheetdAdminClient/setSegments(_:of:)``).
    public func segments() async throws -> [String] {
        try HTTPCore.decode(UserAttributes.self, try await core.send("GET", userPath + "/attributes")).segments
    }

    /// The global campaign settings (`GET /v1/settings`).
    public func settings() async throws -> GlobalSettings {
        try HTTPCore.decode(GlobalSettings.self, try await core.send("GET", "/v1/settings"))
    }

    /// Erases everything stored about the user (`DELETE /v1/users/{userId}`), and the client's cached decisions.
    public func erase() async throws {
        _ = try await core.send("DELETE", userPath)
        clearDecisionCache()
    }
}

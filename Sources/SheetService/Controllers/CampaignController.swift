import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire

/// The routes around the campaign rules: impressions, a user's segments and per-sheet stats.
struct CampaignController: RouteController {
    let authorization: RequestAuthorization
    let recorder: EventRecorder
    let catalog: CatalogKeeper
    let store: any SheetStore
    let databaseErrors: DatabaseErrors

    func register(on router: Router) {
        router.addUserRoute(.POST, "/impressions") { [self] in try reportImpression($0) }
        router.add(.PUT, "/v1/users/{userId}/attributes") { [self] in try putAttributes($0) }
        router.addUserRoute(.GET, "/attributes") { [self] in try getAttributes($0) }
        router.add(.GET, "/v1/sheets/{sheetId}/stats") { [self] in try sheetStats($0) }
        router.add(.GET, "/v1/sheets/{sheetId}/stats/series") { [self] in try sheetStatsSeries($0) }
    }

    /// `POST /v1/users/{userId}/impressions`: the client presented the sheet. One event, as the others.
    func reportImpression(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let impression = try request.decodeBody(ImpressionReport.init)
        let sheetId = impression.sheetId
        let events = catalog.eventCatalog()
        return recorder.record(
            userId: userId, eventId: impression.eventId, occurredAt: impression.occurredAt, kind: .impression,
            emitting: [(sheetId, .impression, nil)]
        ) { state, activity, at in
            let catalog = events.current
            // Checked inside the transaction so a replayed event id answers as it did, whatever the catalog says now.
            guard let sheet = catalog[sheetId] else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            // Kept in time order: a late impression counts where it happened, in the caps' windows.
            state.campaign.recordImpression(
                of: sheetId, at: at, keepSeconds: catalog.longestImpressionPeriod, keepNewest: catalog.impressionsKeptPerSheet)
            // An exposed user's impressions count for their arm (pinned users' rows are left out of the results).
            if let experimentId = sheet.experiment?.id, let exposure = state.experiments.exposures[experimentId] {
                activity.append(SheetActivity(sheetId: sheetId, kind: .experimentImpression, at: at, experimentId: experimentId, arm: exposure.arm))
            }
            return EventOutcome.impression(sheetId: sheetId, impressions: state.campaign.impressionTotals[sheetId] ?? 0).jsonBytes()
        }
    }

    /// `PUT /v1/users/{userId}/attributes`: the operator sets the user's segments (admin token only).
    func putAttributes(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        try authorization.requireAdmin(request, "only the admin token may set a user's segments")
        let segments = try request.decodeBody(UserAttributes.init).segments
        return recorder.record(userId: userId, eventId: nil, kind: .attributes) { state, _ in
            state.campaign.segments = segments
            return EventOutcome.attributes(userId: userId, segments: segments).jsonBytes()
        }
    }

    /// `GET /v1/users/{userId}/attributes`: the user's segments (the user's token or the admin's).
    func getAttributes(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let state = try databaseErrors.guarding { () throws(StoreError) in try store.userState(userId: userId) }
        return .json(200, EventOutcome.attributes(userId: userId, segments: state.campaign.segments).jsonBytes())
    }

    /// `GET /v1/sheets/{sheetId}/stats?since=RFC3339` (admin): from the hour rollups, over the whole
    /// hours from `since` on (`countedFrom`), or everything kept without it.
    func sheetStats(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may read stats")
        let sheetId = try request.pathIdentifier("sheetId")
        var invalid: [(name: String, reason: String)] = []
        var sinceText: String?
        var repeated = false
        for name in request.queryNames() {
            if name == "since" {
                if sinceText != nil { repeated = true }
                sinceText = request.query("since")
            } else if !invalid.contains(where: { $0.name == name }) {
                invalid.append((name, "is not a known parameter (since)"))
            }
        }
        if repeated { invalid.append(("since", "is given more than once")) }
        var since: Timestamp?
        if let sinceText, !repeated {
            since = Timestamp(rfc3339: sinceText, finerFraction: .roundUp)
            if since == nil { invalid.append(("since", "must be an RFC 3339 date-time such as 2026-12-01T00:00:00Z")) }
        }
        if !invalid.isEmpty { throw Problems.invalidParams(invalid) }
        catalog.refresh()
        guard catalog.current[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
        let stats = try databaseErrors.guarding { () throws(StoreError) in try store.sheetStats(sheetId: sheetId, since: since) }
        let answer = SheetStatsAnswer(
            sheetId: sheetId, since: sinceText, impressions: stats.impressions, uniqueUsers: stats.uniqueUsers, dismissals: stats.dismissals,
            latchReleases: stats.latchReleases, openedFrom: stats.openedFrom, countedFrom: stats.countedFrom)
        return .json(200, answer.jsonBytes())
    }

    /// The most buckets one series answers: 1000 hours is about six weeks, 1000 days longer than
    /// the rollups are kept (400 days by default). Enough for a chart, small enough for one request.
    static let maximumSeriesBuckets = 1_000

    /// `GET /v1/sheets/{sheetId}/stats/series?since=&until=&bucket=hour|day` (admin): the stats'
    /// counters per UTC hour or day over the whole hours from `since` to `until` (to the end of the
    /// current hour without it); the buckets add up to the stats over the same hours.
    func sheetStatsSeries(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may read stats")
        let sheetId = try request.pathIdentifier("sheetId")
        var since: (text: String, time: Timestamp)?, until: (text: String, time: Timestamp)?, width = StatsBucketWidth.hour
        try QueryParameters.read(
            request,
            [
                "since": QueryParameters.dateTime { since = $0 },
                "until": QueryParameters.dateTime { until = $0 },
                "bucket": { text in
                    guard let text, let parsed = StatsBucketWidth(rawValue: text) else { return "must be hour or day" }
                    width = parsed
                    return nil
                },
            ])
        guard let since else { throw Problems.invalidParams([("since", "is required: an RFC 3339 date-time such as 2026-12-01T00:00:00Z")]) }
        var invalid: [(name: String, reason: String)] = []
        if since.time < Timestamp(millisecondsSince1970: 0) { invalid.append(("since", "must be at or after 1970-01-01T00:00:00Z")) }
        if let until, until.time <= since.time { invalid.append(("until", "must be after since")) }
        let end = until?.time ?? RollupBucket.start(of: RollupBucket.of(recorder.clock()) + 1)
        let range = RollupRange(since: since.time, until: end, width: width)
        if invalid.isEmpty && range.bucketCount > Self.maximumSeriesBuckets {
            invalid.append(
                (
                    "since",
                    "and until span \(range.bucketCount) \(width.rawValue) buckets, more than \(Self.maximumSeriesBuckets): ask for a shorter range"
                        + (width == .hour ? " or bucket=day" : "")
                ))
        }
        if !invalid.isEmpty { throw Problems.invalidParams(invalid) }
        catalog.refresh()
        guard catalog.current[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
        let buckets = try databaseErrors.guarding { () throws(StoreError) in try store.sheetStatsSeries(sheetId: sheetId, range: range) }
        let answer = SheetStatsSeriesAnswer(
            sheetId: sheetId, bucket: width.rawValue, since: since.text, until: until?.text, countedFrom: range.countedFrom,
            countedUntil: range.countedUntil,
            buckets: buckets.map {
                SheetStatsSeriesAnswer.Bucket(
                    start: $0.start, impressions: $0.stats.impressions, uniqueUsers: $0.stats.uniqueUsers, dismissals: $0.stats.dismissals,
                    latchReleases: $0.stats.latchReleases, openedFrom: $0.stats.openedFrom)
            })
        return .json(200, answer.jsonBytes())
    }
}

import JSONKit
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// Issue 15's routes around the campaign rules: impressions, a user's segments, the global
/// settings and per-sheet stats.
extension SheetService {
    /// `POST /v1/users/{userId}/impressions`: the client presented the sheet. One event, as the others.
    func reportImpression(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        let impression = try ImpressionReport(try jsonBody(request))
        let sheetId = impression.sheetId
        let events = eventCatalog(), clock = self.clock
        return record(userId: userId, eventId: impression.eventId, kind: .impression, emitting: [(sheetId, .impression, nil)]) {
            state, activity in
            let catalog = events.current
            // Checked inside the transaction so a replayed event id answers as it did, whatever the catalog says now.
            guard let sheet = catalog[sheetId] else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            let now = clock()
            state.campaign.recordImpression(
                of: sheetId, at: now, keepSeconds: catalog.longestImpressionPeriod, keepNewest: catalog.impressionsKeptPerSheet)
            // An exposed user's impressions count for their arm (pinned users' rows are left out of the results).
            if let experimentId = sheet.experiment?.id, let exposure = state.experiments.exposures[experimentId] {
                activity.append(SheetActivity(sheetId: sheetId, kind: .experimentImpression, at: now, experimentId: experimentId, arm: exposure.arm))
            }
            var w = JSONWriter()
            w.object { o in
                o.member("sheetId", sheetId)
                o.member("impressions", state.campaign.impressionTotals[sheetId] ?? 0)
            }
            return w.bytes
        }
    }

    /// `PUT /v1/users/{userId}/attributes`: the operator sets the user's segments (admin token only).
    func putAttributes(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        try requireAdmin(request, "only the admin token may set a user's segments")
        let segments = try UserAttributes(try jsonBody(request)).segments
        return record(userId: userId, eventId: nil, kind: .attributes) { state in
            state.campaign.segments = segments
            return Self.attributesJSON(userId: userId, segments: segments)
        }
    }

    /// `GET /v1/users/{userId}/attributes`: the user's segments (the user's token or the admin's).
    func getAttributes(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorizeUser(request)
        let state = try storage { () throws(StoreError) in try store.userState(userId: userId) }
        return .json(200, Self.attributesJSON(userId: userId, segments: state.campaign.segments))
    }

    static func attributesJSON(userId: String, segments: [String]) -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.member("userId", userId)
            o.arrayMember("segments") { items in for segment in segments { items.element(segment) } }
        }
        return w.bytes
    }

    /// The campaign members of the state view: impressions per sheet (the total kept for good and the
    /// times kept for the rules), the latest dismissal per sheet, and the segments.
    static func writeCampaignFacts(_ campaign: CampaignState, to o: inout JSONWriter) {
        func byId(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }
        let sheets = Set(campaign.impressionTotals.keys).union(campaign.impressions.keys).sorted(by: byId)
        o.arrayMember("impressions") { items in
            for sheetId in sheets {
                items.object { i in
                    i.member("sheetId", sheetId)
                    i.member("total", campaign.impressionTotals[sheetId] ?? 0)
                    i.arrayMember("recent") { times in
                        for time in campaign.impressions[sheetId] ?? [] { times.element(time.rfc3339) }
                    }
                }
            }
        }
        o.arrayMember("lastDismissals") { items in
            for sheetId in campaign.lastDismissals.keys.sorted(by: byId) {
                items.object { d in
                    d.member("sheetId", sheetId)
                    d.member("at", campaign.lastDismissals[sheetId]!.rfc3339)
                }
            }
        }
        o.arrayMember("segments") { items in for segment in campaign.segments { items.element(segment) } }
    }

    /// `GET /v1/settings`: any valid token.
    func getSettings(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authenticate(request)
        _ = catalog  // on a shared database: another replica's changes first
        let (current, version) = catalogSnapshot.currentWithVersion
        return .json(200, Self.settingsJSON(current.settings), headers: [("ETag", catalogTag.tag(of: current, version: version))])
    }

    /// `PUT /v1/settings`: admin only. Stored, then put into the catalog snapshot (bumping its version,
    /// so cached decisions and streams see it as they see a catalog edit).
    func putSettings(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only the admin token may change the settings")
        let settings = try SettingsBody(try jsonBody(request)).settings
        let author = try revisionAuthor(request)
        _ = catalog  // on a shared database: another replica's changes first (it takes `catalogWrites` itself)
        let tag = try catalogWrites.withLock { _ throws(Problem) -> String in
            try checkIfMatch(request)
            let before = currentCatalogTag
            try storage { () throws(StoreError) in try store.putSettings(settings) }
            catalogSnapshot.withLock { $0.settings = settings }
            recordRevision(after: before, by: author)
            return currentCatalogTag
        }
        feed.catalogChanged()
        var response = HTTPResponse.json(200, Self.settingsJSON(settings), headers: [("ETag", tag)])
        response.actor = author.actor
        return response
    }

    static func settingsJSON(_ settings: CampaignSettings) -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            if let cap = settings.globalCap {
                o.objectMember("globalCap") { c in
                    c.member("max", cap.max)
                    c.member("periodSeconds", cap.periodSeconds)
                }
            } else {
                o.member("globalCap") { $0.null() }
            }
            o.member("minIntervalSeconds", settings.minIntervalSeconds)
        }
        return w.bytes
    }

    /// `GET /v1/sheets/{sheetId}/stats?since=RFC3339` (admin): from the hour rollups, over the whole
    /// hours from `since` on (`countedFrom`), or everything kept without it.
    func sheetStats(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only the admin token may read stats")
        let sheetId = try pathIdentifier(request, "sheetId")
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
        guard catalog[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
        let stats = try storage { () throws(StoreError) in try store.sheetStats(sheetId: sheetId, since: since) }
        var w = JSONWriter()
        w.object { o in
            o.member("sheetId", sheetId)
            o.member("since", sinceText)
            o.member("impressions", stats.impressions)
            o.member("uniqueUsers", stats.uniqueUsers)
            o.objectMember("dismissals") { d in
                for method in DismissMethod.allCases { d.member(method.rawValue, stats.dismissals[method.rawValue] ?? 0) }
            }
            o.member("latchReleases", stats.latchReleases)
            o.member("openedFrom", stats.openedFrom)
            // Rollups count whole UTC hours: the first hour boundary at or after `since`.
            o.member("countedFrom", stats.countedFrom?.rfc3339)
        }
        return .json(200, w.bytes)
    }
}

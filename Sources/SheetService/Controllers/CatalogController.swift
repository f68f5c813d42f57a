import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire
import Synchronization

/// The sheet catalog and the campaign settings: admin writes, any valid token reads. Every write
/// honours `If-Match`, is recorded as a revision and wakes the streams and long-polls.
struct CatalogController: RouteController {
    /// Sheets per page of `GET /v1/sheets` when `limit` is not given, and the most a page may ask for.
    static let defaultSheetPage = 100
    static let maximumSheetPage = 500

    let authorization: RequestAuthorization
    let catalog: CatalogKeeper
    /// How large the catalog may grow; catalog writes beyond are refused with 409.
    let limits: CatalogLimits
    let feed: ChangeFeed

    func register(on router: Router) {
        router.add(.GET, "/v1/sheets") { [self] in try listSheets($0) }
        router.add(.GET, "/v1/sheets/{sheetId}") { [self] in try getSheet($0) }
        router.add(.PUT, "/v1/sheets/{sheetId}") { [self] in try putSheet($0) }
        router.add(.DELETE, "/v1/sheets/{sheetId}") { [self] in try deleteSheet($0) }
        router.add(.GET, "/v1/settings") { [self] in try getSettings($0) }
        router.add(.PUT, "/v1/settings") { [self] in try putSettings($0) }
    }

    /// `GET /v1/sheets?limit=N&after=ID`: one page of the catalog, ordered by id, with `next` (the
    /// `after` of the next page, null on the last). Pages keep every answer small whatever the catalog.
    func listSheets(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authorization.authenticate(request)
        var limit = Self.defaultSheetPage
        var after: String?
        try QueryParameters.read(
            request,
            [
                "limit": QueryParameters.wholeNumber(1...Self.maximumSheetPage) { limit = $0 },
                "after": QueryParameters.identifier { after = $0 },
            ])
        _ = catalog.current  // on a shared database: another replica's changes first
        let (current, version) = catalog.snapshot.currentWithVersion
        let sheets = current.sortedByID
        // Ids are sorted in byte order: the page starts at the first id above `after` (binary search).
        var start = 0
        if let after {
            var high = sheets.count
            while start < high {
                let middle = (start + high) / 2
                if after.utf8.lexicographicallyPrecedes(sheets[middle].id.utf8) { high = middle } else { start = middle + 1 }
            }
        }
        let end = min(sheets.count, start + limit)
        let page = SheetPage(sheets: Array(sheets[start..<end]), next: end < sheets.count && end > start ? sheets[end - 1].id : nil)
        // The whole catalog's tag on every page: what `If-Match` on a catalog write compares with.
        return .json(200, page.jsonBytes(), headers: [("ETag", catalog.tags.tag(of: current, version: version))])
    }

    func getSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authorization.authenticate(request)
        let id = try request.pathIdentifier("sheetId")
        guard let sheet = catalog.current[id] else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
        return .json(200, sheet.responseJSON)
    }

    func putSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may change the catalog")
        let id = try request.pathIdentifier("sheetId")
        let definition = try SheetDefinition.parse(try request.jsonObject(), pathId: id).checkedAgainstDesignRules()
        let json = definition.canonicalJSON
        let author = try authorization.revisionAuthor(request)
        let ifMatch = request.header("If-Match")
        return catalog.deferredWrite { [self] () throws(Problem) -> HTTPResponse in try putSheet(id, definition, json, author, ifMatch: ifMatch) }
    }

    /// On the catalog's write thread.
    private func putSheet(
        _ id: String, _ definition: SheetDefinition, _ json: [UInt8], _ author: RevisionAuthor, ifMatch: String?
    ) throws(Problem)
        -> HTTPResponse
    {
        _ = catalog.current  // on a shared database: another replica's changes first (it takes `writes` itself)
        let (created, tag) = try catalog.writes.withLock { _ throws(Problem) -> (Bool, String) in
            try catalog.checkIfMatch(ifMatch)
            let current = catalog.snapshot.current
            if let violation = limits.violation(upserting: [definition], into: current) { throw violation.problem }
            try Self.checkExperimentChange(definition, in: current)
            let created = try catalog.databaseErrors.guarding { () throws(StoreError) in
                try catalog.store.putSheet(
                    StoredSheet(id: id, json: String(decoding: json, as: UTF8.self)), record: catalog.writeRecord(by: author, sheets: [definition]))
            }
            catalog.snapshot.withLock { $0.upsert(definition) }
            return (created, catalog.currentTag)
        }
        feed.catalogChanged()
        // `ETag` is the catalog's new tag, for the next conditional write.
        let headers = [("ETag", tag)] + (created ? [("Location", "/v1/sheets/\(id)")] : [])
        var response = HTTPResponse.json(created ? 201 : 200, definition.responseJSON, headers: headers)
        response.actor = author.actor
        return response
    }

    func deleteSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may change the catalog")
        let id = try request.pathIdentifier("sheetId")
        let author = try authorization.revisionAuthor(request)
        let ifMatch = request.header("If-Match")
        return catalog.deferredWrite { [self] () throws(Problem) -> HTTPResponse in try deleteSheet(id, author, ifMatch: ifMatch) }
    }

    /// On the catalog's write thread.
    private func deleteSheet(_ id: String, _ author: RevisionAuthor, ifMatch: String?) throws(Problem) -> HTTPResponse {
        _ = catalog.current  // on a shared database: another replica's changes first (it takes `writes` itself)
        let (existed, tag) = try catalog.writes.withLock { _ throws(Problem) -> (Bool, String) in
            try catalog.checkIfMatch(ifMatch)
            let existed = try catalog.databaseErrors.guarding { () throws(StoreError) in
                try catalog.store.deleteSheet(id: id, record: catalog.writeRecord(by: author, sheets: []))
            }
            catalog.snapshot.withLock { $0.remove(id: id) }
            return (existed, catalog.currentTag)
        }
        if existed { feed.catalogChanged() }
        guard existed else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
        var response = HTTPResponse.empty(204, headers: [("ETag", tag)])
        response.actor = author.actor
        return response
    }

    /// `GET /v1/settings`: any valid token.
    func getSettings(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authorization.authenticate(request)
        _ = catalog.current  // on a shared database: another replica's changes first
        let (current, version) = catalog.snapshot.currentWithVersion
        return .json(200, current.settings.jsonBytes(), headers: [("ETag", catalog.tags.tag(of: current, version: version))])
    }

    /// `PUT /v1/settings`: admin only. Stored, then put into the catalog snapshot (bumping its version,
    /// so cached decisions and streams see it as they see a catalog edit).
    func putSettings(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may change the settings")
        let settings = try request.decodeBody(SettingsBody.init).settings
        let author = try authorization.revisionAuthor(request)
        let ifMatch = request.header("If-Match")
        return catalog.deferredWrite { [self] () throws(Problem) -> HTTPResponse in try putSettings(settings, author, ifMatch: ifMatch) }
    }

    /// On the catalog's write thread.
    private func putSettings(_ settings: CampaignSettings, _ author: RevisionAuthor, ifMatch: String?) throws(Problem) -> HTTPResponse {
        _ = catalog.current  // on a shared database: another replica's changes first (it takes `writes` itself)
        let tag = try catalog.writes.withLock { _ throws(Problem) -> String in
            try catalog.checkIfMatch(ifMatch)
            try catalog.databaseErrors.guarding { () throws(StoreError) in
                try catalog.store.putSettings(settings, record: catalog.writeRecord(by: author, sheets: []))
            }
            catalog.snapshot.withLock { $0.settings = settings }
            return catalog.currentTag
        }
        feed.catalogChanged()
        var response = HTTPResponse.json(200, settings.jsonBytes(), headers: [("ETag", tag)])
        response.actor = author.actor
        return response
    }

    /// A catalog write that would reassign a running experiment's users (409), or an experiment id
    /// another sheet already has (400).
    static func checkExperimentChange(_ definition: SheetDefinition, in catalog: Catalog) throws(Problem) {
        guard let new = definition.experiment else { return }
        if let old = catalog[definition.id]?.experiment, old.id == new.id, old.status == .running, !old.assignsAlike(new) {
            throw ProblemType.experimentRunning.problem(
                "experiment '\(old.id)' is running: its arms and weights cannot change, since that would reassign users already exposed; "
                    + "stop it (status stopped, optionally with a winner) or start a new experiment id")
        }
        if let (other, _) = catalog.experiment(id: new.id), other.id != definition.id {
            throw Problems.invalidParams([("experiment.id", "is already the experiment of sheet '\(other.id)'")])
        }
    }
}

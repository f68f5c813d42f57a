import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire
import Synchronization

/// The sheet catalog and the campaign settings: admin writes, any valid token reads. Every write is
/// one `CatalogKeeper.change` (which honours `If-Match`, checks the limits, records a revision and
/// wakes the streams and long-polls).
struct CatalogController: RouteController {
    /// Sheets per page of `GET /v1/sheets` when `limit` is not given, and the most a page may ask for.
    static let defaultSheetPage = 100
    static let maximumSheetPage = 500

    let authorization: RequestAuthorization
    let catalog: CatalogKeeper

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
        catalog.refresh()  // on a shared database: another replica's changes first
        let (current, tag) = catalog.currentWithTag
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
        return .json(200, page.jsonBytes(), headers: [("ETag", tag)])
    }

    func getSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authorization.authenticate(request)
        let id = try request.pathIdentifier("sheetId")
        catalog.refresh()
        guard let sheet = catalog.current[id] else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
        return .json(200, sheet.responseJSON)
    }

    func putSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may change the catalog")
        let id = try request.pathIdentifier("sheetId")
        let definition = try SheetDefinition.parse(try request.jsonObject(), pathId: id).checkedAgainstDesignRules()
        let author = try authorization.revisionAuthor(request)
        let ifMatch = request.header("If-Match")
        return catalog.deferredWrite { [catalog] () throws(Problem) -> HTTPResponse in
            let made = try catalog.change(ifMatch: ifMatch, author: author) { _ in .putSheet(definition) }
            // `ETag` is the catalog's new tag, for the next conditional write.
            let headers = [("ETag", made.tag)] + (made.created ? [("Location", "/v1/sheets/\(id)")] : [])
            var response = HTTPResponse.json(made.created ? 201 : 200, definition.responseJSON, headers: headers)
            response.actor = author.actor
            return response
        }
    }

    func deleteSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may change the catalog")
        let id = try request.pathIdentifier("sheetId")
        let author = try authorization.revisionAuthor(request)
        let ifMatch = request.header("If-Match")
        return catalog.deferredWrite { [catalog] () throws(Problem) -> HTTPResponse in
            let made = try catalog.change(ifMatch: ifMatch, author: author) { _ in .deleteSheet(id: id) }
            guard made.changed else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
            var response = HTTPResponse.empty(204, headers: [("ETag", made.tag)])
            response.actor = author.actor
            return response
        }
    }

    /// `GET /v1/settings`: any valid token.
    func getSettings(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authorization.authenticate(request)
        catalog.refresh()  // on a shared database: another replica's changes first
        let (current, tag) = catalog.currentWithTag
        return .json(200, current.settings.jsonBytes(), headers: [("ETag", tag)])
    }

    /// `PUT /v1/settings`: admin only. Stored, then put into the catalog snapshot (bumping its version,
    /// so cached decisions and streams see it as they see a catalog edit).
    func putSettings(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only the admin token may change the settings")
        let settings = try request.decodeBody(SettingsBody.init).settings
        let author = try authorization.revisionAuthor(request)
        let ifMatch = request.header("If-Match")
        return catalog.deferredWrite { [catalog] () throws(Problem) -> HTTPResponse in
            let made = try catalog.change(ifMatch: ifMatch, author: author) { _ in .putSettings(settings) }
            var response = HTTPResponse.json(200, settings.jsonBytes(), headers: [("ETag", made.tag)])
            response.actor = author.actor
            return response
        }
    }
}

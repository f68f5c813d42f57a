import JSONKit
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// The sheet catalog: admin writes, any valid token reads.
extension SheetService {
    /// `GET /v1/sheets?limit=N&after=ID`: one page of the catalog, ordered by id, with `next` (the
    /// `after` of the next page, null on the last). Pages keep every answer small whatever the catalog.
    func listSheets(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authenticate(request)
        var invalid: [(name: String, reason: String)] = []
        var limit = Self.defaultSheetPage
        var after: String?
        for name in request.queryNames() {
            switch name {
            case "limit":
                guard let text = request.query("limit"), let n = Int(text), (1...Self.maximumSheetPage).contains(n) else {
                    invalid.append(("limit", "must be a whole number from 1 to \(Self.maximumSheetPage)"))
                    continue
                }
                limit = n
            case "after":
                guard let id = request.query("after"), Identifier.isValid(id) else {
                    invalid.append(("after", Identifier.rule))
                    continue
                }
                after = id
            default:
                if !invalid.contains(where: { $0.name == name }) { invalid.append((name, "is not a known parameter (limit, after)")) }
            }
        }
        if !invalid.isEmpty { throw Problems.invalidParams(invalid) }
        _ = catalog  // on a shared database: another replica's changes first
        let (current, version) = catalogSnapshot.currentWithVersion
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
        var w = JSONWriter()
        w.object { o in
            o.arrayMember("sheets") { items in for sheet in sheets[start..<end] { sheet.write(to: &items, withWarnings: true) } }
            o.member("next", end < sheets.count && end > start ? sheets[end - 1].id : nil)
        }
        // The whole catalog's tag on every page: what `If-Match` on a catalog write compares with.
        return .json(200, w.bytes, headers: [("ETag", catalogTag.tag(of: current, version: version))])
    }

    /// Sheets per page of `GET /v1/sheets` when `limit` is not given, and the most a page may ask for.
    static let defaultSheetPage = 100
    static let maximumSheetPage = 500

    func getSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authenticate(request)
        let id = try pathIdentifier(request, "sheetId")
        guard let sheet = catalog[id] else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
        return .json(200, sheet.responseJSON)
    }

    func putSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only the admin token may change the catalog")
        let id = try pathIdentifier(request, "sheetId")
        let definition = try SheetDefinition.parse(try jsonBody(request), pathId: id).checkedAgainstDesignRules()
        let json = definition.canonicalJSON
        let author = try revisionAuthor(request)
        _ = catalog  // on a shared database: another replica's changes first (it takes `catalogWrites` itself)
        let (created, tag) = try catalogWrites.withLock { _ throws(Problem) -> (Bool, String) in
            try checkIfMatch(request)
            if let violation = catalogLimits.violation(upserting: [definition], into: catalogSnapshot.current) { throw violation.problem }
            let before = currentCatalogTag
            try checkExperimentChange(definition, in: catalogSnapshot.current)
            let created = try storage { () throws(StoreError) in
                try store.putSheet(StoredSheet(id: id, json: String(decoding: json, as: UTF8.self)))
            }
            catalogSnapshot.withLock { $0.upsert(definition) }
            recordRevision(after: before, by: author)
            return (created, currentCatalogTag)
        }
        feed.catalogChanged()
        // `ETag` is the catalog's new tag, for the next conditional write.
        let headers = [("ETag", tag)] + (created ? [("Location", "/v1/sheets/\(id)")] : [])
        var response = HTTPResponse.json(created ? 201 : 200, definition.responseJSON, headers: headers)
        response.actor = author.actor
        return response
    }

    func deleteSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only the admin token may change the catalog")
        let id = try pathIdentifier(request, "sheetId")
        let author = try revisionAuthor(request)
        _ = catalog  // on a shared database: another replica's changes first (it takes `catalogWrites` itself)
        let (existed, tag) = try catalogWrites.withLock { _ throws(Problem) -> (Bool, String) in
            try checkIfMatch(request)
            let before = currentCatalogTag
            let existed = try storage { () throws(StoreError) in try store.deleteSheet(id: id) }
            catalogSnapshot.withLock { $0.remove(id: id) }
            recordRevision(after: before, by: author)
            return (existed, currentCatalogTag)
        }
        if existed { feed.catalogChanged() }
        guard existed else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
        var response = HTTPResponse.empty(204, headers: [("ETag", tag)])
        response.actor = author.actor
        return response
    }
}

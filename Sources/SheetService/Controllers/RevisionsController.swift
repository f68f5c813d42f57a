import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire
import Synchronization

/// Catalog history: every catalog and settings change is a revision (`GET /v1/catalog/revisions`),
/// any of which can be restored (`POST /v1/catalog/revisions/{revision}/restore`). Admin only.
struct RevisionsController: RouteController {
    /// Revisions per page of `GET /v1/catalog/revisions` when `limit` is not given, and the most a page may ask for.
    static let defaultRevisionPage = 50
    static let maximumRevisionPage = 500

    let authorization: RequestAuthorization
    /// A restore is one `CatalogKeeper.change`.
    let catalog: CatalogKeeper
    /// The history is read here; only the keeper writes it.
    let store: any CatalogStore
    let databaseErrors: DatabaseErrors

    func register(on router: Router) {
        router.add(.GET, "/v1/catalog/revisions") { [self] in try listRevisions($0) }
        router.add(.GET, "/v1/catalog/revisions/{revision}") { [self] in try getRevision($0) }
        router.add(.POST, "/v1/catalog/revisions/{revision}/restore") { [self] in try restoreRevision($0) }
    }

    /// `GET /v1/catalog/revisions?limit=N&after=REVISION`: newest first; `next` is the `after` of the
    /// next (older) page, null on the last.
    func listRevisions(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only an admin token may read the catalog's history")
        var limit = Self.defaultRevisionPage
        var after: Int64?
        try QueryParameters.read(
            request,
            [
                "limit": QueryParameters.wholeNumber(1...Self.maximumRevisionPage) { limit = $0 },
                "after": { text in
                    guard let text, let n = Int64(text), n >= 1 else { return "must be a revision number" }
                    after = n
                    return nil
                },
            ])
        // One more than asked: whether there is a next page.
        let revisions = try databaseErrors.guarding { () throws(StoreError) in
            try store.catalogRevisions(before: after, limit: limit + 1)
        }
        let page = revisions.prefix(limit)
        let answer = RevisionPage(revisions: page.map(Self.summary), next: revisions.count > limit ? page.last?.number : nil)
        var response = HTTPResponse.json(200, answer.jsonBytes())
        response.actor = authorization.adminName(request)
        return response
    }

    /// `GET /v1/catalog/revisions/{revision}`: the whole catalog as it was, and what changed from the
    /// revision before it (when that one is still kept).
    func getRevision(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only an admin token may read the catalog's history")
        let number = try Self.revisionNumber(request)
        let store = self.store
        let (revision, previous) = try databaseErrors.guarding { () throws(StoreError) -> (CatalogRevision?, CatalogRevision?) in
            guard let revision = try store.catalogRevision(number) else { return (nil, nil) }
            let before = try store.catalogRevisions(before: number, limit: 1).first
            return (revision, try before.flatMap { b throws(StoreError) in try store.catalogRevision(b.number) })
        }
        guard let revision else { throw Problems.notFound("no catalog revision \(number) is kept") }
        var response = HTTPResponse.json(200, Self.detail(revision, previous: previous).jsonBytes())
        response.actor = authorization.adminName(request)
        return response
    }

    /// `POST /v1/catalog/revisions/{revision}/restore`: a new revision equal to that one (itself
    /// restorable). Honours `If-Match` like every catalog write.
    func restoreRevision(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try authorization.requireAdmin(request, "only an admin token may change the catalog")
        let number = try Self.revisionNumber(request)
        let author = try authorization.revisionAuthor(request)
        let ifMatch = request.header("If-Match")
        return catalog.deferredWrite { [self] () throws(Problem) -> HTTPResponse in
            let made = try catalog.change(ifMatch: ifMatch, author: author) { _ throws(Problem) in
                guard let old = try databaseErrors.guarding({ () throws(StoreError) in try store.catalogRevision(number) }) else {
                    throw Problems.notFound("no catalog revision \(number) is kept")
                }
                // What the store would hand back must load (and fit today's limits: the keeper checks).
                do {
                    var loaded = Catalog()
                    for sheet in old.sheets {
                        loaded.upsert(try SheetDefinition.stored(sheet.json, id: sheet.id, subject: "the sheet '\(sheet.id)' of revision \(number)"))
                    }
                    loaded.settings = old.settings
                    return .restore(revision: number, catalog: loaded)
                } catch {
                    throw Problems.internalError("revision \(number) does not load: \(error)")
                }
            }
            guard let revision = made.revision else { throw Problems.notFound("no catalog revision \(number) is kept") }
            var response = HTTPResponse.json(
                201, Self.summary(revision).jsonBytes(), headers: [("ETag", made.tag), ("Location", "/v1/catalog/revisions/\(revision.number)")])
            response.actor = author.actor
            return response
        }
    }

    private static func revisionNumber(_ request: HTTPRequest) throws(Problem) -> Int64 {
        guard let text = request.pathParameter("revision"), let n = Int64(text), n >= 1 else {
            throw Problems.invalidParams([("revision", "must be a revision number")])
        }
        return n
    }

    private static func summary(_ r: CatalogRevision) -> RevisionSummary {
        RevisionSummary(
            revision: r.number, createdAt: r.createdAt, actor: r.actor, comment: r.comment, restoredFrom: r.restoredFrom, sheetCount: r.sheetCount)
    }

    /// Sheets added, removed, and changed (with the top-level members whose values differ), and
    /// whether the settings changed. Without a previous revision everything counts as added.
    private static func detail(_ revision: CatalogRevision, previous: CatalogRevision?) -> RevisionDetail {
        let old = Dictionary(uniqueKeysWithValues: (previous?.sheets ?? []).map { ($0.id, $0.json) })
        let new = Dictionary(uniqueKeysWithValues: revision.sheets.map { ($0.id, $0.json) })
        var changed: [RevisionDetail.ChangedSheet] = []
        for s in revision.sheets {
            guard let before = old[s.id], before != s.json else { continue }
            changed.append(RevisionDetail.ChangedSheet(id: s.id, members: changedMembers(before, s.json)))
        }
        return RevisionDetail(
            summary: summary(revision), sheetsJSON: revision.sheets.map { Array($0.json.utf8) }, settings: revision.settings,
            previousRevision: previous?.number, added: revision.sheets.filter { old[$0.id] == nil }.map(\.id),
            removed: (previous?.sheets ?? []).filter { new[$0.id] == nil }.map(\.id), changed: changed,
            settingsChanged: previous.map { $0.settings != revision.settings } ?? false)
    }

    /// The top-level members whose values differ between two definitions' JSON, sorted.
    private static func changedMembers(_ a: String, _ b: String) -> [String] {
        guard let x = try? StoredDocument.object(a, subject: "a"), let y = try? StoredDocument.object(b, subject: "b") else { return [] }
        return Set(x.keys).union(y.keys).filter { x[$0] != y[$0] }.sorted()
    }
}

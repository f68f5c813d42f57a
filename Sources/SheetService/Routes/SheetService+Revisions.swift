import JSONKit
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// Catalog history: every catalog and settings change is a revision (`GET /v1/catalog/revisions`),
/// any of which can be restored (`POST /v1/catalog/revisions/{revision}/restore`). Admin only.
extension SheetService {
    /// Revisions per page of `GET /v1/catalog/revisions` when `limit` is not given, and the most a page may ask for.
    static let defaultRevisionPage = 50
    static let maximumRevisionPage = 500
    /// The longest `Sheetd-Comment` kept with a revision.
    static let maximumCommentLength = 1000

    /// Who makes a change and why: the admin token's name (never the token) and `Sheetd-Comment`.
    func revisionAuthor(_ request: HTTPRequest) throws(Problem) -> RevisionAuthor {
        let actor = tokens.adminName(authorization: request.header("Authorization")) ?? "admin"
        guard let raw = request.header("Sheetd-Comment") else { return RevisionAuthor(actor: actor) }
        let comment = raw.trimmed()
        guard comment.count <= Self.maximumCommentLength else {
            throw Problems.invalidParams([("Sheetd-Comment", "is at most \(Self.maximumCommentLength) characters")])
        }
        return RevisionAuthor(actor: actor, comment: comment.isEmpty ? nil : comment)
    }

    /// Under `catalogWrites`, after a write changed the catalog tag from `before`: appends the revision.
    /// The write has committed already; a revision that cannot be stored is logged, never a failed write.
    func recordRevision(after before: String, by author: RevisionAuthor) {
        guard currentCatalogTag != before else { return }
        do {
            _ = try store.appendCatalogRevision(author: author, keep: catalogRevisionsKept)
        } catch {
            Log.write(.warn, "catalog revision not recorded", [("actor", .string(author.actor)), ("error", .string("\(error)"))])
        }
    }

    /// At start: a first revision holding the catalog as found, so that the first change can be undone.
    func recordFirstRevisionIfNone() {
        do {
            guard try store.catalogRevisions(before: nil, limit: 1).isEmpty else { return }
            _ = try store.appendCatalogRevision(
                author: RevisionAuthor(actor: "sheetd", comment: "the catalog when revisions began"), keep: catalogRevisionsKept)
        } catch {
            Log.write(.warn, "catalog revision not recorded", [("error", .string("\(error)"))])
        }
    }

    /// `GET /v1/catalog/revisions?limit=N&after=REVISION`: newest first; `next` is the `after` of the
    /// next (older) page, null on the last.
    func listRevisions(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only an admin token may read the catalog's history")
        var invalid: [(name: String, reason: String)] = []
        var limit = Self.defaultRevisionPage
        var after: Int64?
        for name in request.queryNames() {
            switch name {
            case "limit":
                guard let text = request.query("limit"), let n = Int(text), (1...Self.maximumRevisionPage).contains(n) else {
                    invalid.append(("limit", "must be a whole number from 1 to \(Self.maximumRevisionPage)"))
                    continue
                }
                limit = n
            case "after":
                guard let text = request.query("after"), let n = Int64(text), n >= 1 else {
                    invalid.append(("after", "must be a revision number"))
                    continue
                }
                after = n
            default:
                if !invalid.contains(where: { $0.name == name }) { invalid.append((name, "is not a known parameter (limit, after)")) }
            }
        }
        if !invalid.isEmpty { throw Problems.invalidParams(invalid) }
        // One more than asked: whether there is a next page.
        let revisions = try storage { () throws(StoreError) in try store.catalogRevisions(before: after, limit: limit + 1) }
        let page = revisions.prefix(limit)
        var w = JSONWriter()
        w.object { o in
            o.arrayMember("revisions") { items in for revision in page { Self.writeSummary(revision, to: &items) } }
            o.member("next", revisions.count > limit ? page.last.map { Int($0.number) } : nil)
        }
        var response = HTTPResponse.json(200, w.bytes)
        response.actor = tokens.adminName(authorization: request.header("Authorization"))
        return response
    }

    /// `GET /v1/catalog/revisions/{revision}`: the whole catalog as it was, and what changed from the
    /// revision before it (when that one is still kept).
    func getRevision(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only an admin token may read the catalog's history")
        let number = try revisionNumber(request)
        let (revision, previous) = try storage { () throws(StoreError) -> (CatalogRevision?, CatalogRevision?) in
            guard let revision = try store.catalogRevision(number) else { return (nil, nil) }
            let before = try store.catalogRevisions(before: number, limit: 1).first
            return (revision, try before.flatMap { b throws(StoreError) in try store.catalogRevision(b.number) })
        }
        guard let revision else { throw Problems.notFound("no catalog revision \(number) is kept") }
        var w = JSONWriter()
        w.object { o in
            Self.writeSummaryMembers(revision, to: &o)
            o.objectMember("catalog") { c in
                c.arrayMember("sheets") { items in for sheet in revision.sheets { items.json(Array(sheet.json.utf8)) } }
                c.member("settings") { $0.json(Self.settingsJSON(revision.settings)) }
            }
            o.objectMember("changes") { c in Self.writeChanges(from: previous, to: revision, &c) }
        }
        var response = HTTPResponse.json(200, w.bytes)
        response.actor = tokens.adminName(authorization: request.header("Authorization"))
        return response
    }

    /// `POST /v1/catalog/revisions/{revision}/restore`: a new revision equal to that one (itself
    /// restorable). Honours `If-Match` like every catalog write.
    func restoreRevision(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only an admin token may change the catalog")
        let number = try revisionNumber(request)
        let author = try revisionAuthor(request)
        _ = catalog  // on a shared database: another replica's changes first (it takes `catalogWrites` itself)
        let (made, tag) = try catalogWrites.withLock { _ throws(Problem) -> (CatalogRevision?, String) in
            try checkIfMatch(request)
            guard let old = try storage({ () throws(StoreError) in try store.catalogRevision(number) }) else { return (nil, "") }
            // What the store would hand back must load, and fit today's limits.
            let restored: Catalog
            do {
                var catalog = Catalog()
                for sheet in old.sheets {
                    let object = try RequestBody.object(Array(sheet.json.utf8), subject: "the sheet '\(sheet.id)' of revision \(number)")
                    catalog.upsert(try SheetDefinition.parse(object, pathId: sheet.id))
                }
                catalog.settings = old.settings
                restored = catalog
            } catch {
                throw Problems.internalError("revision \(number) does not load: \(error)")
            }
            if let violation = catalogLimits.violation(upserting: restored.sortedByID, into: Catalog()) { throw violation.problem }
            let made = try storage { () throws(StoreError) in try store.restoreCatalogRevision(number, author: author, keep: catalogRevisionsKept) }
            guard let made else { return (nil, "") }
            catalogSnapshot.withLock { $0 = restored }
            return (made, currentCatalogTag)
        }
        guard let made else { throw Problems.notFound("no catalog revision \(number) is kept") }
        feed.catalogChanged()
        var w = JSONWriter()
        w.object { o in Self.writeSummaryMembers(made, to: &o) }
        var response = HTTPResponse.json(201, w.bytes, headers: [("ETag", tag), ("Location", "/v1/catalog/revisions/\(made.number)")])
        response.actor = author.actor
        return response
    }

    private func revisionNumber(_ request: HTTPRequest) throws(Problem) -> Int64 {
        guard let text = request.pathParameter("revision"), let n = Int64(text), n >= 1 else {
            throw Problems.invalidParams([("revision", "must be a revision number")])
        }
        return n
    }

    private static func writeSummary(_ r: CatalogRevision, to w: inout JSONWriter) {
        w.object { o in writeSummaryMembers(r, to: &o) }
    }

    private static func writeSummaryMembers(_ r: CatalogRevision, to o: inout JSONWriter) {
        o.member("revision", Int(r.number))
        o.member("createdAt", r.createdAt)
        o.member("actor", r.actor)
        o.member("comment", r.comment)
        o.member("restoredFrom", r.restoredFrom.map { Int($0) })
        o.member("sheetCount", r.sheetCount)
    }

    /// Sheets added, removed, and changed (with the top-level members whose values differ), and
    /// whether the settings changed. Without a previous revision everything counts as added.
    private static func writeChanges(from previous: CatalogRevision?, to revision: CatalogRevision, _ c: inout JSONWriter) {
        let old = Dictionary(uniqueKeysWithValues: (previous?.sheets ?? []).map { ($0.id, $0.json) })
        let new = Dictionary(uniqueKeysWithValues: revision.sheets.map { ($0.id, $0.json) })
        c.member("previousRevision", previous.map { Int($0.number) })
        c.arrayMember("added") { a in for s in revision.sheets where old[s.id] == nil { a.element(s.id) } }
        c.arrayMember("removed") { a in for s in previous?.sheets ?? [] where new[s.id] == nil { a.element(s.id) } }
        c.arrayMember("changed") { a in
            for s in revision.sheets {
                guard let before = old[s.id], before != s.json else { continue }
                let members = changedMembers(before, s.json)
                a.object { o in
                    o.member("id", s.id)
                    o.arrayMember("members") { m in for name in members { m.element(name) } }
                }
            }
        }
        c.member("settingsChanged", previous.map { $0.settings != revision.settings } ?? false)
    }

    /// The top-level members whose values differ between two definitions' JSON, sorted.
    private static func changedMembers(_ a: String, _ b: String) -> [String] {
        guard let x = try? RequestBody.object(Array(a.utf8)), let y = try? RequestBody.object(Array(b.utf8)) else { return [] }
        return Set(x.keys).union(y.keys).filter { x[$0] != y[$0] }.sorted()
    }
}

import Crypto
import FoundationEssentials
import Glibc
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// The sheetd application: the /v1 API and the ops endpoints over a store and the policy.
/// Handlers run synchronously on HTTP worker threads; shared state is behind `Mutex`/`Atomic`.
public final class SheetService: Sendable {
    public static let version = "0.1.0"

    let store: any SheetStore
    let tokens: TokenVerifier
    let metrics: HTTPMetrics
    let openAPIDocument: [UInt8]
    /// The catalog as last written; every request reads a consistent snapshot of it.
    private let catalogSnapshot: CatalogSnapshot
    /// Decision answers per user, kept exact by the write path (see `DecisionCache`).
    private let decisions = DecisionCache()
    /// Serializes catalog writes so the store and the snapshot change in the same order.
    private let catalogWrites = Mutex(())
    private let databaseErrors = Atomic<Int>(0)
    private let draining = Atomic<Bool>(false)

    /// Builds the service and loads the catalog from the store.
    public init(store: any SheetStore, tokens: TokenVerifier, metrics: HTTPMetrics, openAPIDocument: [UInt8]) throws {
        self.store = store
        self.tokens = tokens
        self.metrics = metrics
        self.openAPIDocument = openAPIDocument
        var catalog = Catalog()
        for stored in try store.catalog() {
            let object = try JSONValue.parseObject(Array(stored.json.utf8))
            catalog.upsert(try SheetDefinition.parse(object, pathId: stored.id))
        }
        self.catalogSnapshot = CatalogSnapshot(catalog)
    }

    /// The current catalog.
    public var catalog: Catalog { catalogSnapshot.current }

    /// Readiness turns 503 from now on (SIGTERM).
    public func beginDraining() { draining.store(true, ordering: .relaxed) }

    /// Every route of the service, on a new router.
    public func makeRouter() -> Router {
        let router = Router()
        router.add(.GET, "/healthz") { _ in .json(200, Array(#"{"status":"ok"}"#.utf8)) }
        router.add(.GET, "/readyz") { [self] _ in try readiness() }
        router.add(.GET, "/metrics") { [self] _ in .text(200, renderMetrics(), contentType: "text/plain; version=0.0.4; charset=utf-8") }
        router.add(.GET, "/openapi.yaml") { [self] _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: openAPIDocument)
        }

        router.add(.GET, "/v1/sheets") { [self] in try listSheets($0) }
        router.add(.GET, "/v1/sheets/{sheetId}") { [self] in try getSheet($0) }
        router.add(.PUT, "/v1/sheets/{sheetId}") { [self] in try putSheet($0) }
        router.add(.DELETE, "/v1/sheets/{sheetId}") { [self] in try deleteSheet($0) }

        router.add(.PUT, "/v1/users/{userId}/containers/{containerId}/count") { [self] in try reportCount($0) }
        router.add(.POST, "/v1/users/{userId}/dismissals") { [self] in try reportDismissal($0) }
        router.add(.POST, "/v1/users/{userId}/presentations") { [self] in try reportPresentation($0) }
        router.add(.PUT, "/v1/users/{userId}/sheets/{sheetId}/content-height") { [self] in try reportContentHeight($0) }
        router.add(.GET, "/v1/users/{userId}/decision") { [self] in try decision($0) }
        router.add(.GET, "/v1/users/{userId}/state") { [self] in try userState($0) }
        router.add(.DELETE, "/v1/users/{userId}") { [self] in try deleteUser($0) }
        return router
    }

    // MARK: - Ops

    private func readiness() throws(Problem) -> HTTPResponse {
        if draining.load(ordering: .relaxed) { throw Problems.unavailable("sheetd is shutting down") }
        do {
            try store.ping()
        } catch {
            databaseErrors.add(1, ordering: .relaxed)
            throw Problems.unavailable("the database does not answer: \(error)")
        }
        return .json(200, Array(#"{"status":"ready"}"#.utf8))
    }

    private func renderMetrics() -> String {
        var text = metrics.renderPrometheus()
        text += "# HELP sheetd_database_errors_total Storage operations that failed.\n"
        text += "# TYPE sheetd_database_errors_total counter\n"
        text += "sheetd_database_errors_total \(databaseErrors.load(ordering: .relaxed))\n"
        text += "# HELP sheetd_catalog_sheets Sheet definitions in the catalog.\n"
        text += "# TYPE sheetd_catalog_sheets gauge\n"
        text += "sheetd_catalog_sheets \(catalog.sheets.count)\n"
        text += "# HELP sheetd_build_info Build information.\n"
        text += "# TYPE sheetd_build_info gauge\n"
        text += "sheetd_build_info{version=\"\(Self.version)\"} 1\n"
        return text
    }

    // MARK: - Catalog

    private func listSheets(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authenticate(request)
        var w = JSONWriter()
        let sheets = catalog.sortedByID
        w.object { o in
            o.arrayMember("sheets") { items in for sheet in sheets { sheet.write(to: &items) } }
        }
        return .json(200, w.bytes)
    }

    private func getSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authenticate(request)
        let id = try pathIdentifier(request, "sheetId")
        guard let sheet = catalog[id] else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
        return .json(200, sheet.canonicalJSON)
    }

    private func putSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only the admin token may change the catalog")
        let id = try pathIdentifier(request, "sheetId")
        let definition = try SheetDefinition.parse(try jsonBody(request), pathId: id)
        let json = definition.canonicalJSON
        let created = try catalogWrites.withLock { _ throws(Problem) -> Bool in
            let created = try storage { () throws(StoreError) in
                try store.putSheet(StoredSheet(id: id, json: String(decoding: json, as: UTF8.self)))
            }
            catalogSnapshot.withLock { $0.upsert(definition) }
            return created
        }
        return .json(created ? 201 : 200, json, headers: created ? [("Location", "/v1/sheets/\(id)")] : [])
    }

    private func deleteSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only the admin token may change the catalog")
        let id = try pathIdentifier(request, "sheetId")
        let existed = try catalogWrites.withLock { _ throws(Problem) -> Bool in
            let existed = try storage { () throws(StoreError) in try store.deleteSheet(id: id) }
            catalogSnapshot.withLock { $0.remove(id: id) }
            return existed
        }
        guard existed else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
        return .empty(204)
    }

    /// Upserts a whole catalog (the `--catalog` file) in one transaction.
    public func loadCatalog(_ definitions: [SheetDefinition]) throws(StoreError) {
        try catalogWrites.withLock { _ throws(StoreError) in
            try store.putSheets(definitions.map { StoredSheet(id: $0.id, json: String(decoding: $0.canonicalJSON, as: UTF8.self)) })
            catalogSnapshot.withLock { catalog in for d in definitions { catalog.upsert(d) } }
        }
    }

    /// Serves `definitions` without storing them, for this process only: at start when the database
    /// takes no writes (read-only file, full disk). The catalog file is upserted again at the next start.
    public func useCatalogWithoutStoring(_ definitions: [SheetDefinition]) {
        catalogWrites.withLock { _ in
            catalogSnapshot.withLock { catalog in for d in definitions { catalog.upsert(d) } }
        }
    }

    // MARK: - Events

    private func reportCount(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        let containerId = try pathIdentifier(request, "containerId")
        var r = BodyReader(try jsonBody(request))
        let count = r.integer("count", 0...1_000_000, required: true)
        let seq = r.integer("seq", 0...9_007_199_254_740_991)
        let filter = r.identifier("filter", allowEmpty: true) ?? ""
        let eventId = r.identifier("eventId")
        try r.finish()
        let catalog = self.catalog
        return try record(userId: userId, eventId: eventId, kind: "count") { state in
            let effect = SheetPolicy.apply(
                .countReported(containerId: containerId, filter: filter, count: count!, seq: seq), to: &state, catalog: catalog)
            var w = JSONWriter()
            w.object { o in
                o.member("containerId", containerId)
                o.member("filter", filter)
                o.member("count", effect.count)
                o.member("changed", effect.changed)
                o.member("applied", effect.applied)
            }
            return w.bytes
        }
    }

    private func reportDismissal(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        var r = BodyReader(try jsonBody(request))
        let sheetId = r.identifier("sheetId", required: true)
        let method = r.enumeration("method", DismissMethod.self, required: true)
        let eventId = r.identifier("eventId")
        try r.finish()
        let catalog = self.catalog
        return try record(userId: userId, eventId: eventId, kind: "dismissal") { state in
            // Checked inside the transaction so a replayed event id answers as it did, whatever the catalog says now.
            guard catalog[sheetId!] != nil else { throw Problems.notFound("no sheet '\(sheetId!)' in the catalog") }
            let effect = SheetPolicy.apply(.sheetDismissed(sheetId: sheetId!, method: method!), to: &state, catalog: catalog)
            var w = JSONWriter()
            w.object { o in
                o.member("stack", effect.stack)
                o.member("latched", effect.latched)
            }
            return w.bytes
        }
    }

    private func reportPresentation(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        var r = BodyReader(try jsonBody(request))
        let sheetId = r.identifier("sheetId", required: true)
        let mode = r.enumeration("mode", OpenMode.self, required: true)
        let parentSheetId = r.identifier("parentSheetId")
        let eventId = r.identifier("eventId")
        try r.finish()
        let catalog = self.catalog
        return try record(userId: userId, eventId: eventId, kind: "presentation") { state in
            guard catalog[sheetId!] != nil else { throw Problems.notFound("no sheet '\(sheetId!)' in the catalog") }
            if let parentSheetId, catalog[parentSheetId] == nil {
                throw Problems.notFound("no parent sheet '\(parentSheetId)' in the catalog")
            }
            let effect = SheetPolicy.apply(
                .sheetOpened(sheetId: sheetId!, mode: mode!, parentSheetId: parentSheetId), to: &state, catalog: catalog)
            var w = JSONWriter()
            w.object { o in o.member("stack", effect.stack) }
            return w.bytes
        }
    }

    private func reportContentHeight(_ request: HTTPRequest) throws -> HTTPResponse {
        let userId = try authorizeUser(request)
        let sheetId = try pathIdentifier(request, "sheetId")
        var r = BodyReader(try jsonBody(request))
        let height = r.number("height", 1...10_000, required: true)
        let platform = r.enumeration("platform", Platform.self, required: true)
        let eventId = r.identifier("eventId")
        try r.finish()
        let catalog = self.catalog
        return try record(userId: userId, eventId: eventId, kind: "content-height") { state in
            guard catalog[sheetId] != nil else { throw Problems.notFound("no sheet '\(sheetId)' in the catalog") }
            _ = SheetPolicy.apply(
                .contentHeightMeasured(sheetId: sheetId, platform: platform!, height: height!), to: &state, catalog: catalog)
            var w = JSONWriter()
            w.object { o in
                o.member("sheetId", sheetId)
                o.member("platform", platform!.rawValue)
                o.member("height", height!)
            }
            return w.bytes
        }
    }

    /// One event, one transaction; the outcome of the first processing answers every retry.
    /// Event ids are scoped to the kind of event: the same id on another route is another event (a
    /// replay must answer with the route's own outcome shape, not another route's).
    private func record(userId: String, eventId: String?, kind: String, _ body: (inout UserState) throws -> [UInt8]) throws -> HTTPResponse {
        // After the commit (or the failure), before the answer: cached decisions of this user are stale.
        defer { decisions.invalidate(userId) }
        do {
            let result = try store.update(userId: userId, eventId: eventId.map { "\(kind)/\($0)" }, body)
            return .json(200, result.outcome, headers: result.replayed ? [("Idempotent-Replayed", "true")] : [])
        } catch let error as StoreError {
            databaseErrors.add(1, ordering: .relaxed)
            throw Problems.storage(error)
        }
    }

    // MARK: - Decision and state

    private func decision(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorizeUser(request)
        let context = try DecisionQuery.context(from: request)
        let (catalog, catalogVersion) = catalogSnapshot.currentWithVersion
        let answer: DecisionCache.Answer
        if let cached = decisions.lookup(userId: userId, context: context, catalogVersion: catalogVersion) {
            answer = cached
        } else {
            let epoch = decisions.epoch(of: userId)  // before the state is read
            let state = try storage { () throws(StoreError) in try store.userState(userId: userId) }
            let body = SheetPolicy.decide(catalog: catalog, state: state, context: context).jsonBytes()
            // Strong validator over the exact bytes: an event that leaves the decision unchanged leaves the tag.
            let etag = "\"" + Hex.encode(SHA256.hash(body).prefix(16)) + "\""
            answer = DecisionCache.Answer(body: body, etag: etag)
            decisions.insert(userId: userId, context: context, catalogVersion: catalogVersion, epoch: epoch, answer: answer)
        }
        let etag = answer.etag
        let headers = [("ETag", etag), ("Cache-Control", "no-cache")]
        if let condition = request.header("If-None-Match"), EntityTag.matches(condition, etag) {
            return .empty(304, headers: headers)
        }
        return .json(200, answer.body, headers: headers)
    }

    private func userState(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorizeUser(request)
        let state = try storage { () throws(StoreError) in try store.userState(userId: userId) }
        var w = JSONWriter()
        w.object { o in
            o.member("userId", userId)
            o.arrayMember("containers") { items in
                for key in state.containers.keys.sorted() {
                    let value = state.containers[key]!
                    items.object { c in
                        c.member("containerId", key.containerId)
                        c.member("filter", key.filter)
                        c.member("count", value.count)
                        c.member("seq", value.seq)
                    }
                }
            }
            o.arrayMember("latches") { items in
                for sheetId in state.latches.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                    items.object { l in
                        l.member("sheetId", sheetId)
                        l.member("count", state.latches[sheetId]!)
                    }
                }
            }
            o.arrayMember("stack") { items in
                for entry in state.stack {
                    items.object { e in
                        e.member("sheetId", entry.sheetId)
                        e.member("mode", entry.mode.rawValue)
                    }
                }
            }
            o.arrayMember("contentHeights") { items in
                for key in state.contentHeights.keys.sorted() {
                    items.object { h in
                        h.member("sheetId", key.sheetId)
                        h.member("platform", key.platform.rawValue)
                        h.member("height", state.contentHeights[key]!)
                    }
                }
            }
        }
        return .json(200, w.bytes)
    }

    private func deleteUser(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorizeUser(request)
        defer { decisions.invalidate(userId) }
        try storage { () throws(StoreError) in try store.deleteUser(userId: userId) }
        return .empty(204)
    }

    // MARK: - Request plumbing

    private func authenticate(_ request: HTTPRequest) throws(Problem) -> Principal {
        do {
            return try tokens.principal(authorization: request.header("Authorization"), now: Int64(time(nil)))
        } catch {
            throw Problems.unauthorized(error)
        }
    }

    private func requireAdmin(_ request: HTTPRequest, _ why: String) throws(Problem) {
        guard try authenticate(request) == .admin else { throw Problems.forbidden(why) }
    }

    /// The `{userId}` of a /v1/users route, once the caller may act for that user.
    private func authorizeUser(_ request: HTTPRequest) throws(Problem) -> String {
        let principal = try authenticate(request)
        let userId = try pathIdentifier(request, "userId")
        if case .user(let subject) = principal, subject != userId {
            throw Problems.forbidden("this token may only use /v1/users/\(subject) routes")
        }
        return userId
    }

    private func pathIdentifier(_ request: HTTPRequest, _ name: String) throws(Problem) -> String {
        guard let value = request.pathParameter(name), Identifier.isValid(value) else {
            throw Problems.invalidParams([(name, Identifier.rule)])
        }
        return value
    }

    private func jsonBody(_ request: HTTPRequest) throws(Problem) -> [String: JSONNode] {
        guard let type = request.header("Content-Type"), MediaType.isJSON(type) else { throw Problems.unsupportedMediaType }
        return try JSONValue.parseObject(request.body)
    }

    private func storage<T>(_ operation: () throws(StoreError) -> T) throws(Problem) -> T {
        do {
            return try operation()
        } catch {
            databaseErrors.add(1, ordering: .relaxed)
            throw Problems.storage(error)
        }
    }
}

/// `Content-Type` checks.
enum MediaType {
    /// application/json or any application/*+json, parameters (charset) allowed.
    static func isJSON(_ value: String) -> Bool {
        if let answer = MediaTypeFastPath.isJSON(value) { return answer }
        let essence = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmed().lowercased() } ?? ""
        return essence == "application/json" || (essence.hasPrefix("application/") && essence.hasSuffix("+json"))
    }
}

/// `If-None-Match` evaluation (RFC 9110 §13.1.2: weak comparison).
enum EntityTag {
    static func matches(_ header: String, _ etag: String) -> Bool {
        if let answer = EntityTagFastPath.matches(header, etag) { return answer }
        let trimmed = header.trimmed()
        if trimmed == "*" { return true }
        let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for candidate in trimmed.split(separator: ",") {
            var c = candidate.trimmed()
            if c.hasPrefix("W/") { c.removeFirst(2) }
            if c == opaque { return true }
        }
        return false
    }
}

public import Foundation
public import SheetdClient

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A typed client of the operator routes (catalog, segments, settings, experiments, stats), for
/// back-office tools holding the admin token: the `SheetdAdminClient` product (module `SheetdAdmin`),
/// kept out of the app's `SheetdClient` product.
///
/// Reading the catalog also works with a user token; writing needs the admin token (403 otherwise).
/// Retries follow the same ``RetryPolicy`` as ``SheetdUserClient``: `putSheet` is idempotent; a
/// `deleteSheet` whose first answer was lost answers 404 on its retry.
public final class SheetdAdminClient: Sendable {
    /// The server.
    public let baseURL: URL
    let core: HTTPCore

    /// A client; `token` is asked for the bearer token before every request.
    public convenience init(
        baseURL: URL, token: @escaping @Sendable () async throws -> String, configuration: SheetdConfiguration = SheetdConfiguration()
    ) {
        self.init(baseURL: baseURL, tokenProvider: ClosureTokenProvider(token), configuration: configuration)
    }

    /// A client whose tokens come from `tokenProvider`.
    public init(baseURL: URL, tokenProvider: any SheetdTokenProvider, configuration: SheetdConfiguration = SheetdConfiguration()) {
        self.baseURL = baseURL
        self.core = HTTPCore(baseURL: baseURL, tokens: tokenProvider, configuration: configuration)
    }

    /// Whether a ``putSheet(_:definition:)`` created the definition or replaced one.
    public struct PutResult: Sendable, Equatable {
        /// The stored definition, every member filled.
        public var definition: SheetDefinition
        /// True for a 201 (created), false for a 200 (replaced).
        public var created: Bool
    }

    /// Creates or replaces the definition `id` (`PUT /v1/sheets/{sheetId}`).
    /// - Throws: ``SheetdError``; a 400 names each bad field in ``SheetdError/invalidParams``.
    @discardableResult
    public func putSheet(_ id: String, definition: SheetDefinitionInput) async throws -> PutResult {
        let answer = try await core.send("PUT", "/v1/sheets/\(HTTPCore.segment(id))", body: try HTTPCore.encode(definition))
        return PutResult(definition: try HTTPCore.decode(SheetDefinition.self, answer), created: answer.status == 201)
    }

    /// Every definition, ordered by id (`GET /v1/sheets`, page after page).
    public func sheets() async throws -> [SheetDefinition] {
        var sheets: [SheetDefinition] = []
        var after: String?
        repeat {
            var query = [URLQueryItem(name: "limit", value: "500")]
            if let after { query.append(URLQueryItem(name: "after", value: after)) }
            let page = try HTTPCore.decode(Catalog.self, try await core.send("GET", "/v1/sheets", query: query))
            sheets += page.sheets
            after = page.next
        } while after != nil
        return sheets
    }

    /// One definition (`GET /v1/sheets/{sheetId}`); a 404 throws.
    public func sheet(_ id: String) async throws -> SheetDefinition {
        try HTTPCore.decode(SheetDefinition.self, try await core.send("GET", "/v1/sheets/\(HTTPCore.segment(id))"))
    }

    /// Deletes a definition (`DELETE /v1/sheets/{sheetId}`); a 404 throws.
    public func deleteSheet(_ id: String) async throws {
        _ = try await core.send("DELETE", "/v1/sheets/\(HTTPCore.segment(id))")
    }

    /// What `proposed` would change for a sample of stored users (`POST /v1/catalog/impact`):
    /// `users` of them (the server's default 1000 when nil), from the user id `from` (a random stored
    /// user when nil). Nothing is written.
    /// - Throws: ``SheetdError``; a 400 names each bad member (`sheets[i].member`) in ``SheetdError/invalidParams``.
    public func catalogImpact(of proposed: CatalogFile, users: Int? = nil, from: String? = nil) async throws -> CatalogImpact {
        var query: [URLQueryItem] = []
        if let users { query.append(URLQueryItem(name: "users", value: String(users))) }
        if let from { query.append(URLQueryItem(name: "from", value: from)) }
        return try HTTPCore.decode(
            CatalogImpact.self, try await core.send("POST", "/v1/catalog/impact", query: query, body: try HTTPCore.encode(proposed)))
    }

    // MARK: - Segments, settings, stats

    /// Replaces a user's segments (`PUT /v1/users/{userId}/attributes`); returns them as stored
    /// (sorted, no duplicates). Idempotent.
    @discardableResult
    public func setSegments(_ segments: [String], of userId: String) async throws -> [String] {
        let answer = try await core.send(
            "PUT", "/v1/users/\(HTTPCore.segment(userId))/attributes", body: try HTTPCore.encode(UserAttributesInput(segments: segments)))
        return try HTTPCore.decode(UserAttributes.self, answer).segments
    }

    /// A user's segments (`GET /v1/users/{userId}/attributes`).
    public func segments(of userId: String) async throws -> [String] {
        try HTTPCore.decode(UserAttributes.self, try await core.send("GET", "/v1/users/\(HTTPCore.segment(userId))/attributes")).segments
    }

    /// The global campaign settings (`GET /v1/settings`).
    public func settings() async throws -> GlobalSettings {
        try HTTPCore.decode(GlobalSettings.self, try await core.send("GET", "/v1/settings"))
    }

    /// Replaces the global campaign settings (`PUT /v1/settings`); nil members turn a rule off. Idempotent.
    @discardableResult
    public func putSettings(_ settings: GlobalSettings) async throws -> GlobalSettings {
        try HTTPCore.decode(GlobalSettings.self, try await core.send("PUT", "/v1/settings", body: try HTTPCore.encode(settings)))
    }

    /// An experiment's results (`GET /v1/experiments/{experimentId}/results`).
    public func results(of experimentId: String) async throws -> ExperimentResults {
        try HTTPCore.decode(ExperimentResults.self, try await core.send("GET", "/v1/experiments/\(HTTPCore.segment(experimentId))/results"))
    }

    /// Pins a QA user to an arm of an experiment (nil removes the pin).
    @discardableResult
    public func pin(_ userId: String, to arm: String?, in experimentId: String) async throws -> Pin {
        let path = "/v1/experiments/\(HTTPCore.segment(experimentId))/pins/\(HTTPCore.segment(userId))"
        guard let arm else { return try HTTPCore.decode(Pin.self, try await core.send("DELETE", path)) }
        return try HTTPCore.decode(Pin.self, try await core.send("PUT", path, body: try HTTPCore.encode(PinInput(arm: arm))))
    }

    /// A sheet's figures (`GET /v1/sheets/{sheetId}/stats`): the totals, or from `since` on.
    public func stats(of sheetId: String, since: Date? = nil) async throws -> SheetStats {
        var query: [URLQueryItem] = []
        if let since {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime]
            query.append(URLQueryItem(name: "since", value: formatter.string(from: since)))
        }
        return try HTTPCore.decode(SheetStats.self, try await core.send("GET", "/v1/sheets/\(HTTPCore.segment(sheetId))/stats", query: query))
    }
}

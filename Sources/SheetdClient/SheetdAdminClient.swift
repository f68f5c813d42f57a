public import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A typed client of the catalog routes, for back-office tools holding the admin token.
///
/// Reading the catalog also works with a user token; writing needs the admin token (403 otherwise).
/// Retries follow the same ``RetryPolicy`` as ``SheetdClient``: `putSheet` is idempotent; a
/// `deleteSheet` whose first answer was lost answers 404 on its retry.
public final class SheetdAdminClient: Sendable {
    /// The server.
    public let baseURL: URL
    let core: HTTPCore

    /// A client; `token` is asked for the bearer token before every request.
    public init(baseURL: URL, token: @escaping @Sendable () async throws -> String, configuration: SheetdConfiguration = SheetdConfiguration()) {
        self.baseURL = baseURL
        self.core = HTTPCore(baseURL: baseURL, token: token, configuration: configuration)
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

    /// Every definition, ordered by id (`GET /v1/sheets`).
    public func sheets() async throws -> [SheetDefinition] {
        try HTTPCore.decode(Catalog.self, try await core.send("GET", "/v1/sheets")).sheets
    }

    /// One definition (`GET /v1/sheets/{sheetId}`); a 404 throws.
    public func sheet(_ id: String) async throws -> SheetDefinition {
        try HTTPCore.decode(SheetDefinition.self, try await core.send("GET", "/v1/sheets/\(HTTPCore.segment(id))"))
    }

    /// Deletes a definition (`DELETE /v1/sheets/{sheetId}`); a 404 throws.
    public func deleteSheet(_ id: String) async throws {
        _ = try await core.send("DELETE", "/v1/sheets/\(HTTPCore.segment(id))")
    }
}

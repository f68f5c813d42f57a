import Concurrency
import Crypto
import Foundation
import FoundationNetworking
import MicroHTTP
import PostgresKit
import PostgresStore
import SQLiteStore
import SheetPolicy
import SheetService
import SheetStore
import Testing

/// A live sheetd on port 0 over a real temporary SQLite file (or a fresh schema of the test
/// PostgreSQL, `postgres: true`), with a small blocking HTTP client.
final class LiveService {
    static let adminToken = "test-admin-token-0123456789abcdef0123456789"
    static let jwtSecret = "test-jwt-secret-0123456789abcdef0123456789abcdef"

    /// The PostgreSQL the tests may create schemas in (`make test` and scripts/with-postgres.sh set it).
    static let postgresURL: String? = {
        let url = ProcessInfo.processInfo.environment["SHEETD_TEST_POSTGRES_URL"]
        return url?.isEmpty == false ? url : nil
    }()

    /// The backends API tests run on: both, always (without `postgresURL` the PostgreSQL runs fail, saying so).
    static let backends = [false, true]

    let directory: URL
    let sheetStore: any SheetStore
    /// The SQLite store (the default backend; not for `postgres: true` services).
    var store: SQLiteSheetStore { sheetStore as! SQLiteSheetStore }
    private let postgresSchema: String?
    let service: SheetService
    let server: HTTPServer
    let tokens: TokenVerifier
    var baseURL: String { "http://127.0.0.1:\(server.port)" }

    init(
        catalog: [String]? = nil, maxStreams: Int = ServiceDefaults.maxStreams,
        streamHeartbeatSeconds: Int = ServiceDefaults.streamHeartbeatSeconds,
        stateLimits: UserStateLimits = UserStateLimits(), catalogLimits: CatalogLimits = CatalogLimits(),
        eventsPerUserPerMinute: Int = ServiceDefaults.eventsPerUserPerMinute, tokenLeewaySeconds: Int = 60,
        postgres: Bool = false, adminTokens: [AdminToken] = [], catalogRevisionsKept: Int = CatalogRevision.defaultKept,
        catalogHistoryBytes: Int64 = CatalogRevision.defaultHistoryBytes,
        clock: @escaping @Sendable () -> Timestamp = Timestamp.now, tokens customTokens: TokenVerifier? = nil
    ) throws {
        tokens =
            customTokens
            ?? TokenVerifier(
                jwtSecret: LiveService.jwtSecret, adminToken: LiveService.adminToken, adminTokens: adminTokens, clockSkewSeconds: tokenLeewaySeconds)
        directory = FileManager.default.temporaryDirectory.appending(path: "sheetd-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if postgres {
            guard let admin = Self.postgresURL else {
                throw TestError(
                    "SHEETD_TEST_POSTGRES_URL is not set: run make test, or scripts/with-postgres.sh swift test (PostgreSQL tests never skip)")
            }
            let schema = "api_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
            let db = try PostgresConnection(url: admin)
            try db.execute("CREATE SCHEMA \(schema)")
            db.close()
            postgresSchema = schema
            let url = admin + (admin.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
            sheetStore = try PostgresSheetStore.open(url: url, readerConnections: 2)
        } else {
            postgresSchema = nil
            sheetStore = try SQLiteSheetStore.open(path: directory.appending(path: "sheetd.sqlite").path)
        }
        service = try SheetService(
            store: sheetStore, tokens: tokens, metrics: HTTPMetrics(), openAPIDocument: Array(LiveService.openAPIText.utf8),
            maxStreams: maxStreams, streamHeartbeatSeconds: streamHeartbeatSeconds, stateLimits: stateLimits,
            catalogLimits: catalogLimits, eventsPerUserPerMinute: eventsPerUserPerMinute, catalogRevisionsKept: catalogRevisionsKept,
            catalogHistoryBytes: catalogHistoryBytes,
            clock: clock)
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threads = 2
        configuration.accessLog = false
        server = HTTPServer(configuration: configuration, router: service.makeRouter(), metrics: HTTPMetrics())
        try server.start()
    }

    deinit {
        server.stop(drainTimeout: .seconds(1))
        sheetStore.close()
        try? FileManager.default.removeItem(at: directory)
        if let postgresSchema, let admin = Self.postgresURL, let db = try? PostgresConnection(url: admin) {
            _ = try? db.execute("DROP SCHEMA \(postgresSchema) CASCADE")
            db.close()
        }
    }

    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
    }
    static var openAPIText: String { (try? String(contentsOf: repositoryRoot.appending(path: "openapi.yaml"), encoding: .utf8)) ?? "" }

    func userToken(_ user: String, ttl: Int64 = 3600, now: Int64 = Int64(time(nil))) -> String {
        tokens.issueUserToken(sub: user, now: now, ttl: ttl)
    }

    struct Response {
        var status: Int
        var headers: [String: String]
        var body: Data
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var text: String { String(decoding: body, as: UTF8.self) }
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
    }

    /// One request; `token` nil sends no Authorization header.
    func request(
        _ method: String, _ path: String, token: String? = LiveService.adminToken, json: String? = nil,
        headers: [String: String] = [:]
    ) throws -> Response {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let box = Locked<(Data?, HTTPURLResponse?, (any Error)?)?>(nil)
        let semaphore = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, error in
            box.withLock { $0 = (data, response as? HTTPURLResponse, error) }
            semaphore.signal()
        }.resume()
        guard semaphore.wait(timeout: .now() + 10) == .success else { throw TestError("timeout: \(method) \(path)") }
        let answer = box.withLock { $0 }
        guard let response = answer?.1 else { throw TestError("no response: \(String(describing: answer?.2))") }
        var headers: [String: String] = [:]
        for (k, v) in response.allHeaderFields { headers["\(k)"] = "\(v)" }
        return Response(status: response.statusCode, headers: headers, body: answer?.0 ?? Data())
    }

    func put(_ path: String, _ json: String, token: String? = LiveService.adminToken) throws -> Response {
        try request("PUT", path, token: token, json: json)
    }

    func post(_ path: String, _ json: String, token: String? = LiveService.adminToken) throws -> Response {
        try request("POST", path, token: token, json: json)
    }

    func get(_ path: String, token: String? = LiveService.adminToken, headers: [String: String] = [:]) throws -> Response {
        try request("GET", path, token: token, headers: headers)
    }
}

struct TestError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// A small catalog shared by the API tests, modelled on the seed documents.
enum Fixtures {
    static let offers = #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10}"#
    static let reminders = #"{"kind":"cards","screen":"home","tab":"accounts","containerId":"reminders","priority":1}"#
    static let offerDetail = #"{"kind":"informational","size":"large","screen":"home","tab":"accounts","title":"Offer details"}"#
    static let filters =
        #"{"kind":"input","style":"strict","title":"Filter transactions","screen":"transactions","inputCount":3,"confirmDismissWhenDirty":true,"primaryButton":{"label":"Apply"}}"#

    static func install(_ live: LiveService) throws {
        for (id, json) in [("offers", offers), ("reminders", reminders), ("offer-detail", offerDetail), ("filters", filters)] {
            let r = try live.put("/v1/sheets/\(id)", json)
            #expect(r.status == 201 || r.status == 200, "PUT \(id): \(r.status) \(r.text)")
        }
    }

    static let homeAccountsIOS = "screen=home&tab=accounts&platform=ios"
}

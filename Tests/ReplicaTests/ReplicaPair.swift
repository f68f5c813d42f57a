import Concurrency
import Foundation
import FoundationNetworking
import MicroHTTP
import PostgresKit
import PostgresStore
import SheetStore
import Synchronization
import Testing

@testable import SheetService

/// Two replicas on one fresh schema of the test server (`SHEETD_TEST_POSTGRES_URL`, which
/// scripts/with-postgres.sh sets), each a SheetService over its own PostgresSheetStore behind a
/// live server on port 0. Everything is stopped and the schema dropped on deinit.
final class ReplicaPair {
    static let adminToken = "replica-admin-token-0123456789abcdef0123"
    static let jwtSecret = "replica-jwt-secret-0123456789abcdef0123456789abcdef"

    static let postgresURL: String? = {
        let url = ProcessInfo.processInfo.environment["SHEETD_TEST_POSTGRES_URL"]
        return url?.isEmpty == false ? url : nil
    }()

    /// The test server's URL, or a failure that says how to get one (these tests never skip).
    static func requirePostgresURL(sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(
            postgresURL, "SHEETD_TEST_POSTGRES_URL is not set: run make replicas-test, make test, or scripts/with-postgres.sh swift test",
            sourceLocation: sourceLocation)
    }

    let url: String
    let adminURL: String
    private let schema: String
    /// The login role of both replicas' sessions when the pair was made `withOwnRole` (nil: the admin's).
    let role: String?
    let aStore: PostgresSheetStore
    let bStore: PostgresSheetStore
    let aService: SheetService
    let bService: SheetService
    private let servers: [HTTPServer]
    let a: Replica
    let b: Replica

    /// `withOwnRole`: the replicas log in as a role of their own (a superuser), whose settings a
    /// test may change without touching the other tests' sessions.
    init(withOwnRole: Bool = false) throws {
        adminURL = try Self.requirePostgresURL()
        schema = "r_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        role = withOwnRole ? schema + "_login" : nil
        let db = try PostgresConnection(url: adminURL)
        try db.execute("CREATE SCHEMA \(schema)")
        if let role { try db.execute("CREATE ROLE \(role) LOGIN SUPERUSER") }
        db.close()
        let separator = adminURL.contains("?") ? "&" : "?"
        url = adminURL + separator + "options=-csearch_path%3D\(schema)" + (role.map { "&user=\($0)" } ?? "")
        let tokens = TokenVerifier(jwtSecret: Self.jwtSecret, adminToken: Self.adminToken)
        aStore = try PostgresSheetStore.open(url: url, readerConnections: 4)
        bStore = try PostgresSheetStore.open(url: url, readerConnections: 4)
        aService = try SheetService(store: aStore, tokens: tokens, metrics: HTTPMetrics(), openAPIDocument: [])
        bService = try SheetService(store: bStore, tokens: tokens, metrics: HTTPMetrics(), openAPIDocument: [])
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        configuration.threads = 2
        configuration.accessLog = false
        servers = [aService, bService].map { HTTPServer(configuration: configuration, router: $0.makeRouter(), metrics: HTTPMetrics()) }
        for server in servers { try server.start() }
        a = Replica(port: servers[0].port)
        b = Replica(port: servers[1].port)
        // Both listeners listen before the test starts writing.
        let (aCounters, bCounters) = (aService.replicaCounters, bService.replicaCounters)
        _ = Self.wait {
            aCounters.listenerConnected.load(ordering: .acquiring) && bCounters.listenerConnected.load(ordering: .acquiring) ? true : nil
        }
    }

    deinit {
        for server in servers { server.stop(drainTimeout: .seconds(1)) }
        aStore.close()
        bStore.close()
        if let db = try? PostgresConnection(url: adminURL) {
            _ = try? db.execute("DROP SCHEMA \(schema) CASCADE")
            if let role { _ = try? db.execute("DROP ROLE \(role)") }
            db.close()
        }
    }

    /// Polls `probe` every 10 ms for up to 5 s; its first non-nil value.
    static func wait<T>(_ probe: () -> T?) -> T? {
        for _ in 0..<500 {
            if let value = probe() { return value }
            usleep(10_000)
        }
        return nil
    }
}

/// A small blocking HTTP client for one replica (admin token).
struct Replica: Sendable {
    let port: Int

    struct Response: Sendable {
        var status: Int
        var headers: [String: String]
        var text: String
        func header(_ name: String) -> String? { headers.first { $0.key.lowercased() == name.lowercased() }?.value }
        @discardableResult
        func expect(_ status: Int, sourceLocation: SourceLocation = #_sourceLocation) -> Response {
            #expect(self.status == status, "\(self.status) \(text.prefix(300))", sourceLocation: sourceLocation)
            return self
        }
    }

    @discardableResult
    func request(_ method: String, _ path: String, json: String? = nil, headers: [(String, String)] = []) throws -> Response {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 15
        request.setValue("Bearer \(ReplicaPair.adminToken)", forHTTPHeaderField: "Authorization")
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
        let box = Locked<Response?>(nil)
        let done = DispatchSemaphore(value: 0)
        URLSession.shared.dataTask(with: request) { data, response, _ in
            if let response = response as? HTTPURLResponse {
                var headers: [String: String] = [:]
                for (k, v) in response.allHeaderFields { headers["\(k)"] = "\(v)" }
                let answer = Response(status: response.statusCode, headers: headers, text: String(decoding: data ?? Data(), as: UTF8.self))
                box.withLock { $0 = answer }
            }
            done.signal()
        }.resume()
        guard done.wait(timeout: .now() + 20) == .success, let value = box.withLock({ $0 }) else {
            throw ReplicaTestError("no answer to \(method) \(path)")
        }
        return value
    }

    func get(_ path: String, headers: [(String, String)] = []) throws -> Response { try request("GET", path, headers: headers) }
    func put(_ path: String, _ json: String) throws -> Response { try request("PUT", path, json: json) }
}

struct ReplicaTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A value computed on another thread, waited for.
final class Background<T: Sendable>: Sendable {
    private let value = Locked<T?>(nil)
    private let done = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () -> T) {
        Thread.detachNewThread { [self] in
            let result = body()
            value.withLock { $0 = result }
            done.signal()
        }
    }

    func wait() -> T? {
        _ = done.wait(timeout: .now() + 20)
        return value.withLock { $0 }
    }
}

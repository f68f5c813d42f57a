import Foundation
import FoundationNetworking
import MicroHTTP
import SQLiteStore
import SheetService
import SheetStore
import SheetdAdmin
import SheetdClient
import TestSupport

/// A live sheetd in this process on a real temporary SQLite file, restartable on the same port and
/// database (the client must survive it). Port 0 picks a free port the first time.
final class LiveSheetd: @unchecked Sendable {
    // @unchecked Sendable: the stored properties are set once; the server types are Sendable or used
    // only from the test's thread (stop/restart).
    static let adminToken = "test-admin-token-0123456789abcdef0123456789"
    static let jwtSecret = "test-jwt-secret-0123456789abcdef0123456789abcdef"

    let directory: TemporaryDirectory
    let store: SQLiteSheetStore
    let service: SheetService
    let server: HTTPServer
    let ownsDirectory: Bool
    private let stopped = LockedFlag()
    static let tokens = TokenVerifier(jwtSecret: jwtSecret, adminToken: adminToken)

    var port: Int { server.port }
    var baseURL: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    init(port: Int = 0, directory: TemporaryDirectory? = nil, streamHeartbeatSeconds: Int = 15) throws {
        self.ownsDirectory = directory == nil
        self.directory = try directory ?? TemporaryDirectory(prefix: "sheetd-client-tests")
        store = try SQLiteSheetStore.open(path: self.directory.file("sheetd.sqlite"))
        service = try SheetService(
            store: store, tokens: Self.tokens, metrics: HTTPMetrics(), openAPIDocument: [],
            streamHeartbeatSeconds: streamHeartbeatSeconds)
        var configuration = HTTPServerConfiguration()
        configuration.port = port
        configuration.threads = 2
        configuration.accessLog = false
        server = HTTPServer(configuration: configuration, router: service.makeRouter(), metrics: HTTPMetrics())
        try server.start()
    }

    /// As on SIGTERM: streams get `event: shutdown`, the server drains and stops, the database closes.
    func stop() {
        guard stopped.set() else { return }
        service.beginDraining()
        server.stop(drainTimeout: .seconds(1))
        store.close()
    }

    deinit {
        stop()
        if ownsDirectory { directory.remove() }
    }

    static func userToken(_ user: String) -> String {
        tokens.issueUserToken(sub: user, now: Int64(Date().timeIntervalSince1970), ttl: 3600)
    }

    /// A client for `user` with fast retries, reporting its exchanges to `log`.
    func client(
        _ user: String = "u1", log: ExchangeLog? = nil, retry: RetryPolicy = RetryPolicy(maxAttempts: 4, baseDelay: 0.05, maxDelay: 0.5),
        liveUpdates: SheetdConfiguration.LiveUpdates = .automatic, longPollWait: Int = 30, baseURL: URL? = nil
    ) -> SheetdUserClient {
        let token = Self.userToken(user)
        var onExchange: (@Sendable (SheetdConfiguration.Exchange) -> Void)?
        if let log { onExchange = { log.append($0) } }
        return SheetdUserClient(
            baseURL: baseURL ?? self.baseURL, userId: user, token: { token },
            configuration: SheetdConfiguration(
                retry: retry, requestTimeout: 10, longPollWait: longPollWait, maxReconnectDelay: 0.5, liveUpdates: liveUpdates,
                onExchange: onExchange, longPollMinimumInterval: 0.1))
    }

    /// An admin client that retries transport failures like the user clients above. On Linux,
    /// URLSession very rarely leaves a request unanswered until its timeout under heavy parallel load
    /// (libdispatch's sources for a reused socket descriptor, swift-corelibs-libdispatch#833); one CI
    /// run lost a catalog PUT that way. Every admin call the tests make is idempotent.
    func admin() -> SheetdAdminClient {
        SheetdAdminClient(
            baseURL: baseURL, token: { LiveSheetd.adminToken },
            configuration: SheetdConfiguration(retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.05, maxDelay: 0.5), requestTimeout: 10))
    }

    /// The catalog the client tests use: offer cards on home/accounts, a nested detail, a strict filters sheet.
    func installCatalog() async throws {
        let admin = admin()
        try await admin.putSheet(
            "offers", definition: SheetDefinitionInput(kind: .cards, screen: "home", tab: "accounts", containerId: "offers-home", priority: 10))
        try await admin.putSheet(
            "offer-detail",
            definition: SheetDefinitionInput(kind: .informational, size: .large, title: "Offer details", screen: "home", tab: "accounts"))
        try await admin.putSheet(
            "filters",
            definition: SheetDefinitionInput(
                kind: .input, style: .strict, title: "Filter transactions", screen: "transactions", inputCount: 3, confirmDismissWhenDirty: true,
                primaryButton: PrimaryButton(label: "Apply")))
    }
}

/// A flag set once.
final class LockedFlag: @unchecked Sendable {
    // @unchecked Sendable: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = false
    /// Sets the flag; true the first time.
    func set() -> Bool {
        lock.lock()
        defer { lock.unlock() }
        defer { value = true }
        return !value
    }
}

/// The exchanges a client reported, in order.
final class ExchangeLog: @unchecked Sendable {
    // @unchecked Sendable: `items` is only touched under `lock`.
    private let lock = NSLock()
    private var items: [SheetdConfiguration.Exchange] = []
    func append(_ exchange: SheetdConfiguration.Exchange) {
        lock.lock()
        items.append(exchange)
        lock.unlock()
    }
    var all: [SheetdConfiguration.Exchange] {
        lock.lock()
        defer { lock.unlock() }
        return items
    }
    var statuses: [Int?] { all.map(\.status) }
    func clear() {
        lock.lock()
        items.removeAll()
        lock.unlock()
    }
}

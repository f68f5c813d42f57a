// swift-tools-version: 6.2
import PackageDescription

// Layers, one-way: sheetd (the command line: configuration, signals, start-up and drain, development secrets,
// migrate/token/backup/restore/catalog check) → {SheetService, SheetWire, MicroHTTP, SheetStore, SQLiteStore, PostgresStore, SheetPolicy, JSONKit, Crypto,
// CJemalloc (the executable's allocator)};
// SheetService (the service: routes over a store and the policy) → {MicroHTTP, SheetStore,
// SheetWire, SheetPolicy, Crypto, CurlKit, JSONKit, Concurrency, Observability}; it serves any SheetStore
// and links no backend: the executable picks SQLite or PostgreSQL;
// SheetWire (the API's wire format: request bodies decoded into typed values, every answer encoded) → {SheetPolicy, JSONKit};
// SheetStore (the store contract, the group-commit engine, the state codec, the rollups, and the SQL
// written once over `SQLSession`) → {SheetPolicy, Crypto, Concurrency};
// SQLiteStore (the embedded backend: its writer, readers, checkpoints, backups) → {SQLiteKit, SheetStore, SheetPolicy, Crypto,
// Concurrency}; SQLiteKit → CSQLite;
// MicroHTTP (only HTTP: connections, the request lifecycle, routing, responses, gzip) → {CMicroHTTPD, CMHDErrorAnswers, CZlib, Concurrency, JSONKit, Observability};
// Observability (the JSON-lines logger, the Prometheus text format, the monotonic clock) → JSONKit; Crypto → CCrypto; CurlKit (HTTPS GETs off the request path) → CCurl. SheetdClient (the typed Swift client for apps) → Foundation only: no server module
// depends on it and it depends on none of them. SheetPolicy and JSONKit depend on nothing but the standard library; Concurrency
// (the locks, thread-locals, atomic counters and caches every other module shares) on nothing but it
// and Synchronization.
// PostgreSQL backend: sheetd → PostgresStore → {PostgresKit, SheetStore, Concurrency}; PostgresKit → {CLibPQ, Concurrency}.
// Observability is imported by name wherever it is used (MicroHTTP does not re-export it).
let package = Package(
    name: "sheetd",
    // For the SheetdClient library on Apple platforms (URLSession's async API); the server builds on Linux.
    // iOS for apps (the UIKit and SwiftUI adapters are iOS only), macOS for an app's tests with the fake.
    // Not tvOS, watchOS, visionOS: no UISheetPresentationController or detents there, and nobody builds it.
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .executable(name: "sheetd", targets: ["sheetd"]),
        // The typed Swift client for apps: Foundation (and FoundationNetworking on Linux) only; it never
        // links the server's modules, and the server never links it.
        .library(name: "SheetdClient", targets: ["SheetdClient"]),
        // An in-memory SheetdClientProtocol (scripted decisions, recorded events) for the app's unit tests.
        .library(name: "SheetdClientTesting", targets: ["SheetdClientTesting"]),
        // The operator API (catalog, segments, settings, experiments, stats; the admin token) for
        // back-office tools, kept out of the app's product: module SheetdAdmin, over SheetdClient.
        .library(name: "SheetdAdminClient", targets: ["SheetdAdmin"]),
    ],
    targets: [
        // C libraries, wrapped by exactly one Swift module each.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        .target(name: "Concurrency", exclude: ["THREADS.md"]),
        .target(name: "Crypto", dependencies: ["CCrypto"]),
        // HTTPS GETs through libcurl (a JWKS URL), for background threads only.
        .target(name: "CurlKit", dependencies: ["CCurl"]),
        .target(name: "Observability", dependencies: ["JSONKit"]),
        .target(name: "MicroHTTP", dependencies: ["CMicroHTTPD", "CMHDErrorAnswers", "CZlib", "Concurrency", "JSONKit", "Observability"]),
        // libmicrohttpd's own error answers made problem+json (symbol interposition; see error_answers.c).
        .target(name: "CMHDErrorAnswers", dependencies: ["CMicroHTTPD"]),
        .target(name: "SQLiteKit", dependencies: ["CSQLite"]),
        .target(name: "SheetPolicy"),
        .target(name: "JSONKit"),
        .target(name: "SheetWire", dependencies: ["SheetPolicy", "JSONKit"]),
        .target(name: "SheetStore", dependencies: ["SheetPolicy", "Crypto", "Concurrency"]),
        .target(
            name: "SQLiteStore",
            dependencies: ["SQLiteKit", "SheetStore", "SheetPolicy", "Crypto", "Concurrency"],
            plugins: ["EmbedMigrations"]
        ),
        .target(name: "PostgresKit", dependencies: ["CLibPQ", "Concurrency"]),
        .target(
            name: "PostgresStore",
            dependencies: ["PostgresKit", "SheetStore", "SheetPolicy", "Crypto", "Concurrency"],
            plugins: ["EmbedMigrations"]
        ),
        .target(
            name: "SheetService",
            dependencies: [
                "MicroHTTP", "SheetStore", "SheetPolicy", "SheetWire", "JSONKit", "Crypto", "CurlKit", "Concurrency", "Observability",
            ],
            exclude: ["Preview", "Console"],
            plugins: ["EmbedPreview", "EmbedConsole"]
        ),
        .executableTarget(
            name: "sheetd",
            dependencies: [
                "SheetWire", "SheetService", "MicroHTTP", "SheetStore", "SQLiteStore", "PostgresStore", "SheetPolicy", "JSONKit", "Crypto",
                "Observability",
                "CJemalloc",
            ],
            plugins: ["EmbedOpenAPI"]
        ),
        // The executable's allocator (Debian's libjemalloc) and its options (the test bundle, which imports sheetd, links it too).
        .target(name: "CJemalloc", linkerSettings: [.linkedLibrary("jemalloc")]),
        // Floors: the client iOS 15; its UIKit adapter iOS 16 (custom detents), its SwiftUI modifier
        // iOS 16.4 (the presentation modifiers), each marked @available. PrivacyInfo.xcprivacy: what it sends.
        .target(name: "SheetdClient", exclude: ["CHANGELOG.md"], resources: [.copy("PrivacyInfo.xcprivacy")]),
        .target(name: "SheetdClientTesting", dependencies: ["SheetdClient"]),
        .target(name: "SheetdAdmin", dependencies: ["SheetdClient"]),

        // Build-time embedding of the top-level migrations/*.sql into the SQLiteStore module
        // (migrations/postgres/*.sql into PostgresStore).
        .executableTarget(name: "EmbedMigrationsTool"),
        .plugin(name: "EmbedMigrations", capability: .buildTool(), dependencies: ["EmbedMigrationsTool"]),
        // Build-time embedding of the top-level openapi.yaml into the executable (served at /openapi.yaml).
        .executableTarget(name: "EmbedFileTool"),
        .plugin(name: "EmbedOpenAPI", capability: .buildTool(), dependencies: ["EmbedFileTool"]),
        // Build-time embedding of the live preview page (Sources/SheetService/Preview, served at /preview).
        .plugin(name: "EmbedPreview", capability: .buildTool(), dependencies: ["EmbedFileTool"]),
        // The operator console (Sources/SheetService/Console, served at /console) and Debian's Chart.js
        // (libjs-chart.js, /usr/share/javascript/chart.js/chart.min.js), embedded at build time.
        .plugin(name: "EmbedConsole", capability: .buildTool(), dependencies: ["EmbedFileTool"]),

        // Helpers shared by the test targets (temporary directories, a raw-socket HTTP client).
        .target(name: "TestSupport", dependencies: ["MicroHTTP", "Concurrency"], path: "Tests/TestSupport"),
        .testTarget(name: "ConcurrencyTests", dependencies: ["Concurrency"]),
        .testTarget(name: "CryptoTests", dependencies: ["Crypto"]),
        .testTarget(name: "MicroHTTPTests", dependencies: ["MicroHTTP", "Concurrency", "JSONKit", "Observability", "TestSupport"]),
        .testTarget(name: "SQLiteKitTests", dependencies: ["SQLiteKit", "TestSupport"]),
        .testTarget(name: "JSONKitTests", dependencies: ["JSONKit", "TestSupport"]),
        .testTarget(name: "SheetPolicyTests", dependencies: ["SheetPolicy", "SheetWire", "JSONKit", "TestSupport"], resources: [.copy("Golden")]),
        // Every store test: the contract on both backends (PostgreSQL when make test starts one), and each
        // backend's own behaviour (WAL, checkpoints and file faults; replica versions and migrations).
        .testTarget(
            name: "SheetStoreTests",
            dependencies: [
                "SheetStore", "SQLiteStore", "PostgresStore", "PostgresKit", "SQLiteKit", "SheetPolicy", "Concurrency", "TestSupport",
            ]),
        .testTarget(
            name: "SheetServiceTests",
            dependencies: [
                "SheetService", "MicroHTTP", "SheetStore", "SQLiteStore", "SQLiteKit", "SheetPolicy", "SheetWire", "JSONKit", "Crypto", "Concurrency",
                "TestSupport", "PostgresStore", "PostgresKit", "CurlKit",
            ]),
        // Two replicas (services over their own PostgreSQL stores) on one database.
        .testTarget(
            name: "ReplicaTests",
            dependencies: [
                "SheetService", "PostgresStore", "PostgresKit", "SheetStore", "SQLiteStore", "SheetPolicy", "MicroHTTP", "Concurrency", "TestSupport",
            ]),
        // The client against a live in-process server; only the tests link both.
        // The command line and configuration of the sheetd executable (@testable import sheetd), and the
        // binary as an operator runs it (serve, signals, token, jwks, backup, restore, catalog check).
        .testTarget(
            name: "sheetdTests",
            dependencies: [
                "sheetd", "SheetService", "SheetWire", "MicroHTTP", "SheetStore", "SQLiteKit", "SheetPolicy", "Crypto", "Concurrency",
                "Observability", "TestSupport",
            ]),
        // The client's own logic, no server (the presenter, the plan, the fake): also in Package@swift-6.0.swift,
        // so the macOS workflow runs it.
        .testTarget(name: "SheetdClientUnitTests", dependencies: ["SheetdClient", "SheetdClientTesting"]),
        .testTarget(
            name: "SheetdClientTests",
            dependencies: [
                "SheetdClient", "SheetdClientTesting", "SheetdAdmin", "SheetService", "MicroHTTP", "SheetStore", "SQLiteStore", "TestSupport",
            ]),
    ]
)

let sharedSettings: [SwiftSetting] = [
    .treatAllWarnings(as: .error),
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]
// The server's release builds optimize across modules: the JSON writer, the caches and the policy's
// value types are generic or small, and called from other modules on every request. Not the client
// library's targets: a package whose product's targets carry unsafe flags cannot be a dependency.
let serverReleaseSettings: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]
for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + sharedSettings
    if !target.name.hasPrefix("SheetdClient") && target.name != "SheetdAdmin" && target.type != .test {
        target.swiftSettings = (target.swiftSettings ?? []) + serverReleaseSettings
    }
}

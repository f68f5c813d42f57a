import CJemalloc
import FoundationEssentials
import MicroHTTP
import Observability
import SheetPolicy
import SheetService
import SheetStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `sheetd serve`: open and migrate the store, load the catalog, serve until SIGTERM/SIGINT, then drain.
enum ServiceRunner {
    /// Runs the service; returns the process exit code.
    static func serve(_ configuration: Configuration, openAPIDocument: [UInt8]) -> Int32 {
        var configuration = configuration
        Log.configure(minimum: configuration.logLevel)
        do {
            try configuration.checkSecretsForProduction()
        } catch {
            printError(error.message)
            return 2
        }
        // Parse the catalog before touching the database: a bad file changes nothing.
        var catalogDefinitions: [SheetDefinitionList] = []
        if let path = configuration.catalogPath {
            do {
                catalogDefinitions = [
                    SheetDefinitionList(path: path, definitions: try CatalogFile.load(path: path, limits: configuration.catalogLimits))
                ]
            } catch {
                printError(error.message)
                return 2
            }
        }
        for warning in configuration.warnings { Log.write(.warn, warning) }
        if !configuration.hasUserTokenKeys || (configuration.adminToken == nil && configuration.adminTokens.isEmpty) {
            do {
                let secrets = try DevelopmentSecrets.loadOrCreate(besideDatabase: configuration.developmentSecretsAnchor)
                if !configuration.hasUserTokenKeys { configuration.jwtSecret = secrets.jwtSecret }
                if configuration.adminTokens.isEmpty { configuration.adminToken = configuration.adminToken ?? secrets.adminToken }
                printDevelopmentBanner(configuration, generated: secrets.generated)
            } catch {
                printError(error.message)
                return 2
            }
        }

        // Before the service starts its first thread (every thread from here on inherits the mask);
        // a signal from now on waits for `signals.wait()`, and one during start-up is answered once
        // listening, by draining.
        let signals = TerminationSignals()
        let started = ContinuousClock.now
        // The keys before anything else is opened: a malformed key file or an unreachable JWKS with
        // no other key stops start-up with the problem named.
        var keySettings = configuration.keySources
        keySettings.jwtSecret = configuration.jwtSecret
        let keySources = KeySources(keySettings)
        do {
            try keySources.load()
        } catch {
            printError("sheetd: \(error.message)")
            return 2
        }
        Log.write(.info, "user token keys", [("keys", .string(keySources.ring.keyDescriptions.joined(separator: ", ")))])
        let tokens = TokenVerifier(
            keys: keySources.ring, claimRules: configuration.claimRules, jwtSecret: configuration.jwtSecret,
            adminToken: configuration.adminToken ?? "", adminTokens: configuration.adminTokens, clockSkewSeconds: configuration.tokenClockSkewSeconds)
        let store: any SheetStore
        do {
            store = try configuration.openStore()
        } catch {
            printError("sheetd: cannot open \(configuration.databaseForDisplay): \(error)")
            return 1
        }
        let metrics = HTTPMetrics()
        let service: SheetService
        do {
            service = try SheetService(
                store: store, tokens: tokens, metrics: metrics, openAPIDocument: openAPIDocument,
                decisionCacheUsers: configuration.decisionCacheUsers, maxStreams: configuration.maxStreams,
                streamHeartbeatSeconds: configuration.streamHeartbeatSeconds,
                stateLimits: configuration.stateLimits, catalogLimits: configuration.catalogLimits,
                eventsPerUserPerMinute: configuration.eventsPerUserPerMinute, catalogRevisionsKept: configuration.catalogRevisions,
                catalogHistoryBytes: configuration.catalogHistoryBytes,
                conversionCapPerUser: configuration.conversionCapPerUser)
            for list in catalogDefinitions {
                if let violation = service.catalogLimitViolation(list.definitions) {
                    printError("sheetd: catalog \(list.path): \(violation)")
                    store.close()
                    return 2
                }
                do {
                    try service.loadCatalog(list.definitions)
                    Log.write(.info, "catalog loaded", [("path", .string(list.path)), ("sheets", .int(list.definitions.count))])
                } catch {
                    // A read-only database still serves reads; the file's definitions serve from memory.
                    guard case .unavailable(let why) = error else { throw error }
                    try service.useCatalogWithoutStoring(list.definitions)
                    Log.write(
                        .warn, "catalog not stored: the database takes no writes; serving it from the file",
                        [
                            ("path", .string(list.path)), ("sheets", .int(list.definitions.count)), ("error", .string(why)),
                        ])
                }
            }
        } catch {
            printError("sheetd: cannot load the catalog: \(error)")
            store.close()
            return 1
        }

        keySources.start()
        let server = HTTPServer(configuration: configuration.http, router: service.makeRouter(), metrics: metrics)
        do {
            try server.start()
        } catch {
            printError("sheetd: \(error)")  // HTTPServerError is the whole line ("cannot listen on host:port: why")
            store.close()
            return 1
        }
        let startupMicros = (ContinuousClock.now - started).microseconds
        Log.write(
            .info, "listening",
            [
                ("host", .string(configuration.http.host)), ("port", .int(server.port)), ("version", .string(SheetService.version)),
                ("db", .string(configuration.databaseForDisplay)), ("threads", .int(configuration.http.threads)),
                ("startup_us", .int(startupMicros)), ("allocator", .string(allocatorDescription)),
            ])

        var signal = signals.wait()
        // SIGHUP reloads the key files (and fetches the JWKS URL) and serving goes on.
        while signal == "SIGHUP" {
            Log.write(.info, "reloading keys", [("signal", .string(signal))])
            keySources.reload()
            signal = signals.wait()
        }
        Log.write(.info, "draining", [("signal", .string(signal)), ("timeout_s", .int(configuration.drainTimeoutSeconds))])
        service.beginDraining()
        server.beginDraining()
        server.stop(drainTimeout: .seconds(configuration.drainTimeoutSeconds))
        store.close()
        keySources.stop()
        Log.write(.info, "stopped", [("signal", .string(signal))])
        return 0
    }

    private struct SheetDefinitionList { var path: String; var definitions: [SheetDefinition] }

    private static func printDevelopmentBanner(_ c: Configuration, generated: Bool) {
        // A sample user token only when the development secret signs them (not with a JWKS or secrets file).
        let sample = c.jwtSecret.map {
            TokenVerifier(jwtSecret: $0, adminToken: "").issueUserToken(sub: "demo-user", now: Int64(time(nil)), ttl: 86_400)
        }
        printError(
            """
            WARNING: development secrets (\(generated ? "generated" : "reused") from \
            \(DevelopmentSecrets.path(besideDatabase: c.developmentSecretsAnchor))). \
            Set SHEETD_JWT_SECRET and SHEETD_ADMIN_TOKEN (and SHEETD_ENV=production) for real deployments.
              export SHEETD_ADMIN_TOKEN=\(c.adminToken ?? "(set by SHEETD_ADMIN_TOKENS_FILE)")
            """ + (sample.map { "\n  export SHEETD_USER_TOKEN=\($0)   # user demo-user, valid 24 h" } ?? ""))
    }
}

/// SIGTERM, SIGINT and SIGHUP, blocked in the calling thread from `init` on and taken by `wait()`.
///
/// Blocked, not caught: a blocked process-directed signal stays pending until `sigwait` takes it,
/// whatever the other threads do. So `init` must run before any thread that is not libdispatch's
/// (which block signals themselves) is started: threads inherit the mask of the thread that starts
/// them. (A libdispatch signal source once missed a first SIGTERM under load: its Linux emulation
/// runs a handler on whichever thread the kernel picks, re-raises to its manager thread and needs a
/// global-queue thread for the event handler.)
final class TerminationSignals {
    private let set: sigset_t

    init() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGHUP)
        pthread_sigmask(SIG_BLOCK, &set, nil)
        self.set = set
    }

    /// Blocks until a signal arrived (or had arrived) and names it. Signals after it stay pending and
    /// change nothing.
    func wait() -> String {
        var set = self.set
        var number: Int32 = 0
        while sigwait(&set, &number) != 0 {}
        return number == SIGINT ? "SIGINT" : number == SIGHUP ? "SIGHUP" : "SIGTERM"
    }
}

func printError(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

extension Duration {
    var microseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000)
    }
}

/// The allocator serving this process, for the "listening" line: jemalloc's version and the arenas
/// its compiled-in options asked for ("unknown" if jemalloc does not answer `mallctl`).
let allocatorDescription: String = {
    var buffer = [CChar](repeating: 0, count: 96)
    guard cjemalloc_describe(&buffer, buffer.count) == 0 else { return "unknown" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}()

import FoundationEssentials
import MicroHTTP
import Observability
import SQLiteStore
import SheetPolicy
import SheetService
import SheetStore
import SheetWire

/// A configuration problem: reported as one line on stderr, exit code 2.
struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// Everything `sheetd serve` needs, from flags and environment variables with the same meaning
/// (a flag wins over its variable).
struct Configuration: Sendable {
    enum Environment: String, Sendable { case development, production }

    var http = HTTPServerConfiguration()
    var databasePath = "./data/sheetd.sqlite"
    var synchronous: SynchronousMode = .normal
    var logLevel: LogLevel = .info
    var catalogPath: String?
    var jwtSecret: String?
    var adminToken: String?
    /// Named admin tokens (`SHEETD_ADMIN_TOKENS_FILE`), beside `adminToken` (named `admin`).
    var adminTokens: [AdminToken] = []
    /// Where user-token keys come from besides `jwtSecret` (`SHEETD_JWT_SECRETS_FILE`, `SHEETD_JWKS_FILE`, `SHEETD_JWKS_URL`).
    var keySources = KeySourceSettings()
    /// What user tokens' claims must say (`SHEETD_JWT_ISSUER`, `SHEETD_JWT_AUDIENCE`, `SHEETD_JWT_SUBJECT_CLAIM`, `SHEETD_ADMIN_CLAIM`).
    var claimRules = TokenClaimRules()
    /// Things that work but should change (plain tokens in the admin tokens file), logged at start-up.
    var warnings: [String] = []
    /// Catalog revisions kept (`SHEETD_CATALOG_REVISIONS`).
    var catalogRevisions = CatalogRevision.defaultKept
    /// Bytes of sheet definitions the catalog history keeps (`SHEETD_CATALOG_HISTORY_BYTES`).
    var catalogHistoryBytes = CatalogRevision.defaultHistoryBytes
    /// The most conversions one user counts per experiment (`SHEETD_EXPERIMENT_CONVERSION_CAP`).
    var conversionCapPerUser = SheetPolicy.defaultConversionCapPerUser
    var environment: Environment = .development
    var drainTimeoutSeconds = 10
    var tokenClockSkewSeconds = 60
    var decisionCacheUsers = ServiceDefaults.decisionCacheUsers
    /// PostgreSQL reader connections (`SHEETD_DB_POOL`); nil: two per HTTP worker.
    var databasePool: Int?
    var maxStreams = ServiceDefaults.maxStreams
    var streamHeartbeatSeconds = ServiceDefaults.streamHeartbeatSeconds
    var stateLimits = UserStateLimits()
    var catalogLimits = CatalogLimits()
    var eventsPerUserPerMinute = ServiceDefaults.eventsPerUserPerMinute
    /// How long rollups and processed event ids are kept (the store's defaults unless set).
    var retention = StoreRetention.default

    init() {}

    /// One setting of `sheetd serve`: a flag and the environment variable with the same meaning.
    struct Option: Sendable {
        var flag: String
        var variable: String
        /// What the setting means, without its default.
        var meaning: String
        /// The value without the flag or the variable ("" when there is no fixed one, as for secrets).
        var defaultValue: String

        init(_ flag: String, _ variable: String, _ meaning: String, default defaultValue: String) {
            self.flag = flag
            self.variable = variable
            self.meaning = meaning
            self.defaultValue = defaultValue
        }
    }

    /// One row per setting: the flag, its variable, what it means and its default (drives `--help`;
    /// docs/configuration.md says the same at more length, and scripts/docs-test.py checks it has every row).
    static let options: [Option] = [
        Option("--host", "SHEETD_HOST", "IPv4 address to listen on", default: "127.0.0.1"),
        Option("--port", "SHEETD_PORT", "TCP port, 0 picks a free one", default: "8080"),
        Option("--db", "SHEETD_DB", "SQLite file (directory created) or postgres:// URL", default: "./data/sheetd.sqlite"),
        Option("--db-pool", "SHEETD_DB_POOL", "PostgreSQL reader connections", default: "2 x threads"),
        Option("--catalog", "SHEETD_CATALOG", "JSON catalog upserted at start", default: "none"),
        Option("--threads", "SHEETD_THREADS", "HTTP worker threads", default: "8, or the number of cores when more"),
        Option("--max-body", "SHEETD_MAX_BODY", "request body cap in bytes, 413 above", default: "65536"),
        Option("--synchronous", "SHEETD_SYNCHRONOUS", "SQLite synchronous: NORMAL or FULL", default: "NORMAL"),
        Option("--log-level", "SHEETD_LOG_LEVEL", "debug, info, warn (or warning) or error", default: "info"),
        Option("--access-log", "SHEETD_ACCESS_LOG", "one JSON line per request: true or false", default: "true"),
        Option("--connection-limit", "SHEETD_CONNECTION_LIMIT", "open connections at most, streams included", default: "16384"),
        Option("--idle-timeout", "SHEETD_IDLE_TIMEOUT", "seconds before an idle connection is closed", default: "30"),
        Option("--drain-timeout", "SHEETD_DRAIN_TIMEOUT", "seconds in-flight requests get on SIGTERM", default: "10"),
        Option("--decision-cache", "SHEETD_DECISION_CACHE", "users whose decisions are kept in memory, 0 turns it off", default: "65536"),
        Option("--max-streams", "SHEETD_MAX_STREAMS", "open decision streams per process, 503 above", default: "10000"),
        Option("--stream-heartbeat", "SHEETD_STREAM_HEARTBEAT", "seconds between heartbeats of an idle decision stream", default: "15"),
        Option("--max-containers-per-user", "SHEETD_MAX_CONTAINERS_PER_USER", "containers (and filters) kept per user, 409 beyond", default: "256"),
        Option("--max-stack-depth", "SHEETD_MAX_STACK_DEPTH", "sheets on a user's stack, 409 beyond", default: "32"),
        Option("--max-content-heights-per-user", "SHEETD_MAX_CONTENT_HEIGHTS_PER_USER", "measured heights kept per user, 409 beyond", default: "512"),
        Option("--max-impressions-per-user", "SHEETD_MAX_IMPRESSIONS_PER_USER", "impression times kept per user, 409 beyond", default: "1024"),
        Option(
            "--max-events-per-user-per-minute", "SHEETD_MAX_EVENTS_PER_USER_PER_MINUTE",
            "events one user may report per minute, 429 beyond; 0 turns it off", default: "600"),
        Option("--max-sheets", "SHEETD_MAX_SHEETS", "sheets in the catalog, 409 beyond", default: "1000"),
        Option("--max-sheets-per-screen", "SHEETD_MAX_SHEETS_PER_SCREEN", "sheets naming one screen, 409 beyond", default: "100"),
        Option(
            "--max-stream-buffer", "SHEETD_MAX_STREAM_BUFFER", "bytes all decision streams may hold for slow readers together", default: "67108864"),
        Option("--env", "SHEETD_ENV", "development or production", default: "development"),
        Option("--jwt-secret", "SHEETD_JWT_SECRET", "HS256 secret for user tokens; *_FILE reads it from a file", default: ""),
        Option("--admin-token", "SHEETD_ADMIN_TOKEN", "bearer token with every right; *_FILE reads it from a file", default: ""),
        Option("--admin-tokens-file", "SHEETD_ADMIN_TOKENS_FILE", "file of named admin tokens, one 'name sha256:<hex>' a line", default: "none"),
        Option("--jwt-secrets-file", "SHEETD_JWT_SECRETS_FILE", "HS256 secrets by kid, one 'kid secret' a line (rotation)", default: "none"),
        Option("--jwks-file", "SHEETD_JWKS_FILE", "JWKS document of public keys; reloaded on change or SIGHUP", default: "none"),
        Option("--jwks-url", "SHEETD_JWKS_URL", "https:// URL of the identity provider's JWKS", default: "none"),
        Option("--jwks-refresh", "SHEETD_JWKS_REFRESH", "seconds between fetches of the JWKS URL", default: "300"),
        Option("--jwt-issuer", "SHEETD_JWT_ISSUER", "the iss user tokens must carry (exact match)", default: "any"),
        Option("--jwt-audience", "SHEETD_JWT_AUDIENCE", "the aud user tokens must carry (or contain)", default: "any"),
        Option("--jwt-subject-claim", "SHEETD_JWT_SUBJECT_CLAIM", "the claim that names the user", default: "sub"),
        Option("--admin-claim", "SHEETD_ADMIN_CLAIM", "CLAIM=VALUE making a user token an admin's, e.g. roles=sheetd-admin", default: "none"),
        Option("--catalog-revisions", "SHEETD_CATALOG_REVISIONS", "catalog revisions kept, the oldest dropped beyond", default: "1000"),
        Option(
            "--catalog-history-bytes", "SHEETD_CATALOG_HISTORY_BYTES",
            "bytes of sheet definitions the catalog history keeps, the oldest revisions dropped beyond (never the newest)",
            default: "268435456"),
        Option(
            "--experiment-conversion-cap", "SHEETD_EXPERIMENT_CONVERSION_CAP",
            "conversions one user counts per experiment (for an arm or unattributed)", default: "10"),
        Option(
            "--rollup-retention-days", "SHEETD_ROLLUP_RETENTION_DAYS", "days of hour rollups the stats' since can reach; older fold into totals",
            default: "400"),
        Option("--event-id-retention-days", "SHEETD_EVENT_ID_RETENTION_DAYS", "days a processed event id is remembered for replays", default: "7"),
        Option("--event-ids-per-user", "SHEETD_EVENT_IDS_PER_USER", "a user's latest processed event ids remembered, older forgotten", default: "64"),
        Option("--jwt-leeway", "SHEETD_JWT_LEEWAY", "seconds of clock skew allowed on token exp/nbf and event occurredAt", default: "60"),
    ]

    /// Parses `arguments` (after the subcommand) and `environment`. Unknown flags are errors.
    static func parse(arguments: [String], environment env: [String: String]) throws(ConfigurationError) -> Configuration {
        var values: [String: String] = [:]
        for option in options {
            if let v = env[option.variable] { values[option.flag] = v }
            // A *_FILE variable wins over the plain one: it is the more deliberate setting (an
            // image's default SHEETD_DB must not shadow the SHEETD_DB_FILE a deployment mounts).
            let fileVariable = option.variable + "_FILE"
            if let path = env[fileVariable] {
                guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
                    throw ConfigurationError("\(fileVariable): cannot read \(path)")
                }
                values[option.flag] = text.trimmed()
            }
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            var flag = argument
            var value: String?
            if let eq = argument.firstIndex(of: "=") {
                flag = String(argument[..<eq])
                value = String(argument[argument.index(after: eq)...])
            }
            guard options.contains(where: { $0.flag == flag }) else {
                throw ConfigurationError("unknown option \(argument) (see sheetd --help)")
            }
            if value == nil {
                index += 1
                guard index < arguments.count else { throw ConfigurationError("\(flag) needs a value") }
                value = arguments[index]
            }
            values[flag] = value
            index += 1
        }

        var c = Configuration()
        if let v = values["--host"] {
            guard isIPv4(v) else { throw ConfigurationError("--host/SHEETD_HOST: '\(v)' is not an IPv4 address") }
            c.http.host = v
        }
        if let v = values["--port"] { c.http.port = try integer(v, "--port/SHEETD_PORT", 0...65535) }
        if let v = values["--db"] {
            guard !v.isEmpty else { throw ConfigurationError("--db/SHEETD_DB: empty path") }
            c.databasePath = v
        }
        if let v = values["--db-pool"] { c.databasePool = try integer(v, "--db-pool/SHEETD_DB_POOL", 1...1000) }
        if let v = values["--catalog"], !v.isEmpty { c.catalogPath = v }
        if let v = values["--threads"] { c.http.threads = try integer(v, "--threads/SHEETD_THREADS", 1...256) }
        if let v = values["--max-body"] { c.http.maxBodyBytes = try integer(v, "--max-body/SHEETD_MAX_BODY", 1024...16_777_216) }
        if let v = values["--synchronous"] {
            guard let mode = SynchronousMode(configValue: v) else {
                throw ConfigurationError("--synchronous/SHEETD_SYNCHRONOUS: '\(v)' is not NORMAL or FULL")
            }
            c.synchronous = mode
        }
        if let v = values["--log-level"] {
            // "warning" is what other tools call it.
            let name = v.lowercased() == "warning" ? "warn" : v.lowercased()
            guard let level = LogLevel(rawValue: name) else {
                throw ConfigurationError("--log-level/SHEETD_LOG_LEVEL: '\(v)' is not debug, info, warn (or warning) or error")
            }
            c.logLevel = level
        }
        if let v = values["--access-log"] { c.http.accessLog = try boolean(v, "--access-log/SHEETD_ACCESS_LOG") }
        if let v = values["--connection-limit"] {
            c.http.connectionLimit = try integer(v, "--connection-limit/SHEETD_CONNECTION_LIMIT", 16...1_000_000)
        }
        if let v = values["--idle-timeout"] { c.http.idleTimeoutSeconds = try integer(v, "--idle-timeout/SHEETD_IDLE_TIMEOUT", 1...3600) }
        if let v = values["--drain-timeout"] { c.drainTimeoutSeconds = try integer(v, "--drain-timeout/SHEETD_DRAIN_TIMEOUT", 0...600) }
        if let v = values["--decision-cache"] {
            c.decisionCacheUsers = try integer(v, "--decision-cache/SHEETD_DECISION_CACHE", 0...16_777_216)
        }
        if let v = values["--max-streams"] { c.maxStreams = try integer(v, "--max-streams/SHEETD_MAX_STREAMS", 0...1_000_000) }
        if let v = values["--stream-heartbeat"] {
            c.streamHeartbeatSeconds = try integer(v, "--stream-heartbeat/SHEETD_STREAM_HEARTBEAT", 1...3600)
        }
        if let v = values["--max-containers-per-user"] {
            c.stateLimits.containers = try integer(v, "--max-containers-per-user/SHEETD_MAX_CONTAINERS_PER_USER", 1...65_536)
        }
        if let v = values["--max-stack-depth"] {
            c.stateLimits.stackDepth = try integer(v, "--max-stack-depth/SHEETD_MAX_STACK_DEPTH", 1...1024)
        }
        if let v = values["--max-content-heights-per-user"] {
            c.stateLimits.contentHeights = try integer(v, "--max-content-heights-per-user/SHEETD_MAX_CONTENT_HEIGHTS_PER_USER", 1...65_536)
        }
        if let v = values["--max-impressions-per-user"] {
            c.stateLimits.impressions = try integer(v, "--max-impressions-per-user/SHEETD_MAX_IMPRESSIONS_PER_USER", 1...65_536)
        }
        if let v = values["--max-events-per-user-per-minute"] {
            c.eventsPerUserPerMinute = try integer(v, "--max-events-per-user-per-minute/SHEETD_MAX_EVENTS_PER_USER_PER_MINUTE", 0...1_000_000)
        }
        if let v = values["--max-sheets"] { c.catalogLimits.sheets = try integer(v, "--max-sheets/SHEETD_MAX_SHEETS", 1...100_000) }
        if let v = values["--max-sheets-per-screen"] {
            c.catalogLimits.sheetsPerScreen = try integer(v, "--max-sheets-per-screen/SHEETD_MAX_SHEETS_PER_SCREEN", 1...10_000)
        }
        if let v = values["--max-stream-buffer"] {
            c.http.streamBufferBudgetBytes = try integer(v, "--max-stream-buffer/SHEETD_MAX_STREAM_BUFFER", 262_144...17_179_869_184)
        }
        if let v = values["--env"] {
            guard let e = Environment(rawValue: v.lowercased()) else {
                throw ConfigurationError("--env/SHEETD_ENV: '\(v)' is not development or production")
            }
            c.environment = e
        }
        if let v = values["--jwt-leeway"] { c.tokenClockSkewSeconds = try integer(v, "--jwt-leeway/SHEETD_JWT_LEEWAY", 0...3600) }
        if let v = values["--jwt-secret"], !v.isEmpty { c.jwtSecret = v }
        if let v = values["--admin-token"], !v.isEmpty {
            guard v.utf8.count <= TokenVerifier.maximumTokenBytes else {
                throw ConfigurationError(
                    "--admin-token/SHEETD_ADMIN_TOKEN: the token is \(v.utf8.count) bytes; the server refuses bearer tokens over "
                        + "\(TokenVerifier.maximumTokenBytes) bytes, so it could never be used")
            }
            c.adminToken = v
        }
        if let v = values["--admin-tokens-file"], !v.isEmpty {
            (c.adminTokens, c.warnings) = try adminTokens(fromFile: v, besideAdminToken: c.adminToken != nil)
        }
        try c.parseKeySettings(values)
        if let v = values["--catalog-revisions"] {
            c.catalogRevisions = try integer(v, "--catalog-revisions/SHEETD_CATALOG_REVISIONS", 1...1_000_000)
        }
        if let v = values["--catalog-history-bytes"] {
            c.catalogHistoryBytes = Int64(try integer(v, "--catalog-history-bytes/SHEETD_CATALOG_HISTORY_BYTES", 0...(1 << 50)))
        }
        if let v = values["--experiment-conversion-cap"] {
            c.conversionCapPerUser = try integer(v, "--experiment-conversion-cap/SHEETD_EXPERIMENT_CONVERSION_CAP", 1...1_000_000)
        }
        if let v = values["--rollup-retention-days"] {
            c.retention.rollupSeconds = Int64(try integer(v, "--rollup-retention-days/SHEETD_ROLLUP_RETENTION_DAYS", 1...36_500)) * 86_400
        }
        if let v = values["--event-id-retention-days"] {
            // At least a day: the API promises that a retry within 24 hours is recognised.
            c.retention.eventIdSeconds = Int64(try integer(v, "--event-id-retention-days/SHEETD_EVENT_ID_RETENTION_DAYS", 1...365)) * 86_400
        }
        if let v = values["--event-ids-per-user"] {
            c.retention.eventIdsPerUser = try integer(v, "--event-ids-per-user/SHEETD_EVENT_IDS_PER_USER", 1...100_000)
        }
        return c
    }

    /// The `name sha256:<hex>` (or `name token`) lines of `path` (blank lines and `#` comments
    /// skipped). Names are 1 to 64 letters, digits, `.`, `_` or `-`, each used once (`admin` is
    /// `SHEETD_ADMIN_TOKEN`'s name when that is set); a token (or digest) is used once too, and a token
    /// fits the server's 4 096-byte limit. Lines may end in CRLF (a file saved on Windows); a carriage
    /// return anywhere else is refused. A plain token works, with a warning: the file should hold digests.
    /// Every message names the line, never a token.
    static func adminTokens(
        fromFile path: String, besideAdminToken: Bool = false
    ) throws(ConfigurationError) -> (
        tokens: [AdminToken], warnings: [String]
    ) {
        let variable = "--admin-tokens-file/SHEETD_ADMIN_TOKENS_FILE"
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("\(variable): cannot read \(path)") }
        var tokens: [AdminToken] = []
        var plainLines: [Int] = []
        // Split on LF bytes: a Swift String takes CRLF as one Character, so a CRLF file would be one line.
        for (index, rawLine) in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            var bytes = rawLine[...]
            if bytes.last == UInt8(ascii: "\r") { bytes = bytes.dropLast() }
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw ConfigurationError("\(variable): line \(number) of \(path) is not UTF-8")
            }
            guard !bytes.contains(UInt8(ascii: "\r")) else {
                throw ConfigurationError(
                    "\(variable): line \(number) of \(path) holds a carriage return (CR) inside the line; lines end in LF or CRLF")
            }
            let line = text.trimmed()
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            // The line number only: a message never shows a token.
            guard parts.count == 2 else { throw ConfigurationError("\(variable): line \(number) of \(path) is not 'name sha256:<hex>'") }
            let name = String(parts[0])
            guard (1...64).contains(name.count), name.utf8.allSatisfy(Self.isNameByte)
            else { throw ConfigurationError("\(variable): line \(number): a name is 1 to 64 letters, digits, '.', '_' or '-'") }
            guard !tokens.contains(where: { $0.name == name }) else {
                throw ConfigurationError("\(variable): line \(number): the name \(name) is used twice")
            }
            guard !(besideAdminToken && name == "admin") else {
                throw ConfigurationError(
                    "\(variable): line \(number): the name admin is SHEETD_ADMIN_TOKEN's while that is set; name this token otherwise")
            }
            let token: AdminToken
            if parts[1].hasPrefix("sha256:") {
                guard let digest = Self.hexBytes(parts[1].dropFirst(7)), digest.count == 32 else {
                    throw ConfigurationError("\(variable): line \(number): sha256: must be followed by 64 hex digits")
                }
                token = AdminToken(name: name, digest: digest)
            } else {
                guard parts[1].utf8.count <= TokenVerifier.maximumTokenBytes else {
                    throw ConfigurationError(
                        "\(variable): line \(number): the token is \(parts[1].utf8.count) bytes; the server refuses bearer tokens over "
                            + "\(TokenVerifier.maximumTokenBytes) bytes, so it could never be used")
                }
                token = AdminToken(name: name, token: String(parts[1]))
                plainLines.append(number)
            }
            guard !tokens.contains(where: { $0.digest == token.digest }) else {
                throw ConfigurationError("\(variable): line \(number): a token is used twice")
            }
            tokens.append(token)
        }
        let warnings =
            plainLines.isEmpty
            ? []
            : [
                "\(path): line\(plainLines.count == 1 ? "" : "s") \(plainLines.map(String.init).joined(separator: ", ")) hold\(plainLines.count == 1 ? "s" : "") a plain admin token; "
                    + "store its digest instead ('name sha256:<hex>', the hex from: printf %s TOKEN | sha256sum)"
            ]
        return (tokens, warnings)
    }

    /// Lower- or upper-case hex digits as bytes; nil for anything else or an odd count.
    static func hexBytes(_ text: Substring) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[i]), let low = hexValue(digits[i + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: b - 0x30
        case 0x61...0x66: b - 0x61 + 10
        case 0x41...0x46: b - 0x41 + 10
        default: nil
        }
    }

    /// The key sources and claim rules of user tokens.
    mutating func parseKeySettings(_ values: [String: String]) throws(ConfigurationError) {
        if environment == .production { keySources.minimumSecretLength = Self.minimumSecretLength }
        if let v = values["--jwt-secrets-file"], !v.isEmpty { keySources.secretsFile = v }
        if let v = values["--jwks-file"], !v.isEmpty { keySources.jwksFile = v }
        if let v = values["--jwks-url"], !v.isEmpty {
            guard let url = Self.jwksURL(v) else {
                throw ConfigurationError(
                    "--jwks-url/SHEETD_JWKS_URL: '\(v)' is not an https:// URL (plain http:// only on 127.0.0.1, ::1 or localhost)")
            }
            keySources.jwksURL = url
        }
        if let v = values["--jwks-refresh"] { keySources.refreshSeconds = try Self.integer(v, "--jwks-refresh/SHEETD_JWKS_REFRESH", 10...86_400) }
        if let v = values["--jwt-issuer"], !v.isEmpty { claimRules.issuer = v }
        if let v = values["--jwt-audience"], !v.isEmpty { claimRules.audience = v }
        if let v = values["--jwt-subject-claim"] {
            guard !v.isEmpty, v.utf8.count <= 256 else {
                throw ConfigurationError("--jwt-subject-claim/SHEETD_JWT_SUBJECT_CLAIM: a claim name of 1 to 256 bytes")
            }
            claimRules.subjectClaim = v
        }
        if let v = values["--admin-claim"], !v.isEmpty {
            guard let eq = v.firstIndex(of: "="), eq != v.startIndex, v.index(after: eq) != v.endIndex else {
                throw ConfigurationError("--admin-claim/SHEETD_ADMIN_CLAIM: '\(v)' is not CLAIM=VALUE (e.g. roles=sheetd-admin)")
            }
            claimRules.adminClaim = (String(v[..<eq]), String(v[v.index(after: eq)...]))
        }
    }

    /// `text` when it is an https:// URL, or an http:// URL to this machine (a JWKS fetched in the
    /// clear from elsewhere could be swapped on the way, and with it every key).
    static func jwksURL(_ text: String) -> String? {
        let lower = text.lowercased()
        if lower.hasPrefix("https://") && lower.count > 8 { return text }
        guard lower.hasPrefix("http://") else { return nil }
        let authority = lower.dropFirst(7).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }) + "]" : String(authority.prefix { $0 != ":" })
        return ["127.0.0.1", "localhost", "[::1]"].contains(host) ? text : nil
    }

    /// Whether user tokens have keys of their own configuration (else a development secret is made).
    var hasUserTokenKeys: Bool {
        jwtSecret != nil || keySources.secretsFile != nil || keySources.jwksFile != nil || keySources.jwksURL != nil
    }

    private static func isNameByte(_ b: UInt8) -> Bool {
        (0x30...0x39).contains(b) || (0x41...0x5A).contains(b) || (0x61...0x7A).contains(b) || b == 0x2E || b == 0x5F || b == 0x2D
    }

    /// Secrets shorter than this are refused in production.
    static let minimumSecretLength = 32

    /// In production, missing or weak secrets stop start-up.
    func checkSecretsForProduction() throws(ConfigurationError) {
        guard environment == .production else { return }
        // Named admin tokens may stand in for the single one; each must be as strong (a digest's
        // token cannot be checked). Key files and a JWKS stand in for the single JWT secret.
        var secrets: [(String, String?)] = []
        if jwtSecret != nil || (keySources.secretsFile == nil && keySources.jwksFile == nil && keySources.jwksURL == nil) {
            secrets.append(("SHEETD_JWT_SECRET", jwtSecret))
        }
        if adminToken != nil || adminTokens.isEmpty { secrets.append(("SHEETD_ADMIN_TOKEN", adminToken)) }
        secrets += adminTokens.compactMap { admin in admin.token.map { ("SHEETD_ADMIN_TOKENS_FILE (\(admin.name))", $0) } }
        for (name, value) in secrets {
            guard let value else { throw ConfigurationError("\(name) is required when SHEETD_ENV=production") }
            guard value.utf8.count >= Self.minimumSecretLength, Set(value.utf8).count >= 8 else {
                throw ConfigurationError("\(name) is too weak for production: use at least \(Self.minimumSecretLength) random characters")
            }
        }
    }

    static func integer(_ text: String, _ name: String, _ range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
        guard let v = Int(text.trimmed()), range.contains(v) else {
            throw ConfigurationError("\(name): '\(text)' is not a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    static func boolean(_ text: String, _ name: String) throws(ConfigurationError) -> Bool {
        switch text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ConfigurationError("\(name): '\(text)' is not true or false")
        }
    }

    static func isIPv4(_ text: String) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4
            && parts.allSatisfy { p in
                !p.isEmpty && p.count <= 3 && p.allSatisfy(\.isASCII) && p.allSatisfy(\.isNumber) && Int(p)! <= 255
            }
    }
}

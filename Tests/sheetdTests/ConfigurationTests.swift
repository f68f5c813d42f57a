import Foundation
import MicroHTTP
import Observability
import SheetService
import SheetStore
import TestSupport
import Testing

@testable import sheetd

/// `Configuration.parse`: how `sheetd serve`'s flags and variables are read and checked, and that
/// what they set reaches the store and the service.
@Suite(.serialized) struct ConfigurationTests {
    /// `SHEETD_DB_FILE` wins over `SHEETD_DB` (the image sets `SHEETD_DB`; a deployment mounts the
    /// URL as a secret file); the flag still wins over both.
    @Test func fileVariablesWinOverPlainOnes() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-dbfile")
        defer { dir.remove() }
        try Data("postgres://sheetd:pw@db:5432/sheetd\n".utf8).write(to: URL(fileURLWithPath: dir.file("database_url")))
        let env = ["SHEETD_DB": "/data/sheetd.sqlite", "SHEETD_DB_FILE": dir.file("database_url")]
        #expect(try Configuration.parse(arguments: [], environment: env).databasePath == "postgres://sheetd:pw@db:5432/sheetd")
        #expect(try Configuration.parse(arguments: ["--db", "x.sqlite"], environment: env).databasePath == "x.sqlite")
        #expect(try Configuration.parse(arguments: [], environment: ["SHEETD_DB": "y.sqlite"]).databasePath == "y.sqlite")
    }

    /// `warning` (what other tools call it) means `warn`, as a flag and as a variable; other names
    /// are still refused.
    @Test func logLevelWarningMeansWarn() throws {
        #expect(try Configuration.parse(arguments: ["--log-level", "warning"], environment: [:]).logLevel == .warn)
        #expect(try Configuration.parse(arguments: ["--log-level=WARNING"], environment: [:]).logLevel == .warn)
        #expect(try Configuration.parse(arguments: [], environment: ["SHEETD_LOG_LEVEL": "warning"]).logLevel == .warn)
        #expect(try Configuration.parse(arguments: [], environment: ["SHEETD_LOG_LEVEL": "warn"]).logLevel == .warn)
        #expect(throws: ConfigurationError.self) { try Configuration.parse(arguments: ["--log-level", "verbose"], environment: [:]) }
    }

    /// The retention flags reach the store: with `--event-ids-per-user 2` the third-newest id of a
    /// user is forgotten (a retry of it applies again), the two newest still replay.
    @Test func retentionFlagsReachTheStore() throws {
        let defaults = try Configuration.parse(arguments: [], environment: [:])
        #expect(defaults.retention == .default)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let c = try Configuration.parse(
            arguments: ["--db", directory.file(), "--event-ids-per-user", "2", "--rollup-retention-days=30"],
            environment: ["SHEETD_EVENT_ID_RETENTION_DAYS": "2"])
        #expect(c.retention == StoreRetention(rollupSeconds: 30 * 86_400, eventIdSeconds: 2 * 86_400, eventIdsPerUser: 2))
        for bad in [["--event-ids-per-user", "0"], ["--event-id-retention-days", "0"], ["--rollup-retention-days", "x"]] {
            #expect(throws: ConfigurationError.self) { try Configuration.parse(arguments: bad, environment: [:]) }
        }
        let store = try c.openStore()
        defer { store.close() }
        for id in ["a", "b", "c"] { _ = try store.update(userId: "u", eventId: id) { _ in Array(id.utf8) } }
        #expect(try store.update(userId: "u", eventId: "a") { _ in [] }.replayed == false)
        #expect(try store.update(userId: "u", eventId: "c") { _ in [] }.replayed == true)
    }

    /// The per-user state limits are settings: flags and variables, validated.
    @Test func stateLimitsAreConfigured() throws {
        let c = try Configuration.parse(
            arguments: ["--max-containers-per-user", "10", "--max-stack-depth=4"],
            environment: ["SHEETD_MAX_CONTENT_HEIGHTS_PER_USER": "7", "SHEETD_MAX_CONTAINERS_PER_USER": "99"])
        #expect(c.stateLimits == UserStateLimits(containers: 10, stackDepth: 4, contentHeights: 7))
        #expect(try Configuration.parse(arguments: [], environment: [:]).stateLimits == UserStateLimits())
        for bad in ["0", "-1", "x", "70000"] {
            #expect(throws: ConfigurationError.self) { try Configuration.parse(arguments: ["--max-containers-per-user", bad], environment: [:]) }
        }
        #expect(throws: ConfigurationError.self) { try Configuration.parse(arguments: [], environment: ["SHEETD_MAX_STACK_DEPTH": "0"]) }
    }

    /// The decision cache's size is a setting; 0 turns it off, a negative size is refused.
    @Test func decisionCacheIsASetting() throws {
        let c = try Configuration.parse(arguments: ["--decision-cache", "0"], environment: [:])
        #expect(c.decisionCacheUsers == 0)
        #expect(try Configuration.parse(arguments: [], environment: ["SHEETD_DECISION_CACHE": "1000"]).decisionCacheUsers == 1000)
        #expect(throws: ConfigurationError.self) { try Configuration.parse(arguments: ["--decision-cache", "-1"], environment: [:]) }
    }

    /// The token leeway is a setting (60 seconds unless set); the flag wins over the variable.
    @Test func jwtLeewayIsASetting() throws {
        #expect(try Configuration.parse(arguments: [], environment: [:]).tokenClockSkewSeconds == 60)
        #expect(try Configuration.parse(arguments: ["--jwt-leeway", "5"], environment: [:]).tokenClockSkewSeconds == 5)
        #expect(try Configuration.parse(arguments: [], environment: ["SHEETD_JWT_LEEWAY": "0"]).tokenClockSkewSeconds == 0)
        #expect(try Configuration.parse(arguments: ["--jwt-leeway=7"], environment: ["SHEETD_JWT_LEEWAY": "9"]).tokenClockSkewSeconds == 7)
        for bad in ["-1", "3601", "1m", ""] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try Configuration.parse(arguments: ["--jwt-leeway", bad], environment: [:]) }
        }
    }

    /// `SHEETD_ADMIN_TOKENS_FILE`: `name token` lines, comments and blank lines skipped, beside the
    /// single admin token; from the flag or the variable.
    @Test func namedAdminTokensAreReadFromTheFile() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-tokens")
        defer { dir.remove() }
        let path = try AdminTokensFiles.write("# people\nalice \(AdminTokensFiles.aliceToken)\n\n  bob\t\(AdminTokensFiles.bobToken)  \n", in: dir)
        let c = try Configuration.parse(arguments: ["--admin-tokens-file", path], environment: ["SHEETD_ADMIN_TOKEN": "plain"])
        #expect(
            c.adminTokens == [
                AdminToken(name: "alice", token: AdminTokensFiles.aliceToken), AdminToken(name: "bob", token: AdminTokensFiles.bobToken),
            ])
        #expect(c.adminToken == "plain")
        let fromVariable = try Configuration.parse(arguments: [], environment: ["SHEETD_ADMIN_TOKENS_FILE": path])
        #expect(fromVariable.adminTokens.count == 2)
    }

    /// A bad admin tokens file is an error naming the line, never a token; a missing file is an error.
    @Test(arguments: AdminTokensFiles.bad)
    func aBadAdminTokensFileNamesTheLineNotTheToken(_ text: String) throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-admin-tokens-bad")
        defer { dir.remove() }
        let path = try AdminTokensFiles.write(text, in: dir)
        #expect {
            try Configuration.parse(arguments: ["--admin-tokens-file", path], environment: [:])
        } throws: { error in
            let message = (error as? ConfigurationError)?.message ?? ""
            return message.contains("line") && !message.contains("token-") && !message.contains("same")
        }
        #expect(throws: ConfigurationError.self) {
            try Configuration.parse(arguments: ["--admin-tokens-file", dir.file("missing")], environment: [:])
        }
    }

    /// In production, named tokens may replace SHEETD_ADMIN_TOKEN, and each must be strong.
    @Test func productionChecksEveryNamedToken() throws {
        var c = Configuration()
        c.environment = .production
        c.jwtSecret = "j-0123456789abcdefghijklmnopqrstuvwxyz"
        c.adminTokens = [AdminToken(name: "alice", token: AdminTokensFiles.aliceToken)]
        try c.checkSecretsForProduction()
        c.adminTokens.append(AdminToken(name: "weak", token: "short"))
        #expect(throws: ConfigurationError.self) { try c.checkSecretsForProduction() }
    }
}

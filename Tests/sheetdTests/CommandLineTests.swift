import Foundation
import MicroHTTP
import SheetStore
import TestSupport
import Testing

@testable import SheetService

/// The `sheetd` commands as an operator types them: where `sheetd token` takes its secret, passwords
/// kept out of errors, and a second termination signal. (How flags and variables are read:
/// `Tests/sheetdTests/ConfigurationTests.swift`.)
@Suite(.serialized) struct CommandLineTests {
    /// Runs the binary in `directory` with exactly `environment` (plus PATH).
    static func run(_ arguments: [String], in directory: String, environment: [String: String] = [:]) throws -> SheetdBinary.Run {
        let process = Process()
        process.executableURL = SheetdBinary.url
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        return SheetdBinary.Run(
            status: process.terminationStatus,
            stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }

    static func subject(of token: String, secret: String) throws -> Principal {
        let verifier = TokenVerifier(jwtSecret: secret, adminToken: "unused")
        return try verifier.principal(authorization: "Bearer \(token)", now: Int64(Date().timeIntervalSince1970))
    }

    /// Without a configured secret, `sheetd token` says which development secrets file it created,
    /// then which one it read; the token verifies with that file's secret.
    @Test func tokenNamesTheDevelopmentSecretsFile() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-token")
        defer { dir.remove() }
        let secretsPath = dir.path + "/data/dev-secrets.json"

        let first = try Self.run(["token", "--user", "alice"], in: dir.path)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("created new development secrets in \(secretsPath)"), "\(first.stderr)")
        let stored = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: secretsPath))) as? [String: String])
        let secret = try #require(stored["jwtSecret"])
        #expect(try Self.subject(of: first.stdout.trimmingCharacters(in: .whitespacesAndNewlines), secret: secret) == .user("alice"))

        let second = try Self.run(["token", "--user", "bob"], in: dir.path)
        #expect(second.status == 0)
        #expect(second.stderr.contains("signed with the development secret in \(secretsPath)"), "\(second.stderr)")
        #expect(!second.stderr.contains("created"))
        #expect(try Self.subject(of: second.stdout.trimmingCharacters(in: .whitespacesAndNewlines), secret: secret) == .user("bob"))
    }

    /// With `SHEETD_JWT_SECRET` or `SHEETD_JWT_SECRET_FILE` set, `sheetd token` signs with it, says
    /// nothing and creates no file.
    @Test(arguments: ["SHEETD_JWT_SECRET", "SHEETD_JWT_SECRET_FILE"])
    func tokenUsesTheConfiguredSecret(variable: String) throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-token")
        defer { dir.remove() }
        let secret = "configured-secret-0123456789abcdef"
        var environment = [variable: secret]
        if variable.hasSuffix("_FILE") {
            try Data((secret + "\n").utf8).write(to: URL(fileURLWithPath: dir.file("jwt_secret")))
            environment = [variable: dir.file("jwt_secret")]
        }
        let r = try Self.run(["token", "--user", "carol", "--ttl", "60"], in: dir.path, environment: environment)
        #expect(r.status == 0)
        #expect(r.stderr.isEmpty, "\(r.stderr)")
        #expect(try Self.subject(of: r.stdout.trimmingCharacters(in: .whitespacesAndNewlines), secret: secret) == .user("carol"))
        #expect(!FileManager.default.fileExists(atPath: dir.path + "/data"))
    }

    /// A PostgreSQL URL with a password that cannot connect (nothing listens on port 1): `serve` and
    /// `migrate --status` fail and say where they tried, and the password is in neither stream,
    /// whether the URL came from `--db` or from the file `SHEETD_DB_FILE` names.
    @Test(arguments: ["--db", "SHEETD_DB_FILE"])
    func databasePasswordsStayOutOfErrors(source: String) throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-pgpass")
        defer { dir.remove() }
        let password = "pw-7Hq2Vx9-never-printed"
        let url = "postgres://sheetd:\(password)@127.0.0.1:1/sheetd?connect_timeout=2"
        var environment = ["SHEETD_JWT_SECRET": "s3cret-for-tests-0123456789abcdef", "SHEETD_ADMIN_TOKEN": "admin-for-tests-0123456789abcdef"]
        var database: [String] = []
        if source == "--db" {
            database = ["--db", url]
        } else {
            try Data((url + "\n").utf8).write(to: URL(fileURLWithPath: dir.file("database_url")))
            environment["SHEETD_DB_FILE"] = dir.file("database_url")
        }
        for command in [["serve", "--port", "0"], ["migrate", "--status"]] {
            let r = try Self.run(command + database, in: dir.path, environment: environment)
            #expect(r.status != 0, "\(command) connected to port 1")
            #expect(!(r.stdout + r.stderr).contains(password), "\(command): \(r.stdout) \(r.stderr)")
            #expect((r.stdout + r.stderr).contains("127.0.0.1"), "\(command) says where it tried: \(r.stderr)")
        }
    }

    /// A second termination signal while the first one is handled changes nothing: one drain, exit 0,
    /// and the drain and stop lines name the same (first) signal.
    @Test func secondSignalDuringShutdownIsHarmless() throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-signals")
        defer { dir.remove() }
        let process = Process()
        process.executableURL = SheetdBinary.url
        process.arguments = ["serve", "--port", "0", "--db", dir.file()]
        process.environment = ["SHEETD_JWT_SECRET": "secret", "SHEETD_ADMIN_TOKEN": "admin"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reader = LineReader(out.fileHandleForReading)
        #expect(reader.waitFor("\"msg\":\"listening\"", seconds: 10) != nil)
        kill(process.processIdentifier, SIGTERM)
        kill(process.processIdentifier, SIGINT)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(process.terminationReason == .exit)
        let draining = try #require(reader.waitFor("\"msg\":\"draining\"", seconds: 5))
        let stopped = try #require(reader.waitFor("\"msg\":\"stopped\"", seconds: 5))
        let name = { (line: String) in line.split(separator: "\"signal\":\"").dropFirst().first?.prefix { $0 != "\"" } }
        #expect(name(draining) != nil && name(draining) == name(stopped), "\(draining) / \(stopped)")
        #expect(["SIGTERM", "SIGINT"].contains(name(draining).map(String.init) ?? ""))
    }
}

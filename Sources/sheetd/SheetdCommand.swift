import Crypto
import FoundationEssentials
import MicroHTTP
import SheetService
import SheetStore
import SheetWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The `sheetd` command line: subcommands, `--help`, `--version`. Returns exit codes, never traps:
/// configuration errors print one line on stderr and exit 2.
enum SheetdCommand {
    static func run(arguments: [String], environment: [String: String], openAPIDocument: [UInt8]) -> Int32 {
        var arguments = arguments
        let subcommand = arguments.first.flatMap { $0.hasPrefix("-") ? nil : $0 } ?? "serve"
        if !arguments.isEmpty && !arguments[0].hasPrefix("-") { arguments.removeFirst() }
        if arguments.contains("--help") || arguments.contains("-h") || subcommand == "help" {
            print(help)
            return 0
        }
        if arguments.contains("--version") || subcommand == "version" {
            print("sheetd \(SheetService.version)")
            return 0
        }
        do throws(ConfigurationError) {
            switch subcommand {
            case "serve":
                let configuration = try Configuration.parse(arguments: arguments, environment: environment)
                return ServiceRunner.serve(configuration, openAPIDocument: openAPIDocument)
            case "migrate":
                let status = arguments.contains("--status")
                let configuration = try Configuration.parse(arguments: arguments.filter { $0 != "--status" }, environment: environment)
                return migrate(configuration, statusOnly: status)
            case "token":
                return try token(arguments: arguments, environment: environment)
            case "jwks":
                return try jwks(arguments: arguments)
            case "backup":
                let (file, rest) = try takeValue("--to", from: arguments, usage: "usage: sheetd backup --to FILE [--db PATH]")
                return try DatabaseCopy.backup(to: file, Configuration.parse(arguments: rest, environment: environment))
            case "restore":
                let (file, rest) = try takeValue("--from", from: arguments, usage: "usage: sheetd restore --from FILE [--db PATH]")
                return try DatabaseCopy.restore(from: file, Configuration.parse(arguments: rest, environment: environment))
            case "catalog":
                guard arguments.first == "check" else { throw ConfigurationError("usage: sheetd catalog check FILE [--json]") }
                return try CatalogCheck.run(arguments: Array(arguments.dropFirst()), environment: environment)
            case "healthcheck":
                let configuration = try Configuration.parse(arguments: arguments, environment: environment)
                let host = configuration.http.host == "0.0.0.0" ? "127.0.0.1" : configuration.http.host
                let status = HTTPProbe.status(host: host, port: configuration.http.port, path: "/readyz")
                guard status == 200 else {
                    printError("sheetd healthcheck: /readyz on \(host):\(configuration.http.port) answered \(status.map(String.init) ?? "nothing")")
                    return 1
                }
                return 0
            default:
                throw ConfigurationError("unknown command '\(subcommand)' (see sheetd --help)")
            }
        } catch {
            printError("sheetd: \(error.message)")
            return 2
        }
    }

    private static func migrate(_ configuration: Configuration, statusOnly: Bool) -> Int32 {
        do {
            if !statusOnly {
                let applied = try configuration.migrateDatabase()
                print(applied.isEmpty ? "database is up to date" : "applied migrations: \(applied.map(String.init).joined(separator: ", "))")
            }
            for m in try configuration.databaseMigrationStatus() {
                let state =
                    !m.shipped
                    ? "newer than this binary"
                    : !m.applied
                        ? "pending"
                        : m.checksumMatches == false ? "CHANGED AFTER IT WAS APPLIED" : "applied \(m.appliedAt ?? "")"
                let version = String(repeating: "0", count: max(0, 4 - String(m.version).count)) + String(m.version)
                print("\(version)  \(m.name.padded(to: 24))  \(state)  sha256:\(m.checksum.prefix(12))")
            }
            return 0
        } catch {
            printError("sheetd migrate: \(error)")
            return 1
        }
    }

    /// The value of `flag` (`--to FILE` or `--to=FILE`, required) and the other arguments.
    private static func takeValue(
        _ flag: String, from arguments: [String], usage: String
    ) throws(ConfigurationError) -> (String, [String]) {
        var value: String?
        var rest: [String] = []
        var i = 0
        while i < arguments.count {
            if arguments[i] == flag {
                guard i + 1 < arguments.count, !arguments[i + 1].isEmpty else { throw ConfigurationError("\(flag) needs a value (\(usage))") }
                value = arguments[i + 1]; i += 2
            } else if arguments[i].hasPrefix(flag + "=") {
                value = String(arguments[i].dropFirst(flag.count + 1)); i += 1
            } else {
                rest.append(arguments[i]); i += 1
            }
        }
        guard let value, !value.isEmpty else { throw ConfigurationError(usage) }
        return (value, rest)
    }

    private static func token(arguments: [String], environment: [String: String]) throws(ConfigurationError) -> Int32 {
        var user: String?
        var ttl = 3600
        var keyFile: String?
        var keyID: String?
        var rest: [String] = []
        var i = 0
        while i < arguments.count {
            switch arguments[i] {
            case "--user", "--ttl", "--key", "--kid":
                guard i + 1 < arguments.count, !arguments[i + 1].isEmpty else { throw ConfigurationError("\(arguments[i]) needs a value") }
                let value = arguments[i + 1]
                switch arguments[i] {
                case "--user": user = value
                case "--ttl": ttl = try Configuration.integer(value, "--ttl", 1...31_536_000)
                case "--key": keyFile = value
                default: keyID = value
                }
                i += 2
            default:
                rest.append(arguments[i]); i += 1
            }
        }
        guard let user else { throw ConfigurationError("token: --user ID is required") }
        guard Identifier.isValid(user) else { throw ConfigurationError("token: --user \(Identifier.rule)") }
        var configuration = try Configuration.parse(arguments: rest, environment: environment)
        let now = Int64(time(nil))
        // The claims the configured server requires: its issuer, audience and subject claim.
        let claims = IssuedTokenClaims(
            subject: user, issuedAt: now, expires: now + Int64(ttl), issuer: configuration.claimRules.issuer,
            audience: configuration.claimRules.audience, subjectClaim: configuration.claimRules.subjectClaim)
        if let keyFile {
            let key = try privateKey(keyFile, command: "token")
            print(TokenSigner.token(claims: claims, signer: .privateKey(key), keyID: keyID))
            return 0
        }
        if configuration.jwtSecret == nil {
            guard configuration.environment == .development else {
                throw ConfigurationError("token: SHEETD_JWT_SECRET is not set (or pass --key FILE)")
            }
            // Only a server using the same secrets file accepts the token: say which one this is.
            let secrets = try DevelopmentSecrets.loadOrCreate(besideDatabase: configuration.developmentSecretsAnchor)
            let path = DevelopmentSecrets.absolutePath(besideDatabase: configuration.developmentSecretsAnchor)
            if secrets.generated {
                printError(
                    """
                    sheetd token: SHEETD_JWT_SECRET is not set; created new development secrets in \(path). \
                    Only a server using them accepts this token: run this where the server runs (or pass its --db), \
                    or set SHEETD_JWT_SECRET or SHEETD_JWT_SECRET_FILE.
                    """)
            } else {
                printError("sheetd token: SHEETD_JWT_SECRET is not set; signed with the development secret in \(path)")
            }
            configuration.jwtSecret = secrets.jwtSecret
        }
        print(TokenSigner.token(claims: claims, signer: .secret(Array(configuration.jwtSecret!.utf8)), keyID: keyID))
        return 0
    }

    /// `sheetd jwks --key FILE --kid ID [--key FILE --kid ID ...]`: the public JWKS of PEM key files
    /// (private or public), for `SHEETD_JWKS_FILE` or a web server.
    private static func jwks(arguments: [String]) throws(ConfigurationError) -> Int32 {
        let usage = "usage: sheetd jwks --key FILE --kid ID [--key FILE --kid ID ...]"
        var keys: [(key: PublicKey, keyID: String)] = []
        var pendingKey: PublicKey?
        var i = 0
        while i < arguments.count {
            guard arguments[i] == "--key" || arguments[i] == "--kid", i + 1 < arguments.count, !arguments[i + 1].isEmpty else {
                throw ConfigurationError(usage)
            }
            if arguments[i] == "--key" {
                guard pendingKey == nil else { throw ConfigurationError("jwks: each --key needs its --kid (\(usage))") }
                pendingKey = try publicKey(arguments[i + 1])
            } else {
                guard let key = pendingKey else { throw ConfigurationError("jwks: --kid comes after its --key (\(usage))") }
                guard !keys.contains(where: { $0.keyID == arguments[i + 1] }) else {
                    throw ConfigurationError("jwks: the kid \(arguments[i + 1]) is used twice")
                }
                keys.append((key, arguments[i + 1]))
                pendingKey = nil
            }
            i += 2
        }
        guard pendingKey == nil else { throw ConfigurationError("jwks: each --key needs its --kid (\(usage))") }
        guard !keys.isEmpty else { throw ConfigurationError(usage) }
        print(TokenSigner.jwks(keys))
        return 0
    }

    private static func privateKey(_ path: String, command: String) throws(ConfigurationError) -> PrivateKey {
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("\(command): cannot read \(path)") }
        do { return try PrivateKey(pem: Array(data)) } catch { throw ConfigurationError("\(command): \(path): \(error.message)") }
    }

    /// A private key's public half, or a public key.
    private static func publicKey(_ path: String) throws(ConfigurationError) -> PublicKey {
        guard let data = FileManager.default.contents(atPath: path) else { throw ConfigurationError("jwks: cannot read \(path)") }
        if let key = try? PrivateKey(pem: Array(data)) { return key.publicKey }
        do { return try PublicKey(pem: Array(data)) } catch {
            throw ConfigurationError("jwks: \(path): not a PEM key (RSA, EC P-256 or Ed25519, private or public)")
        }
    }

    /// The commands as `--help` lists them, with what each does.
    static let commands: [(usage: String, meaning: String)] = [
        ("sheetd [serve] [options]", "serve the API (default)"),
        ("sheetd migrate [--status] [options]", "apply pending migrations, or list them"),
        ("sheetd token --user ID [--ttl S] [--key FILE] [--kid ID]", "print a user token signed with the configured secret or a private key"),
        ("sheetd jwks --key FILE --kid ID ...", "print the public JWKS of PEM key files (for SHEETD_JWKS_FILE)"),
        ("sheetd catalog check FILE [--json]", "validate a catalog file offline (exit 1 on errors)"),
        ("sheetd backup --to FILE [--db PATH]", "copy a SQLite database, also while it serves, and verify the copy"),
        ("sheetd restore --from FILE [--db PATH]", "replace a stopped server's SQLite database with a verified copy"),
        ("sheetd healthcheck [options]", "exit 0 when /readyz answers 200 (container health check)"),
        ("sheetd --help | --version", ""),
    ]

    /// The widest the option table's meaning and default columns get before they wrap.
    static let meaningWidth = 44
    static let defaultWidth = 20

    /// `sheetd --help` (every subcommand's `--help` prints the same): the commands, then one row per
    /// option in columns (flag, variable, meaning, default) sized to their longest entries.
    static var help: String {
        let usage = TextColumns(maximumWidths: [nil, nil]).lines(commands.map { [$0.usage, $0.meaning] })
        let table = TextColumns(maximumWidths: [nil, nil, meaningWidth, defaultWidth]).lines(
            [["option", "variable", "meaning", "default"]] + Configuration.options.map { [$0.flag, $0.variable, $0.meaning, $0.defaultValue] })
        return """
            sheetd \(SheetService.version): decides which bottom sheet a mobile app shows, when, and how.

            Usage:
            \(usage.joined(separator: "\n"))

            Options (each also read from its environment variable; a flag wins):

            \(table.joined(separator: "\n"))

            """
    }
}

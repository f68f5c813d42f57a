import Crypto
import FoundationEssentials

/// Secrets for a development run with none configured: generated once, kept beside the database
/// (mode 0600) so tokens survive restarts. Never used with SHEETD_ENV=production.
enum DevelopmentSecrets {
    struct Secrets { var jwtSecret: String; var adminToken: String; var generated: Bool }

    static func loadOrCreate(besideDatabase databasePath: String) throws(ConfigurationError) -> Secrets {
        let directory = directory(of: databasePath)
        let path = path(besideDatabase: databasePath)
        if let data = FileManager.default.contents(atPath: path),
            let object = try? JSONDecoder().decode([String: String].self, from: data),
            let jwt = object["jwtSecret"], let admin = object["adminToken"]
        {
            return Secrets(jwtSecret: jwt, adminToken: admin, generated: false)
        }
        let secrets = Secrets(
            jwtSecret: Hex.encode(secureRandomBytes(32)), adminToken: "dev-admin-" + Hex.encode(secureRandomBytes(16)), generated: true)
        let text = "{\"jwtSecret\":\"\(secrets.jwtSecret)\",\"adminToken\":\"\(secrets.adminToken)\"}\n"
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
                throw ConfigurationError("cannot write \(path)")
            }
        } catch {
            throw ConfigurationError("cannot store development secrets in \(path): \(error)")
        }
        return secrets
    }

    /// Where the development secrets live for a database file.
    static func path(besideDatabase databasePath: String) -> String { directory(of: databasePath) + "/dev-secrets.json" }

    /// `path(besideDatabase:)` from the root, for messages read in another directory.
    static func absolutePath(besideDatabase databasePath: String) -> String {
        let relative = path(besideDatabase: databasePath)
        if relative.hasPrefix("/") { return relative }
        let cwd = FileManager.default.currentDirectoryPath
        return (cwd.hasSuffix("/") ? cwd : cwd + "/") + (relative.hasPrefix("./") ? String(relative.dropFirst(2)) : relative)
    }

    /// The directory part of a path ("." for a bare file name).
    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}

import Foundation
import PackagePlugin

/// Turns the top-level `migrations/*.sql` into Swift source compiled into the target, so the binary
/// carries its migrations wherever it is installed (repo, /usr/local/bin, the container).
/// A target named in `folders` gets the files of its own subfolder instead (`PostgresStore`:
/// `migrations/postgres/*.sql`), and reaches `EmbeddedMigration` through `import SheetStore`.
@main
struct EmbedMigrations: BuildToolPlugin {
    static let folders = ["PostgresStore": "postgres"]

    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        var directory = context.package.directoryURL.appending(path: "migrations")
        var arguments: [String] = []
        if let folder = Self.folders[target.name] {
            directory = directory.appending(path: folder)
            arguments = ["--import", "SheetStore"]
        }
        let files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "sql" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) migrations into \(target.name)",
                executable: try context.tool(named: "EmbedMigrationsTool").url,
                arguments: arguments + [output.path()] + files.map { $0.path() },
                inputFiles: files,
                outputFiles: [output]
            )
        ]
    }
}

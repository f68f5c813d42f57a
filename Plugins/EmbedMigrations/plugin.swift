import Foundation
import PackagePlugin

/// Turns a backend's migrations into Swift source compiled into its target, so the binary carries
/// them wherever it is installed (repo, /usr/local/bin, the container): `SQLiteStore` gets the
/// top-level `migrations/*.sql`, a target named in `folders` the files of its own subfolder
/// (`PostgresStore`: `migrations/postgres/*.sql`). Both reach `EmbeddedMigration` through `import SheetStore`.
@main
struct EmbedMigrations: BuildToolPlugin {
    static let folders = ["PostgresStore": "postgres"]

    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        var directory = context.package.directoryURL.appending(path: "migrations")
        let arguments = ["--import", "SheetStore"]
        if let folder = Self.folders[target.name] {
            directory = directory.appending(path: folder)
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

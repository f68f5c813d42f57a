import Foundation
import PackagePlugin

/// Compiles the live preview page (`Preview/preview.html` in the target's directory: HTML, CSS and
/// JavaScript in one file) into the target as `embeddedPreviewPage`, so `GET /preview` serves the
/// page the binary was built with, offline and without a build step of its own.
@main
struct EmbedPreview: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let input = target.directoryURL.appending(path: "Preview/preview.html")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedPreview.swift")
        return [
            .buildCommand(
                displayName: "Embedding Preview/preview.html",
                executable: try context.tool(named: "EmbedFileTool").url,
                arguments: [output.path(), "embeddedPreviewPage", input.path()],
                inputFiles: [input],
                outputFiles: [output]
            )
        ]
    }
}

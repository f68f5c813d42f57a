import Foundation
import PackagePlugin

/// Compiles the top-level `openapi.yaml` into the target as `embeddedOpenAPIDocument`, so
/// `GET /openapi.yaml` serves exactly the spec the binary was built with, wherever it runs.
@main
struct EmbedOpenAPI: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        let input = context.package.directoryURL.appending(path: "openapi.yaml")
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedOpenAPI.swift")
        return [
            .buildCommand(
                displayName: "Embedding openapi.yaml",
                executable: try context.tool(named: "EmbedFileTool").url,
                arguments: [output.path(), "embeddedOpenAPIDocument", input.path()],
                inputFiles: [input],
                outputFiles: [output]
            )
        ]
    }
}

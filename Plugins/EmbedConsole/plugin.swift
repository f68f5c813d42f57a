import Foundation
import PackagePlugin

/// Compiles the operator console (`Console/console.html`, `console.css`, `console.js` in the target's
/// directory) and Debian's Chart.js (libjs-chart.js, MIT) into the target as byte arrays, so
/// `GET /console` serves what the binary was built with: offline, no CDN, no build step of its own.
@main
struct EmbedConsole: BuildToolPlugin {
    /// Where Debian's `libjs-chart.js` puts the minified UMD build (Chart.js 3.9.1 on Debian 12).
    static let chartJS = "/usr/share/javascript/chart.js/chart.min.js"

    func createBuildCommands(context: PluginContext, target: any Target) throws -> [Command] {
        guard FileManager.default.fileExists(atPath: Self.chartJS) else {
            throw PluginError("\(Self.chartJS) is missing: install Debian's libjs-chart.js (make deps does)")
        }
        let console = target.directoryURL.appending(path: "Console")
        let files: [(constant: String, input: URL)] = [
            ("embeddedConsolePage", console.appending(path: "console.html")),
            ("embeddedConsoleStyles", console.appending(path: "console.css")),
            ("embeddedConsoleScript", console.appending(path: "console.js")),
            ("embeddedChartJS", URL(fileURLWithPath: Self.chartJS)),
        ]
        let tool = try context.tool(named: "EmbedFileTool").url
        return files.map { file in
            let output = context.pluginWorkDirectoryURL.appending(path: "Embedded_\(file.constant).swift")
            return .buildCommand(
                displayName: "Embedding \(file.input.lastPathComponent)",
                executable: tool,
                arguments: [output.path(), file.constant, file.input.path()],
                inputFiles: [file.input],
                outputFiles: [output]
            )
        }
    }
}

struct PluginError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

import Foundation
import Testing

/// The client and the server stay apart: the library imports Foundation (and FoundationNetworking,
/// UIKit, SwiftUI where they exist) and nothing of the server; no server module imports the client,
/// Foundation or FoundationNetworking, and the server binary does not link them.
@Suite struct PackageBoundaryTests {
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Sources")

    /// The module names each Swift file under `directory` imports, by file.
    static func imports(under directory: URL) throws -> [(file: String, module: String)] {
        var found: [(String, String)] = []
        let files = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil)?.compactMap { $0 as? URL } ?? []
        for file in files where file.pathExtension == "swift" {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                let words = line.split(separator: " ")
                guard let at = words.firstIndex(of: "import"), at + 1 < words.count,
                    words[..<at].allSatisfy({ ["public", "internal", "private", "package", "fileprivate", "@preconcurrency"].contains($0) })
                else { continue }
                found.append((file.path, String(words[at + 1])))
            }
        }
        return found
    }

    @Test func theLibraryImportsOnlyFoundationAndTheUIFrameworks() throws {
        let allowed: Set<String> = ["Foundation", "FoundationNetworking", "UIKit", "SwiftUI"]
        let imports = try Self.imports(under: Self.sources.appending(path: "SheetdClient"))
        #expect(!imports.isEmpty)
        for (file, module) in imports { #expect(allowed.contains(module), "\(file) imports \(module)") }
    }

    /// The fake an app's tests link imports the client and Foundation, nothing of the server.
    @Test func theTestingLibraryImportsOnlyTheClientAndFoundation() throws {
        let imports = try Self.imports(under: Self.sources.appending(path: "SheetdClientTesting"))
        #expect(imports.contains { $0.module == "SheetdClient" })
        for (file, module) in imports { #expect(["SheetdClient", "Foundation"].contains(module), "\(file) imports \(module)") }
    }

    @Test func theServerImportsNeitherTheClientNorFoundation() throws {
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).filter {
            !$0.hasPrefix("SheetdClient") && !$0.hasSuffix("Tool")  // the build-time tools are not part of the binary
        }
        #expect(modules.contains("SheetService"))
        for module in modules {
            for (file, imported) in try Self.imports(under: Self.sources.appending(path: module)) {
                #expect(!["SheetdClient", "Foundation", "FoundationNetworking"].contains(imported), "\(file) imports \(imported)")
            }
        }
    }

    @Test func theServerBinaryLinksNeitherFoundationNorNetworking() throws {
        let binary = SheetdProcess.binary.path
        try #require(FileManager.default.isExecutableFile(atPath: binary), "no sheetd binary beside the tests")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["ldd", binary]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(text.contains("libc.so"))
        #expect(!text.contains("libFoundation.so"))
        #expect(!text.contains("libFoundationNetworking.so"))
    }
}

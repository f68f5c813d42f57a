import Foundation
import SheetdClient
import TestSupport
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
        let allowed: Set<String> = ["Foundation", "FoundationNetworking", "UIKit", "SwiftUI", "Network"]
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

    /// The operator client imports the app's client and Foundation, nothing of the server.
    @Test func theAdminLibraryImportsOnlyTheClientAndFoundation() throws {
        let imports = try Self.imports(under: Self.sources.appending(path: "SheetdAdmin"))
        #expect(imports.contains { $0.module == "SheetdClient" })
        for (file, module) in imports {
            #expect(["SheetdClient", "Foundation", "FoundationNetworking"].contains(module), "\(file) imports \(module)")
        }
    }

    @Test func theServerImportsNeitherTheClientNorFoundation() throws {
        let modules = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path).filter {
            !$0.hasPrefix("SheetdClient") && $0 != "SheetdAdmin" && !$0.hasSuffix("Tool")  // the build-time tools are not part of the binary
        }
        #expect(modules.contains("SheetService"))
        for module in modules {
            for (file, imported) in try Self.imports(under: Self.sources.appending(path: module)) {
                #expect(!["SheetdClient", "SheetdAdmin", "Foundation", "FoundationNetworking"].contains(imported), "\(file) imports \(imported)")
            }
        }
    }

    /// The manifest Xcode 16 reads (Package@swift-6.0.swift, tools 6.0) loads with the 6.0 API and
    /// declares the client's products over the same targets as Package.swift, with no unsafe flags.
    @Test func theSwift60ManifestLoadsAndDeclaresTheClient() throws {
        let root = Self.sources.deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory.appending(path: "sheetd-manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.copyItem(at: root.appending(path: "Package@swift-6.0.swift"), to: directory.appending(path: "Package.swift"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "dump-package"]
        process.currentDirectoryURL = directory
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "swift package dump-package failed")
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let products = (manifest["products"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(products == ["SheetdClient", "SheetdClientTesting", "SheetdAdminClient"])
        #expect((manifest["toolsVersion"] as? [String: Any])?["_version"] as? String == "6.0.0")
        let targets = (manifest["targets"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(targets == ["SheetdClient", "SheetdClientTesting", "SheetdAdmin", "SheetdClientUnitTests"])
        #expect(!String(decoding: data, as: UTF8.self).contains("unsafeFlags"))
        let main = try String(contentsOf: root.appending(path: "Package.swift"), encoding: .utf8)
        for target in targets.dropLast() { #expect(main.contains(".target(name: \"\(target)\""), "Package.swift declares \(target) too") }
        #expect(main.contains(".testTarget(name: \"SheetdClientUnitTests\", dependencies: [\"SheetdClient\", \"SheetdClientTesting\"])"))
        for product in products { #expect(main.contains(".library(name: \"\(product)\""), "Package.swift declares \(product) too") }
        #expect(main.contains("resources: [.copy(\"PrivacyInfo.xcprivacy\")]"), "both manifests ship the privacy manifest")
        #expect(String(decoding: data, as: UTF8.self).contains("PrivacyInfo.xcprivacy"))
    }

    @Test func theServerBinaryLinksNeitherFoundationNorNetworking() throws {
        let binary = SheetdBinary.url.path
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

/// One version in one place: `SheetdUserClient.version` is the CHANGELOG's newest version, and the
/// dependency line of docs/ios.md (the iOS developer's page) and the example name it.
@Suite struct VersionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theChangelogAndTheIOSPageNameTheLibrarysVersion() throws {
        let changelog = try String(contentsOf: Self.root.appending(path: "Sources/SheetdClient/CHANGELOG.md"), encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }
        #expect(newest == "## \(SheetdUserClient.version)")
        #expect(!changelog.contains("## Unreleased"), "the Unreleased section is a version")
        let page = try String(contentsOf: Self.root.appending(path: "docs/ios.md"), encoding: .utf8)
        #expect(page.contains("from: \"\(SheetdUserClient.version)\""))
    }
}

import Foundation
import TestSupport
import Testing

/// `sheetd catalog check FILE [--json]` (the checks themselves: SheetServiceTests/CatalogCheckTests).
@Suite struct CatalogCheckCommandTests {
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    private func file(_ entries: [String]) -> [UInt8] { Array(#"{"sheets": [\#(entries.joined(separator: ","))]}"#.utf8) }

    /// The command: lines naming file, severity and member path, exit 1 on errors and 0 on warnings
    /// only; `--json` prints one object; the example catalog passes.
    @Test func theCommandPrintsLinesOrJSONAndExitsByErrors() throws {
        let dir = FileManager.default.temporaryDirectory.appending(path: "sheetd-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let bad = dir.appending(path: "bad.json").path
        try Data(file([#"{"id":"x","kind":"informational","screen":"home","size":"huge"}"#])).write(to: URL(fileURLWithPath: bad))
        let text = try SheetdBinary.run(["catalog", "check", bad])
        #expect(text.status == 1)
        #expect(text.stdout.contains("\(bad): error: sheets[0].size: must be one of content, large, medium (sheet 'x')"), "\(text.stdout)")
        let json = try SheetdBinary.run(["catalog", "check", bad, "--json"])
        #expect(json.status == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["errors"] as? Int == 1)
        #expect((object["problems"] as? [[String: Any]])?.first?["path"] as? String == "sheets[0].size")
        let example = Self.repositoryRoot.appending(path: "examples/catalog.json").path
        let good = try SheetdBinary.run(["catalog", "check", example])
        #expect(good.status == 0, "\(good.stdout)")
        #expect(try SheetdBinary.run(["catalog", "check"]).status == 2)
        #expect(try SheetdBinary.run(["catalog", "check", example, "--max-sheets", "1"]).status == 1)
    }
}

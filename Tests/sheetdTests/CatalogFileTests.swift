import Foundation
import SheetPolicy
import SheetService
import TestSupport
import Testing

@testable import sheetd

/// `--catalog FILE` is read by the one catalog file reader (`CatalogCheck`, as `sheetd catalog check`
/// and `POST /v1/catalog/impact`): the same refusals, with the server's catalog limits.
@Suite struct CatalogFileTests {
    private func load(_ text: String, limits: CatalogLimits = CatalogLimits()) throws(ConfigurationError) -> [String] {
        let dir = try! TemporaryDirectory(prefix: "sheetd-catalog-file")
        defer { dir.remove() }
        let path = dir.file("catalog.json")
        try! Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return try CatalogFile.load(path: path, limits: limits).map(\.id)
    }

    private func refusal(_ text: String, limits: CatalogLimits = CatalogLimits()) -> String {
        do {
            let ids = try load(text, limits: limits)
            return "loaded \(ids)"
        } catch {
            return error.message
        }
    }

    @Test func aGoodFileLoadsEveryDefinition() throws {
        let ids = try load(#"{"sheets":[{"id":"b","kind":"informational","screen":"s"},{"id":"a","kind":"action","screen":"s"}]}"#)
        #expect(ids == ["b", "a"])
    }

    /// The first error finding, with its member path and sheet, and how many more there are.
    @Test func theFirstErrorIsNamedWithTheCountOfTheRest() {
        let message = refusal(
            #"{"sheets":[{"id":"fine","kind":"action","screen":"s"},{"id":"broken","kind":"cards","screen":"s"},{"id":"x","kind":"sofa","screen":"s"}]}"#
        )
        #expect(message.contains(": sheets[1].containerId: "), "\(message)")
        #expect(message.contains("(sheet 'broken')"), "\(message)")
        #expect(message.contains("and 1 more (sheetd catalog check"), "\(message)")
    }

    /// What `catalog check` refuses about the file as a whole, and the server's catalog limits.
    @Test func theEnvelopeAndTheLimitsAreChecked() {
        #expect(refusal(#"{"sheets":[],"extra":1}"#).contains("extra: is not a member of a catalog file"))
        #expect(refusal(#"{"sheet":[]}"#).contains("sheets: is required"))
        #expect(refusal("[").contains("not valid JSON"))
        #expect(refusal(#"{"sheets":[7]}"#).contains("sheets[0]: is not an object"))
        let twice = refusal(#"{"sheets":[{"id":"a","kind":"action","screen":"s"},{"id":"a","kind":"action","screen":"t"}]}"#)
        #expect(twice.contains("sheets[1].id: appears twice"), "\(twice)")
        let many = #"{"sheets":[{"id":"a","kind":"action","screen":"s"},{"id":"b","kind":"action","screen":"s"}]}"#
        #expect(
            refusal(many, limits: CatalogLimits(sheets: 1, sheetsPerScreen: 1)).contains("sheets: "),
            "\(refusal(many, limits: CatalogLimits(sheets: 1, sheetsPerScreen: 1)))")
    }
}

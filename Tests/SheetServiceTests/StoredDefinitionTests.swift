import Foundation
import MicroHTTP
import SQLiteStore
import SheetPolicy
import SheetStore
import SheetWire
import TestSupport
import Testing

@testable import SheetService

/// Stored definitions are read by their own path (`SheetDefinition.stored`), not as request bodies:
/// what the store returns loads without a request's limits, and a stored sheet that does not load
/// names itself in an error of its own kind, never a client's 400 problem.
@Suite struct StoredDefinitionTests {
    /// The store holds definitions as this server wrote them: each loads as what was written.
    @Test func storedDefinitionsLoadAsWritten() throws {
        let json = #"{"id":"offers","kind":"cards","screen":"home","tab":"accounts","containerId":"offers-home","priority":10}"#
        let definition = try SheetDefinition.stored(json, id: "offers")
        #expect(definition.id == "offers")
        #expect(definition.containerId == "offers-home")
        #expect(definition == (try SheetDefinition.decode(try JSONBody.object(Array(json.utf8)), pathId: "offers")))
    }

    /// A stored sheet that no longer loads stops the service at start-up naming the sheet, as a
    /// `StoredDocumentError` (a Problem would be answered as the client's 400). (Text that is not JSON
    /// at all cannot be stored: the database checks `json_valid`.)
    @Test(arguments: [
        (#"{"kind":"cards","screen":"home"}"#, "the stored sheet 'broken' does not load: containerId"),
        (#"[1, 2]"#, "the stored sheet 'broken' is not a JSON object"),
    ])
    func aStoredSheetThatDoesNotLoadIsNamed(json: String, message: String) throws {
        let dir = try TemporaryDirectory(prefix: "sheetd-stored-definition")
        defer { dir.remove() }
        let store = try SQLiteSheetStore.open(path: dir.file("sheetd.sqlite"))
        defer { store.close() }
        _ = try store.putSheet(StoredSheet(id: "broken", json: json), record: CatalogWriteRecord(author: RevisionAuthor(actor: "tests"), keep: 10))
        #expect {
            _ = try SheetService(store: store, tokens: TokenVerifier(jwtSecret: "s", adminToken: "a"), metrics: HTTPMetrics(), openAPIDocument: [])
        } throws: { error in
            guard let stored = error as? StoredDocumentError else { return false }
            return stored.description.hasPrefix(message)
        }
    }
}

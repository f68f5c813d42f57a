public import JSONKit
public import SheetPolicy

/// A stored document that does not load: the store holds what this server wrote (or an older
/// version of it), so this is the server's fault or the database's, never a client's 400.
public struct StoredDocumentError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// Documents as the store returns them: sheet definitions, revisions' copies of them. They passed the
/// request path's checks when they were written, so they are read without a request body's limits
/// (member count, the request's messages) by their own path, and what fails names the stored document.
public enum StoredDocument {
    /// The JSON object stored as `json`; `subject` names it in the error (`the stored sheet 'offers'`).
    public static func object(_ json: String, subject: String) throws(StoredDocumentError) -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try JSONReader.read(Array(json.utf8))
        } catch {
            throw StoredDocumentError(description: "\(subject) is not valid JSON: \(error)")
        }
        guard case .object(let object) = value else { throw StoredDocumentError(description: "\(subject) is not a JSON object") }
        return object
    }
}

extension SheetDefinition {
    /// The stored definition of sheet `id` (`json` as the store returns it). The design rules are not
    /// applied: they refuse writes only, and a definition stored before a rule existed keeps loading.
    public static func stored(_ json: String, id: String, subject: String? = nil) throws(StoredDocumentError) -> SheetDefinition {
        let subject = subject ?? "the stored sheet '\(id)'"
        let object = try StoredDocument.object(json, subject: subject)
        do {
            return try decode(object, pathId: id)
        } catch {
            throw StoredDocumentError(description: "\(subject) does not load: \(error.detail)")
        }
    }
}

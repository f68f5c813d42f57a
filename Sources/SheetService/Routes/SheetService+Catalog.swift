import JSONKit
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// The sheet catalog: admin writes, any valid token reads.
extension SheetService {
    func listSheets(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authenticate(request)
        var w = JSONWriter()
        let sheets = catalog.sortedByID
        w.object { o in
            o.arrayMember("sheets") { items in for sheet in sheets { sheet.write(to: &items, withWarnings: true) } }
        }
        return .json(200, w.bytes)
    }

    func getSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        _ = try authenticate(request)
        let id = try pathIdentifier(request, "sheetId")
        guard let sheet = catalog[id] else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
        return .json(200, sheet.responseJSON)
    }

    func putSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only the admin token may change the catalog")
        let id = try pathIdentifier(request, "sheetId")
        let definition = try SheetDefinition.parse(try jsonBody(request), pathId: id).checkedAgainstDesignRules()
        let json = definition.canonicalJSON
        let created = try catalogWrites.withLock { _ throws(Problem) -> Bool in
            let created = try storage { () throws(StoreError) in
                try store.putSheet(StoredSheet(id: id, json: String(decoding: json, as: UTF8.self)))
            }
            catalogSnapshot.withLock { $0.upsert(definition) }
            return created
        }
        feed.catalogChanged()
        return .json(created ? 201 : 200, definition.responseJSON, headers: created ? [("Location", "/v1/sheets/\(id)")] : [])
    }

    func deleteSheet(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        try requireAdmin(request, "only the admin token may change the catalog")
        let id = try pathIdentifier(request, "sheetId")
        let existed = try catalogWrites.withLock { _ throws(Problem) -> Bool in
            let existed = try storage { () throws(StoreError) in try store.deleteSheet(id: id) }
            catalogSnapshot.withLock { $0.remove(id: id) }
            return existed
        }
        if existed { feed.catalogChanged() }
        guard existed else { throw Problems.notFound("no sheet '\(id)' in the catalog") }
        return .empty(204)
    }
}

import JSONKit
import SheetPolicy

/// One page of `GET /v1/sheets`: each definition as the catalog answers it (with `warnings`), and
/// `next`, the `after` of the next page (null on the last).
struct SheetPage: Sendable {
    var sheets: [SheetDefinition]
    var next: String?

    func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.arrayMember("sheets") { items in for sheet in sheets { sheet.write(to: &items, withWarnings: true) } }
            o.member("next", next)
        }
        return w.bytes
    }
}

import JSONKit
public import SheetPolicy

/// One page of `GET /v1/sheets`: each definition as the catalog answers it (with `warnings`), and
/// `next`, the `after` of the next page (null on the last).
public struct SheetPage: Sendable {
    public var sheets: [SheetDefinition]
    public var next: String?

    public init(sheets: [SheetDefinition], next: String?) {
        self.sheets = sheets
        self.next = next
    }

    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.arrayMember("sheets") { items in for sheet in sheets { sheet.write(to: &items, withWarnings: true) } }
            o.member("next", next)
        }
        return w.bytes
    }
}

import JSONKit
import MicroHTTP
import SheetPolicy

extension SheetDefinition {
    /// Validates one catalog definition (API body or catalog file entry), naming every bad field.
    /// `pathId` is the id from the URL; a body `id` that differs is an error.
    static func parse(_ object: [String: JSONValue], pathId: String?) throws(Problem) -> SheetDefinition {
        var r = BodyReader(object)
        let bodyId = r.identifier("id", required: pathId == nil)
        if let pathId, let bodyId, bodyId != pathId { r.fail("id", "must equal the sheet id in the path ('\(pathId)')") }
        let kind = r.enumeration("kind", SheetKind.self, required: true)
        let size = r.enumeration("size", SheetSize.self)
        let style = r.enumeration("style", SheetStyle.self) ?? .flexible
        let title = r.string("title", maxLength: 200)
        if style == .strict && (title ?? "").isEmpty { r.fail("title", "is required for the strict style (its 56 pt header shows it)") }
        let screen = r.identifier("screen", required: true)
        let tab = r.identifier("tab")
        let containerId = r.identifier("containerId")
        let containerFilter = r.identifier("containerFilter")
        if kind == .cards && containerId == nil && !r.invalid.contains(where: { $0.name == "containerId" }) {
            r.fail("containerId", "is required for card sheets")
        }
        if let kind, kind != .cards {
            if containerId != nil { r.fail("containerId", "is only allowed on card sheets") }
            if containerFilter != nil { r.fail("containerFilter", "is only allowed on card sheets") }
        }
        let priority = r.integer("priority", -1_000_000...1_000_000) ?? 0
        let inputCount = r.integer("inputCount", 1...1000) ?? 1
        let confirm = r.boolean("confirmDismissWhenDirty") ?? false
        var primaryButton: PrimaryButton?
        if var button = r.object("primaryButton") {
            if let label = button.string("label", maxLength: 100, required: true) {
                if label.isEmpty { button.fail("label", "must not be empty") } else { primaryButton = PrimaryButton(label: label) }
            }
            r.absorb(button)
        }
        let nonModalUpTo = r.enumeration("nonModalUpTo", DetentID.self)
        if nonModalUpTo == .content { r.fail("nonModalUpTo", "must be one of medium, large") }
        let affordance = r.enumeration("dismissAffordance", DismissAffordance.self)
        let swipe = r.boolean("swipeToDismiss")
        let tapScrim = r.boolean("tapScrimToDismiss")
        let expands = r.boolean("expandsOnScrollToEdge")
        let radius = r.number("cornerRadius", 0...100)
        try r.finish()
        return SheetDefinition(
            id: try r.required(pathId ?? bodyId, "id"), kind: try r.required(kind, "kind"), size: size, style: style, title: title,
            screen: try r.required(screen, "screen"), tab: tab,
            containerId: containerId, containerFilter: containerFilter, priority: priority, inputCount: inputCount,
            confirmDismissWhenDirty: confirm, primaryButton: primaryButton, nonModalUpTo: nonModalUpTo,
            dismissAffordance: affordance, swipeToDismiss: swipe, tapScrimToDismiss: tapScrim,
            expandsOnScrollToEdge: expands, cornerRadius: radius)
    }

    /// Refuses what the design documents forbid (writes only: stored definitions keep loading).
    func checkedAgainstDesignRules() throws(Problem) -> SheetDefinition {
        let violations = designViolations
        guard violations.isEmpty else { throw Problems.invalidParams(violations.map { ($0.field, $0.reason) }) }
        return self
    }

    /// The catalog's answer for one definition: the canonical JSON plus `warnings` (never stored).
    var responseJSON: [UInt8] {
        var w = JSONWriter()
        write(to: &w, withWarnings: true)
        return w.bytes
    }

    /// The canonical JSON of a definition: every member, defaults filled, `null` for absent options.
    var canonicalJSON: [UInt8] {
        var w = JSONWriter()
        write(to: &w)
        return w.bytes
    }

    /// `withWarnings` adds `warnings` (the design documents' advice, see `designWarnings`) for answers.
    func write(to w: inout JSONWriter, withWarnings: Bool = false) {
        w.object { o in
            o.member("id", id)
            o.member("kind", kind.rawValue)
            o.member("size", size?.rawValue)
            o.member("style", style.rawValue)
            o.member("title", title)
            o.member("screen", screen)
            o.member("tab", tab)
            o.member("containerId", containerId)
            o.member("containerFilter", containerFilter)
            o.member("priority", priority)
            o.member("inputCount", inputCount)
            o.member("confirmDismissWhenDirty", confirmDismissWhenDirty)
            if let primaryButton {
                o.member("primaryButton") { $0.object { b in b.member("label", primaryButton.label) } }
            } else {
                o.member("primaryButton", nil as String?)
            }
            o.member("nonModalUpTo", nonModalUpTo?.rawValue)
            o.member("dismissAffordance", dismissAffordance?.rawValue)
            o.member("swipeToDismiss", swipeToDismiss)
            o.member("tapScrimToDismiss", tapScrimToDismiss)
            o.member("expandsOnScrollToEdge", expandsOnScrollToEdge)
            o.member("cornerRadius", cornerRadius)
            if withWarnings {
                o.arrayMember("warnings") { items in
                    for warning in designWarnings {
                        items.object { item in
                            item.member("field", warning.field)
                            item.member("reason", warning.reason)
                        }
                    }
                }
            }
        }
    }
}

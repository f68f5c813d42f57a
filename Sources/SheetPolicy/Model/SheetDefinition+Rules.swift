extension SheetDefinition {
    /// The size the sheet opens with: the declared one, else the guidelines' default
    /// (input sheets with more than one input are large; everything else is content-sized).
    public var resolvedSize: SheetSize {
        if let size { return size }
        return kind == .input && inputCount > 1 ? .large : .content
    }

    /// The sheet is owned by `context`'s screen, and by its tab when the sheet names one.
    public func isOwned(by context: ClientContext) -> Bool {
        guard screen == context.screen else { return false }
        guard let tab else { return true }
        return tab == context.tab
    }

    /// A card sheet (with a container to watch).
    var isCardSheet: Bool { kind == .cards }
}

/// A definition member that goes against a design document, and why.
public struct DesignFinding: Sendable, Equatable {
    public var field: String
    public var reason: String
    public init(field: String, reason: String) { self.field = field; self.reason = reason }
}

extension SheetDefinition {
    /// What the documents forbid outright: the catalog refuses it on write (400). Definitions stored
    /// before a rule existed still load; the policy renders them within the rule (see rule 8).
    public var designViolations: [DesignFinding] {
        var found: [DesignFinding] = []
        if style == .strict && dismissAffordance == .closeIcon {
            found.append(
                DesignFinding(
                    field: "dismissAffordance",
                    reason: "must not be closeIcon on a strict sheet (003: \"no top-right close button\"); use cancelButton or none"))
        }
        if kind == .action, let affordance = dismissAffordance, affordance != .none {
            found.append(
                DesignFinding(
                    field: "dismissAffordance",
                    reason: "must be none on an action sheet (000: \"Don't use an explicit button for dismissal\")"))
        }
        return found
    }

    /// What the documents advise against: accepted, with a warning in the catalog's answers. 003's "Don't
    /// use .flexible for forms / inputs" is a warning, not a 400: its own snapshots show a flexible OTP
    /// input sheet, and `flexible` is the catalog's default style, so refusing would break valid catalogs.
    public var designWarnings: [DesignFinding] {
        var found: [DesignFinding] = []
        if kind == .input && style == .flexible {
            found.append(
                DesignFinding(
                    field: "style",
                    reason: "flexible on an input sheet: 003 \"Don't use .flexible for forms / inputs\" (strict's header anchors the title)"))
        }
        if kind == .input && inputCount > 1, let size, size != .large {
            found.append(
                DesignFinding(
                    field: "size",
                    reason: "\(size.rawValue) with \(inputCount) inputs: 000 \"Use a Large Size sheet when presenting multiple inputs\""))
        }
        return found
    }
}

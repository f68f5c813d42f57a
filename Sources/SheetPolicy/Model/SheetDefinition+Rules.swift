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

import SheetPolicy

/// A realistic catalog: offer cards on the home screen's accounts tab, a filtered card container,
/// a filters form, account actions, informational sheets, a nested sheet and flows.
enum Fixtures {
    static let offers = SheetDefinition(
        id: "offers", kind: .cards, screen: "home", tab: "accounts", containerId: "offers", priority: 5)
    static let promo = SheetDefinition(
        id: "promo", kind: .cards, screen: "home", tab: "accounts", containerId: "promo", priority: 1)
    static let vipOffers = SheetDefinition(
        id: "vip-offers", kind: .cards, screen: "home", tab: "accounts", containerId: "offers",
        containerFilter: "vip", priority: 9)
    static let tipCards = SheetDefinition(
        id: "tip-cards", kind: .cards, screen: "home", containerId: "tips", priority: 5)
    static let filters = SheetDefinition(
        id: "filters", kind: .input, style: .strict, title: "Filter Transactions", screen: "home", tab: "accounts",
        inputCount: 3, confirmDismissWhenDirty: true, primaryButton: PrimaryButton(label: "Apply"))
    static let nickname = SheetDefinition(
        id: "nickname", kind: .input, style: .strict, title: "Nickname", screen: "home",
        confirmDismissWhenDirty: true, primaryButton: PrimaryButton(label: "Save"))
    static let accountActions = SheetDefinition(
        id: "account-actions", kind: .action, size: .medium, screen: "home", nonModalUpTo: .medium)
    static let offerDetail = SheetDefinition(
        id: "offer-detail", kind: .informational, size: .large, screen: "home", cornerRadius: 24)
    static let about = SheetDefinition(
        id: "about", kind: .informational, screen: "home", primaryButton: PrimaryButton(label: "Got it"))
    static let transferAmount = SheetDefinition(
        id: "transfer-amount", kind: .input, size: .large, style: .strict, title: "Amount", screen: "transfer")
    static let transferPayee = SheetDefinition(
        id: "transfer-payee", kind: .input, size: .large, style: .strict, title: "Payee", screen: "transfer")
    static let transferDone = SheetDefinition(
        id: "transfer-done", kind: .informational, screen: "transfer")
    static let locked = SheetDefinition(
        id: "locked", kind: .action, size: .large, screen: "vault", swipeToDismiss: false, tapScrimToDismiss: false)

    // Screen "more": the design documents' edge cases.
    /// 003's OTP snapshot: an input in a flexible sheet (the catalog warns; the Cancel button brings a header).
    static let otp = SheetDefinition(id: "otp", kind: .input, screen: "more")
    static let statement = SheetDefinition(
        id: "statement", kind: .informational, size: .large, style: .strict, title: "Statement", screen: "more")
    /// Stored before strict sheets refused a close icon.
    static let legacyStrict = SheetDefinition(
        id: "legacy-strict", kind: .informational, style: .strict, title: "Legacy", screen: "more",
        dismissAffordance: .closeIcon)
    static let noSwipe = SheetDefinition(
        id: "no-swipe", kind: .informational, size: .medium, screen: "more", nonModalUpTo: .large,
        swipeToDismiss: false)
    static let noScrimTap = SheetDefinition(
        id: "no-scrim-tap", kind: .action, size: .large, screen: "more", tapScrimToDismiss: false)

    static let all: [SheetDefinition] = [
        offers, promo, vipOffers, tipCards, filters, nickname, accountActions, offerDetail, about,
        transferAmount, transferPayee, transferDone, locked, otp, statement, legacyStrict, noSwipe, noScrimTap,
    ]
    static let catalog = Catalog(all)

    static func context(
        _ screen: String = "home", tab: String? = "accounts", platform: Platform = .ios, idiom: Idiom = .phone,
        orientation: Orientation = .portrait, keyboard: Bool = false, dirty: Bool = false, viewport: Double? = nil
    ) -> ClientContext {
        ClientContext(
            screen: screen, tab: tab, platform: platform, idiom: idiom, orientation: orientation,
            keyboardVisible: keyboard, dirty: dirty, viewportHeight: viewport)
    }
}

/// Event shorthands for tables.
extension UserEvent {
    static func count(_ container: String, _ count: Int, filter: String = "", seq: Int? = nil) -> Self {
        .countReported(containerId: container, filter: filter, count: count, seq: seq)
    }
    static func dismiss(_ sheet: String, _ method: DismissMethod = .swipe) -> Self {
        .sheetDismissed(sheetId: sheet, method: method)
    }
    static func push(_ sheet: String, parent: String? = nil) -> Self {
        .sheetOpened(sheetId: sheet, mode: .push, parentSheetId: parent)
    }
    static func replace(_ sheet: String, parent: String? = nil) -> Self {
        .sheetOpened(sheetId: sheet, mode: .replace, parentSheetId: parent)
    }
    static func height(_ sheet: String, _ height: Double, on platform: Platform = .ios) -> Self {
        .contentHeightMeasured(sheetId: sheet, platform: platform, height: height)
    }
}

extension Fixtures {
    /// The fixed clock of the policy tests: 2027-01-15T08:00:00Z.
    static let now = Timestamp(rfc3339: "2027-01-15T08:00:00Z")!
}

/// Folds events into a state, as the service does, one at a time.
func fold(_ events: [UserEvent], into state: UserState = UserState(), catalog: Catalog = Fixtures.catalog) -> UserState {
    var state = state
    for event in events { _ = SheetPolicy.apply(event, to: &state, catalog: catalog, now: Fixtures.now) }
    return state
}

extension Presentation {
    var iosConfiguration: IOSSheetConfiguration? {
        if case .ios(let configuration) = platform { return configuration }
        return nil
    }
    var androidConfiguration: AndroidSheetConfiguration? {
        if case .android(let configuration) = platform { return configuration }
        return nil
    }
}

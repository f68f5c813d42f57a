/// How the user (or the app) dismissed a sheet. Every method but `programmatic` latches a card sheet.
public enum DismissMethod: String, Sendable, CaseIterable {
    case swipe, scrim, closeButton, cancelButton, action, programmatic
}

/// A fact a client reports; `SheetPolicy.apply(_:to:catalog:now:)` folds it into the user's state.
public enum UserEvent: Sendable, Equatable {
    /// A card container's count, optionally under a filter and with a sequence number.
    case countReported(containerId: String, filter: String, count: Int, seq: Int?)
    /// The user dismissed a sheet.
    case sheetDismissed(sheetId: String, method: DismissMethod)
    /// A sheet was opened, nested (`push`) or as the next flow step (`replace`).
    case sheetOpened(sheetId: String, mode: OpenMode, parentSheetId: String?)
    /// The client measured a sheet's content height on a platform.
    case contentHeightMeasured(sheetId: String, platform: Platform, height: Double)
}

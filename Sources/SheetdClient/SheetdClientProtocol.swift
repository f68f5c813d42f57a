/// What an app needs of sheetd for one user: the decision (once or live) and the events it reports.
///
/// ``SheetdUserClient`` conforms; so does `FakeSheetdClient` of the `SheetdClientTesting` product, an
/// in-memory fake with scripted decisions and recorded events. Depend on this protocol (as the UIKit
/// and SwiftUI adapters do) and an app's unit tests need no server.
///
/// The requirements take every parameter; the extension below adds the short forms (no `eventId`,
/// the usual defaults) that the concrete client also has.
public protocol SheetdClientProtocol: Sendable {
    /// The decision for `context` (see ``SheetdUserClient/decision(for:)``).
    func decision(for context: SheetContext) async throws -> Decision
    /// The decision for `context`, live (see ``SheetdUserClient/decisions(for:)``).
    func decisions(for context: SheetContext) -> AsyncThrowingStream<SheetDecision, any Error>
    /// Reports a container's card count.
    func reportCount(_ count: Int, container: String, seq: Int?, filter: String?, eventId: String?) async throws -> EventReceipt<CountOutcome>
    /// Reports that the user (or the app) dismissed a sheet, and how.
    func dismiss(_ sheetId: String, method: DismissalMethod, eventId: String?) async throws -> EventReceipt<DismissalOutcome>
    /// Reports that a sheet was opened from another.
    func present(_ sheetId: String, mode: OpenMode, parentSheetId: String?, eventId: String?) async throws -> EventReceipt<PresentationOutcome>
    /// Reports a sheet's measured content height in points.
    func reportContentHeight(
        _ height: Double, sheetId: String, platform: Platform, eventId: String?
    ) async throws -> EventReceipt<ContentHeightOutcome>
    /// Reports that a sheet is on screen (what caps, stats and experiments count).
    func reportImpression(_ sheetId: String, eventId: String?) async throws -> EventReceipt<ImpressionOutcome>
    /// Reports a conversion for the sheet's experiment (counted for the user's arm within its window).
    func reportConversion(_ sheetId: String, goal: String?, eventId: String?) async throws -> EventReceipt<ConversionOutcome>
    /// Sends one stored event with its `eventId` (and, where the conformer can, its `occurredAt`):
    /// what ``SheetdOutbox`` delivers with. The default sends it through the report methods above.
    func deliver(_ event: SheetdEvent) async throws -> SheetdDelivery
    /// What is stored about the user.
    func state() async throws -> UserState
    /// The user's segments.
    func segments() async throws -> [String]
    /// The global campaign settings.
    func settings() async throws -> GlobalSettings
    /// Erases everything stored about the user.
    func erase() async throws
}

extension SheetdClientProtocol {
    /// Reports a container's card count with a new event id.
    @discardableResult
    public func reportCount(_ count: Int, container: String, seq: Int? = nil, filter: String? = nil) async throws -> EventReceipt<CountOutcome> {
        try await reportCount(count, container: container, seq: seq, filter: filter, eventId: nil)
    }

    /// Reports a dismissal with a new event id.
    @discardableResult
    public func dismiss(_ sheetId: String, method: DismissalMethod) async throws -> EventReceipt<DismissalOutcome> {
        try await dismiss(sheetId, method: method, eventId: nil)
    }

    /// Reports an opened sheet with a new event id.
    @discardableResult
    public func present(_ sheetId: String, mode: OpenMode = .push, parentSheetId: String? = nil) async throws -> EventReceipt<PresentationOutcome> {
        try await present(sheetId, mode: mode, parentSheetId: parentSheetId, eventId: nil)
    }

    /// Reports a content height with a new event id.
    @discardableResult
    public func reportContentHeight(_ height: Double, sheetId: String, platform: Platform = .ios) async throws -> EventReceipt<ContentHeightOutcome> {
        try await reportContentHeight(height, sheetId: sheetId, platform: platform, eventId: nil)
    }

    /// Reports a conversion with a new event id.
    @discardableResult
    public func reportConversion(_ sheetId: String, goal: String? = nil) async throws -> EventReceipt<ConversionOutcome> {
        try await reportConversion(sheetId, goal: goal, eventId: nil)
    }

    /// Reports an impression with a new event id.
    @discardableResult
    public func reportImpression(_ sheetId: String) async throws -> EventReceipt<ImpressionOutcome> {
        try await reportImpression(sheetId, eventId: nil)
    }
}

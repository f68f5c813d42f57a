public import Foundation

/// One event for the server, with its `eventId` and the time it happened fixed when it was made: what
/// the outbox stores and delivers (``SheetdOutbox``), and what ``SheetPresenter`` reports.
public struct SheetdEvent: Codable, Sendable, Equatable, Hashable {
    /// What happened.
    public enum Kind: Codable, Sendable, Equatable, Hashable {
        /// A container's card count (`PUT .../containers/{containerId}/count`).
        case count(container: String, count: Int, seq: Int?, filter: String?)
        /// A sheet on screen (`POST .../impressions`).
        case impression(sheetId: String)
        /// A sheet dismissed, and how (`POST .../dismissals`).
        case dismissal(sheetId: String, method: DismissalMethod)
        /// A sheet opened from another (`POST .../presentations`).
        case presentation(sheetId: String, mode: OpenMode, parentSheetId: String?)
        /// A measured content height (`PUT .../sheets/{sheetId}/content-height`).
        case contentHeight(sheetId: String, height: Double, platform: Platform)
        /// A conversion (`POST .../conversions`).
        case conversion(sheetId: String, goal: String?)
    }

    /// What happened.
    public var kind: Kind
    /// The server's idempotency key: the same event delivered twice is applied once.
    public var eventId: String
    /// When it happened (the device's clock); nil: when the server gets it.
    public var occurredAt: Date?

    /// An event of `kind` that happened at `occurredAt`, with a new event id.
    public init(_ kind: Kind, eventId: String = SheetdUserClient.makeEventId(), occurredAt: Date? = Date()) {
        self.kind = kind
        self.eventId = eventId
        self.occurredAt = occurredAt
    }

    /// The event a presenter report stands for.
    public init(_ report: SheetPresenter.Report, occurredAt: Date = Date()) {
        switch report {
        case .impression(let sheetId, let eventId):
            self.init(.impression(sheetId: sheetId), eventId: eventId, occurredAt: occurredAt)
        case .dismissal(let sheetId, let method, let eventId):
            self.init(.dismissal(sheetId: sheetId, method: method), eventId: eventId, occurredAt: occurredAt)
        case .presentation(let sheetId, let mode, let parentSheetId, let eventId):
            self.init(.presentation(sheetId: sheetId, mode: mode, parentSheetId: parentSheetId), eventId: eventId, occurredAt: occurredAt)
        case .contentHeight(let sheetId, let height, let eventId):
            self.init(.contentHeight(sheetId: sheetId, height: height, platform: .ios), eventId: eventId, occurredAt: occurredAt)
        }
    }

    /// The sheet the event is about (nil for a count).
    public var sheetId: String? {
        switch kind {
        case .count: nil
        case .impression(let id), .dismissal(let id, _), .presentation(let id, _, _), .contentHeight(let id, _, _), .conversion(let id, _): id
        }
    }
}

/// What delivering a ``SheetdEvent`` took.
public struct SheetdDelivery: Sendable, Equatable {
    /// The server had applied this `eventId` already (an earlier attempt's answer was lost): not applied twice.
    public var replayed: Bool
    /// The attempts it took.
    public var attempts: Int

    /// A delivery.
    public init(replayed: Bool, attempts: Int) {
        self.replayed = replayed
        self.attempts = attempts
    }
}

extension SheetdClientProtocol {
    /// Sends `event` with its event id through the protocol's report methods (a conformer that cannot
    /// send `occurredAt`: ``SheetdUserClient`` overrides this and sends it).
    public func deliver(_ event: SheetdEvent) async throws -> SheetdDelivery {
        let id = event.eventId
        func delivery<O>(_ receipt: EventReceipt<O>) -> SheetdDelivery { SheetdDelivery(replayed: receipt.replayed, attempts: receipt.attempts) }
        switch event.kind {
        case .count(let container, let count, let seq, let filter):
            return delivery(try await reportCount(count, container: container, seq: seq, filter: filter, eventId: id))
        case .impression(let sheetId):
            return delivery(try await reportImpression(sheetId, eventId: id))
        case .dismissal(let sheetId, let method):
            return delivery(try await dismiss(sheetId, method: method, eventId: id))
        case .presentation(let sheetId, let mode, let parentSheetId):
            return delivery(try await present(sheetId, mode: mode, parentSheetId: parentSheetId, eventId: id))
        case .contentHeight(let sheetId, let height, let platform):
            return delivery(try await reportContentHeight(height, sheetId: sheetId, platform: platform, eventId: id))
        case .conversion(let sheetId, let goal):
            return delivery(try await reportConversion(sheetId, goal: goal, eventId: id))
        }
    }
}

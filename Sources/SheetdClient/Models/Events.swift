// The events a client reports and their outcomes (openapi.yaml `CountReport` ... `ContentHeightOutcome`).

/// A container's card count: the body of `reportContainerCount` (openapi.yaml `CountReport`).
public struct CountReport: Codable, Sendable, Equatable, Hashable {
    /// The count, 0 to 1 000 000.
    public var count: Int
    /// Optional sequence number; a report at or below the last applied one is not applied.
    public var seq: Int?
    /// The filter the count was observed under; nil is no filter.
    public var filter: String?
    /// Makes the event idempotent; the client fills it in once per logical event.
    public var eventId: String?
    /// When the event happened, RFC 3339 (``SheetdUserClient/rfc3339(_:)``); nil: when the server gets it.
    /// Sent by the outbox for events delivered late (see ``SheetdOutbox``).
    public var occurredAt: String?

    /// A value with every member.
    public init(count: Int, seq: Int? = nil, filter: String? = nil, eventId: String? = nil, occurredAt: String? = nil) {
        self.count = count
        self.seq = seq
        self.filter = filter
        self.eventId = eventId
        self.occurredAt = occurredAt
    }
}

/// The outcome of a count report (openapi.yaml `CountOutcome`).
public struct CountOutcome: Codable, Sendable, Equatable, Hashable {
    /// The container.
    public var containerId: String
    /// The filter (empty: none).
    public var filter: String
    /// The stored count after the report.
    public var count: Int
    /// Whether the stored count changed.
    public var changed: Bool
    /// False when `seq` was at or below the last applied one.
    public var applied: Bool

    /// A value with every member.
    public init(containerId: String, filter: String, count: Int, changed: Bool, applied: Bool) {
        self.containerId = containerId
        self.filter = filter
        self.count = count
        self.changed = changed
        self.applied = applied
    }
}

/// A dismissed sheet: the body of `recordDismissal` (openapi.yaml `Dismissal`).
public struct Dismissal: Codable, Sendable, Equatable, Hashable {
    /// The sheet dismissed.
    public var sheetId: String
    /// How.
    public var method: DismissalMethod
    /// Makes the event idempotent; the client fills it in once per logical event.
    public var eventId: String?
    /// When the event happened, RFC 3339 (``SheetdUserClient/rfc3339(_:)``); nil: when the server gets it.
    /// Sent by the outbox for events delivered late (see ``SheetdOutbox``).
    public var occurredAt: String?

    /// A value with every member.
    public init(sheetId: String, method: DismissalMethod, eventId: String? = nil, occurredAt: String? = nil) {
        self.sheetId = sheetId
        self.method = method
        self.eventId = eventId
        self.occurredAt = occurredAt
    }
}

/// The user's stack after a dismissal (openapi.yaml `DismissalOutcome`).
public struct DismissalOutcome: Codable, Sendable, Equatable, Hashable {
    /// Sheet ids, bottom to top.
    public var stack: [String]
    /// Whether the dismissed sheet is now latched (card sheets).
    public var latched: Bool

    /// A value with every member.
    public init(stack: [String], latched: Bool) {
        self.stack = stack
        self.latched = latched
    }
}

/// An opened sheet: the body of `recordPresentation` (openapi.yaml `Presentation`).
public struct Presentation: Codable, Sendable, Equatable, Hashable {
    /// The sheet opened.
    public var sheetId: String
    /// Push or replace.
    public var mode: OpenMode
    /// The sheet the user is looking at (e.g. a card sheet).
    public var parentSheetId: String?
    /// Makes the event idempotent; the client fills it in once per logical event.
    public var eventId: String?
    /// When the event happened, RFC 3339 (``SheetdUserClient/rfc3339(_:)``); nil: when the server gets it.
    /// Sent by the outbox for events delivered late (see ``SheetdOutbox``).
    public var occurredAt: String?

    /// A value with every member.
    public init(sheetId: String, mode: OpenMode, parentSheetId: String? = nil, eventId: String? = nil, occurredAt: String? = nil) {
        self.sheetId = sheetId
        self.mode = mode
        self.parentSheetId = parentSheetId
        self.eventId = eventId
        self.occurredAt = occurredAt
    }
}

/// The user's stack after an opening (openapi.yaml `PresentationOutcome`).
public struct PresentationOutcome: Codable, Sendable, Equatable, Hashable {
    /// Sheet ids, bottom to top.
    public var stack: [String]

    /// A value with every member.
    public init(stack: [String]) {
        self.stack = stack
    }
}

/// A measured content height: the body of `reportContentHeight` (openapi.yaml `ContentHeight`).
public struct ContentHeight: Codable, Sendable, Equatable, Hashable {
    /// Points, 1 to 10 000.
    public var height: Double
    /// The platform it was measured on.
    public var platform: Platform
    /// Makes the event idempotent; the client fills it in once per logical event.
    public var eventId: String?
    /// When the event happened, RFC 3339 (``SheetdUserClient/rfc3339(_:)``); nil: when the server gets it.
    /// Sent by the outbox for events delivered late (see ``SheetdOutbox``).
    public var occurredAt: String?

    /// A value with every member.
    public init(height: Double, platform: Platform, eventId: String? = nil, occurredAt: String? = nil) {
        self.height = height
        self.platform = platform
        self.eventId = eventId
        self.occurredAt = occurredAt
    }
}

/// The stored height (openapi.yaml `ContentHeightOutcome`).
public struct ContentHeightOutcome: Codable, Sendable, Equatable, Hashable {
    /// The sheet.
    public var sheetId: String
    /// The platform.
    public var platform: Platform
    /// Points.
    public var height: Double

    /// A value with every member.
    public init(sheetId: String, platform: Platform, height: Double) {
        self.sheetId = sheetId
        self.platform = platform
        self.height = height
    }
}

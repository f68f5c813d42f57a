// Impressions, segments, the global settings and per-sheet stats (openapi.yaml `Impression` ... `SheetStats`).

/// The app presented a sheet: the body of `recordImpression` (openapi.yaml `Impression`).
public struct Impression: Codable, Sendable, Equatable, Hashable {
    /// The sheet put on screen.
    public var sheetId: String
    /// Makes the event idempotent; the client fills it in once per logical event.
    public var eventId: String?
    /// When the event happened, RFC 3339 (``SheetdUserClient/rfc3339(_:)``); nil: when the server gets it.
    /// Sent by the outbox for events delivered late (see ``SheetdOutbox``).
    public var occurredAt: String?

    /// A value with every member.
    public init(sheetId: String, eventId: String? = nil, occurredAt: String? = nil) {
        self.sheetId = sheetId
        self.eventId = eventId
        self.occurredAt = occurredAt
    }
}

/// The outcome of an impression (openapi.yaml `ImpressionOutcome`).
public struct ImpressionOutcome: Codable, Sendable, Equatable, Hashable {
    /// The sheet.
    public var sheetId: String
    /// The user's impressions of this sheet since first seen (a counter kept for good).
    public var impressions: Int

    /// A value with every member.
    public init(sheetId: String, impressions: Int) {
        self.sheetId = sheetId
        self.impressions = impressions
    }
}

/// The body of `putUserAttributes` (openapi.yaml `UserAttributesInput`).
public struct UserAttributesInput: Codable, Sendable, Equatable, Hashable {
    /// The user's segments (at most 64 ids); the server sorts them and drops duplicates.
    public var segments: [String]

    /// A value with every member.
    public init(segments: [String]) { self.segments = segments }
}

/// A user's segments as stored (openapi.yaml `UserAttributes`).
public struct UserAttributes: Codable, Sendable, Equatable, Hashable {
    /// The user.
    public var userId: String
    /// Sorted by UTF-8 bytes, no duplicates.
    public var segments: [String]

    /// A value with every member.
    public init(userId: String, segments: [String]) {
        self.userId = userId
        self.segments = segments
    }
}

/// The global campaign settings (openapi.yaml `Settings`); nil turns a rule off.
public struct GlobalSettings: Codable, Sendable, Equatable, Hashable {
    /// At most `max` impressions of card sheets per user per `periodSeconds`.
    public struct GlobalCap: Codable, Sendable, Equatable, Hashable {
        public var max: Int
        public var periodSeconds: Int

        /// A value with every member.
        public init(max: Int, periodSeconds: Int) {
            self.max = max
            self.periodSeconds = periodSeconds
        }
    }

    /// Nil: off.
    public var globalCap: GlobalCap?
    /// No card sheet within this many seconds of the user's last impression of any card sheet; nil: off.
    public var minIntervalSeconds: Int?

    /// A value with every member.
    public init(globalCap: GlobalCap? = nil, minIntervalSeconds: Int? = nil) {
        self.globalCap = globalCap
        self.minIntervalSeconds = minIntervalSeconds
    }

    /// Writes both members, null when off, so that a PUT turns a rule off explicitly.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(globalCap, forKey: .globalCap)
        try c.encode(minIntervalSeconds, forKey: .minIntervalSeconds)
    }
}

/// How a sheet performs (openapi.yaml `SheetStats`).
public struct SheetStats: Codable, Sendable, Equatable, Hashable {
    /// Dismissals per method.
    public struct Dismissals: Codable, Sendable, Equatable, Hashable {
        public var swipe: Int
        public var scrim: Int
        public var closeButton: Int
        public var cancelButton: Int
        public var action: Int
        public var programmatic: Int

        /// A value with every member.
        public init(swipe: Int = 0, scrim: Int = 0, closeButton: Int = 0, cancelButton: Int = 0, action: Int = 0, programmatic: Int = 0) {
            self.swipe = swipe
            self.scrim = scrim
            self.closeButton = closeButton
            self.cancelButton = cancelButton
            self.action = action
            self.programmatic = programmatic
        }
    }

    /// The sheet.
    public var sheetId: String
    /// The `since` asked for, as sent (RFC 3339); nil for the totals.
    public var since: String?
    public var impressions: Int
    /// Distinct users with an impression.
    public var uniqueUsers: Int
    public var dismissals: Dismissals
    /// Count changes that released a user's latch of this sheet.
    public var latchReleases: Int
    /// Presentations reported with this sheet as their parent.
    public var openedFrom: Int

    /// A value with every member.
    public init(
        sheetId: String, since: String? = nil, impressions: Int, uniqueUsers: Int, dismissals: Dismissals, latchReleases: Int,
        openedFrom: Int
    ) {
        self.sheetId = sheetId
        self.since = since
        self.impressions = impressions
        self.uniqueUsers = uniqueUsers
        self.dismissals = dismissals
        self.latchReleases = latchReleases
        self.openedFrom = openedFrom
    }
}

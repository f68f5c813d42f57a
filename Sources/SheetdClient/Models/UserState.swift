// What is stored about one user (openapi.yaml `UserState`).

/// What is stored about one user, for support (openapi.yaml `UserState`).
public struct UserState: Codable, Sendable, Equatable, Hashable {
    /// One container's stored count under one filter.
    public struct Container: Codable, Sendable, Equatable, Hashable {
        /// The container.
        public var containerId: String
        /// The filter (empty: none).
        public var filter: String
        /// The stored count.
        public var count: Int
        /// The last applied sequence number; nil when no report carried one.
        public var seq: Int?

        /// A value with every member.
        public init(containerId: String, filter: String, count: Int, seq: Int? = nil) {
            self.containerId = containerId
            self.filter = filter
            self.count = count
            self.seq = seq
        }
    }

    /// A card sheet latched closed at a count.
    public struct Latch: Codable, Sendable, Equatable, Hashable {
        /// The sheet.
        public var sheetId: String
        /// The container's count when the user dismissed the sheet.
        public var count: Int

        /// A value with every member.
        public init(sheetId: String, count: Int) {
            self.sheetId = sheetId
            self.count = count
        }
    }

    /// One opened sheet of the stack.
    public struct StackEntry: Codable, Sendable, Equatable, Hashable {
        /// The sheet.
        public var sheetId: String
        /// How it was opened.
        public var mode: OpenMode

        /// A value with every member.
        public init(sheetId: String, mode: OpenMode) {
            self.sheetId = sheetId
            self.mode = mode
        }
    }

    /// A measured content height.
    public struct ContentHeight: Codable, Sendable, Equatable, Hashable {
        /// The sheet.
        public var sheetId: String
        /// The platform it was measured on.
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

    /// One sheet's impressions.
    public struct Impressions: Codable, Sendable, Equatable, Hashable {
        /// The sheet.
        public var sheetId: String
        /// Impressions since the user was first seen (kept for good).
        public var total: Int
        /// The impression times the campaign rules keep (RFC 3339, oldest first).
        public var recent: [String]

        /// A value with every member.
        public init(sheetId: String, total: Int, recent: [String]) {
            self.sheetId = sheetId
            self.total = total
            self.recent = recent
        }
    }

    /// The latest dismissal of a sheet (cooldowns).
    public struct LastDismissal: Codable, Sendable, Equatable, Hashable {
        /// The sheet.
        public var sheetId: String
        /// When (RFC 3339).
        public var at: String

        /// A value with every member.
        public init(sheetId: String, at: String) {
            self.sheetId = sheetId
            self.at = at
        }
    }

    /// The user.
    public var userId: String
    /// Counts, by container id then filter.
    public var containers: [Container]
    /// Latches, by sheet id.
    public var latches: [Latch]
    /// Opened sheets, bottom to top.
    public var stack: [StackEntry]
    /// Measured heights, by sheet id then platform.
    public var contentHeights: [ContentHeight]
    /// Impressions, by sheet id (empty from a server before the campaign rules).
    public var impressions: [Impressions]
    /// Latest dismissals, by sheet id (empty from a server before the campaign rules).
    public var lastDismissals: [LastDismissal]
    /// The operator's segments of the user (empty from a server before the campaign rules).
    public var segments: [String]

    /// A value with every member.
    public init(
        userId: String, containers: [Container], latches: [Latch], stack: [StackEntry], contentHeights: [ContentHeight],
        impressions: [Impressions] = [], lastDismissals: [LastDismissal] = [], segments: [String] = []
    ) {
        self.userId = userId
        self.containers = containers
        self.latches = latches
        self.stack = stack
        self.contentHeights = contentHeights
        self.impressions = impressions
        self.lastDismissals = lastDismissals
        self.segments = segments
    }

    enum CodingKeys: String, CodingKey {
        case userId, containers, latches, stack, contentHeights, impressions, lastDismissals, segments
    }

    /// Decodes the state view; the campaign members read as empty when absent (an older server).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        userId = try c.decode(String.self, forKey: .userId)
        containers = try c.decode([Container].self, forKey: .containers)
        latches = try c.decode([Latch].self, forKey: .latches)
        stack = try c.decode([StackEntry].self, forKey: .stack)
        contentHeights = try c.decode([ContentHeight].self, forKey: .contentHeights)
        impressions = try c.decodeIfPresent([Impressions].self, forKey: .impressions) ?? []
        lastDismissals = try c.decodeIfPresent([LastDismissal].self, forKey: .lastDismissals) ?? []
        segments = try c.decodeIfPresent([String].self, forKey: .segments) ?? []
    }
}

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

    /// A value with every member.
    public init(userId: String, containers: [Container], latches: [Latch], stack: [StackEntry], contentHeights: [ContentHeight]) {
        self.userId = userId
        self.containers = containers
        self.latches = latches
        self.stack = stack
        self.contentHeights = contentHeights
    }
}

/// A card container as counted under one filter; the empty filter is "no filter".
public struct ContainerKey: Hashable, Sendable, Comparable {
    public var containerId: String
    public var filter: String
    public init(containerId: String, filter: String = "") { self.containerId = containerId; self.filter = filter }
    public static func < (a: Self, b: Self) -> Bool {
        if a.containerId != b.containerId { return a.containerId.utf8.lexicographicallyPrecedes(b.containerId.utf8) }
        return a.filter.utf8.lexicographicallyPrecedes(b.filter.utf8)
    }
}

/// The last count applied for a container key and the sequence number that carried it.
public struct ContainerCount: Sendable, Equatable {
    public var count: Int
    /// The highest `seq` applied so far; `nil` when no report carried one.
    public var seq: Int?
    public init(count: Int, seq: Int? = nil) { self.count = count; self.seq = seq }
}

/// How a sheet came onto the stack.
public enum OpenMode: String, Sendable, CaseIterable {
    /// Nested on its parent; dismissing it returns to the parent.
    case push
    /// The next step of a flow: it took the place of the previous top.
    case replace
}

/// One sheet of the user's stack.
public struct StackEntry: Sendable, Equatable {
    public var sheetId: String
    public var mode: OpenMode
    /// `replace` entries: the flow step this one took the place of (decides the transition); `nil` when unknown.
    public var replacedSheetId: String?
    public init(sheetId: String, mode: OpenMode, replacedSheetId: String? = nil) {
        self.sheetId = sheetId; self.mode = mode; self.replacedSheetId = replacedSheetId
    }
}

/// The mobile platform a context or a measured height belongs to.
public enum Platform: String, Sendable, CaseIterable, Comparable {
    case ios, android
    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// A measured content height is per sheet and platform.
public struct HeightKey: Hashable, Sendable, Comparable {
    public var sheetId: String
    public var platform: Platform
    public init(sheetId: String, platform: Platform) { self.sheetId = sheetId; self.platform = platform }
    public static func < (a: Self, b: Self) -> Bool {
        if a.sheetId != b.sheetId { return a.sheetId.utf8.lexicographicallyPrecedes(b.sheetId.utf8) }
        return a.platform < b.platform
    }
}

/// Everything stored about one user, as the policy sees it.
public struct UserState: Sendable, Equatable {
    /// Last count and sequence number per container and filter.
    public var containers: [ContainerKey: ContainerCount]
    /// Latched card sheets: sheet id → the container count when the user dismissed it.
    public var latches: [String: Int]
    /// Opened sheets, bottom to top.
    public var stack: [StackEntry]
    /// Measured content heights in points.
    public var contentHeights: [HeightKey: Double]
    /// Impressions, dismissal times and segments for the campaign rules.
    public var campaign: CampaignState
    /// Experiment exposures (for conversion windows) and QA pins.
    public var experiments: ExperimentState

    public init(
        containers: [ContainerKey: ContainerCount] = [:], latches: [String: Int] = [:],
        stack: [StackEntry] = [], contentHeights: [HeightKey: Double] = [:], campaign: CampaignState = CampaignState(),
        experiments: ExperimentState = ExperimentState()
    ) {
        self.containers = containers; self.latches = latches; self.stack = stack; self.contentHeights = contentHeights
        self.campaign = campaign
        self.experiments = experiments
    }

    /// The stored count for a key; none stored reads as 0.
    public func count(for key: ContainerKey) -> Int {
        // A decision asks this for every card sheet of the screen, and most users count a few
        // containers: comparing their keys (short strings compare as two words) costs less than
        // hashing two strings.
        if containers.count <= 8 {
            for (stored, value) in containers where stored.containerId == key.containerId && stored.filter == key.filter {
                return value.count
            }
            return 0
        }
        return containers[key]?.count ?? 0
    }
}

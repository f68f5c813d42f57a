public import SheetPolicy

/// How much one user may store. Every event loads and rewrites the user's whole state on the single
/// writer, so an unbounded state would slow every user's writes.
///
/// A limit refuses only growth: an event that would take a dimension above its maximum is refused,
/// while a user already above it (a limit lowered since) can still change or shrink what is stored.
/// Backend-neutral: `enforcing` wraps an update body, so every store applies it the same way.
public struct UserStateLimits: Sendable, Equatable {
    /// One bounded dimension of a user's state (segments are bounded by `PUT .../attributes` itself).
    public enum Limit: String, Sendable, CaseIterable {
        /// Container counts kept, each container and filter counted once.
        case containers = "containers-per-user"
        /// Sheets on the stack.
        case stackDepth = "stack-depth"
        /// Measured content heights kept, per sheet and platform.
        case contentHeights = "content-heights-per-user"
        /// Impression times kept in the log behind the campaign rules (all sheets together; the log is
        /// pruned past the longest period a rule needs, so this bounds impressions within that period).
        case impressions = "impressions-per-user"

        /// How many of this dimension `state` holds.
        public func count(in state: UserState) -> Int {
            switch self {
            case .containers: state.containers.count
            case .stackDepth: state.stack.count
            case .contentHeights: state.contentHeights.count
            case .impressions: state.campaign.impressions.values.reduce(0) { $0 + $1.count }
            }
        }
    }

    public var containers: Int
    public var stackDepth: Int
    public var contentHeights: Int
    public var impressions: Int

    public static let defaultContainers = 256
    public static let defaultStackDepth = 32
    public static let defaultContentHeights = 512
    public static let defaultImpressions = 1024

    public init(
        containers: Int = UserStateLimits.defaultContainers, stackDepth: Int = UserStateLimits.defaultStackDepth,
        contentHeights: Int = UserStateLimits.defaultContentHeights, impressions: Int = UserStateLimits.defaultImpressions
    ) {
        self.containers = containers
        self.stackDepth = stackDepth
        self.contentHeights = contentHeights
        self.impressions = impressions
    }

    /// The maximum of one dimension.
    public func maximum(_ limit: Limit) -> Int {
        switch limit {
        case .containers: containers
        case .stackDepth: stackDepth
        case .contentHeights: contentHeights
        case .impressions: impressions
        }
    }

    /// Refuses the change from `before` to `after` when it grows a dimension above its maximum.
    public func check(from before: UserState, to after: UserState) throws(StateLimitExceeded) {
        try check(countsBefore: Limit.allCases.map { $0.count(in: before) }, after: after)
    }

    /// `body`, refused with `StateLimitExceeded` when it grows the state beyond a limit. Thrown from
    /// the body, the refusal rolls the event back: nothing is stored and the event id is not recorded.
    public func enforcing(
        _ body: @escaping @Sendable (inout UserState) throws -> [UInt8]
    ) -> @Sendable (inout UserState) throws -> [UInt8] {
        { [self] state in
            // Only the sizes are kept: a copy of the state would make the body's first write copy it all.
            let before = Limit.allCases.map { $0.count(in: state) }
            let outcome = try body(&state)
            try check(countsBefore: before, after: state)
            return outcome
        }
    }

    /// The same for a body that emits activity records (see `SheetStore.update`).
    public func enforcing(
        _ body: @escaping @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8]
    ) -> @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8] {
        { [self] state, activity in
            let before = Limit.allCases.map { $0.count(in: state) }
            let outcome = try body(&state, &activity)
            try check(countsBefore: before, after: state)
            return outcome
        }
    }

    private func check(countsBefore: [Int], after: UserState) throws(StateLimitExceeded) {
        for (limit, countBefore) in zip(Limit.allCases, countsBefore) {
            let count = limit.count(in: after)
            if count > maximum(limit) && count > countBefore {
                throw StateLimitExceeded(limit: limit, maximum: maximum(limit))
            }
        }
    }
}

/// An event refused because it would store more for one user than a limit allows.
public struct StateLimitExceeded: Error, Sendable, Equatable, CustomStringConvertible {
    public var limit: UserStateLimits.Limit
    public var maximum: Int

    public init(limit: UserStateLimits.Limit, maximum: Int) {
        self.limit = limit
        self.maximum = maximum
    }

    public var description: String {
        switch limit {
        case .containers: "the user already has the most containers kept (\(maximum)); this event would add one"
        case .stackDepth: "the user's stack is already as deep as allowed (\(maximum)); this event would push onto it"
        case .contentHeights: "the user already has the most content heights kept (\(maximum)); this event would add one"
        case .impressions:
            "the user already has the most impressions kept within the longest rule period (\(maximum)); this event would add one"
        }
    }
}

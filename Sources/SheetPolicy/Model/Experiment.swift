/// Whether an experiment still assigns users to its arms.
public enum ExperimentStatus: String, Sendable, CaseIterable {
    /// Users are assigned by bucket; its arms and weights cannot change.
    case running
    /// Nobody is assigned any more: with a `winner`, everyone gets that arm; without, the sheet as defined.
    case stopped
}

/// One arm of an experiment: a share of the users and what they get.
public struct ExperimentArm: Sendable, Equatable {
    public var id: String
    /// A positive share; arm i covers the buckets below `floor(10000 * (w0 + ... + wi) / total)`.
    public var weight: Int
    /// The arm's users are not shown the sheet (they are the baseline of the results).
    public var holdout: Bool
    /// The arm's `payload` object as canonical JSON bytes (the app picks its content with it); nil when none.
    public var payloadJSON: [UInt8]?
    /// The arm's `overrides` object as canonical JSON bytes; nil when none.
    public var overridesJSON: [UInt8]?
    /// The sheet's definition with the overrides applied (no `experiment` of its own); nil when none.
    public var definition: SheetDefinition?

    public init(
        id: String, weight: Int, holdout: Bool = false, payloadJSON: [UInt8]? = nil, overridesJSON: [UInt8]? = nil,
        definition: SheetDefinition? = nil
    ) {
        self.id = id; self.weight = weight; self.holdout = holdout; self.payloadJSON = payloadJSON
        self.overridesJSON = overridesJSON; self.definition = definition
    }
}

/// A catalog sheet's experiment: its users split into arms by a stable hash of the user id.
public struct Experiment: Sendable, Equatable {
    public var id: String
    public var status: ExperimentStatus
    public var arms: [ExperimentArm]
    /// A conversion counts for the user's arm while `at < exposedAt + conversionWindowSeconds`.
    public var conversionWindowSeconds: Int
    /// Stopped experiments: the arm every user gets (the holdout's users included).
    public var winner: String?

    /// Buckets run from 0 to `bucketCount - 1`.
    public static let bucketCount: UInt64 = 10_000

    public init(id: String, status: ExperimentStatus, arms: [ExperimentArm], conversionWindowSeconds: Int, winner: String? = nil) {
        self.id = id; self.status = status; self.arms = arms
        self.conversionWindowSeconds = conversionWindowSeconds; self.winner = winner
    }

    /// The text whose SHA-256 places a user: `"<experimentId>:<userId>"`.
    public static func hashInput(experimentId: String, userId: String) -> String { experimentId + ":" + userId }

    /// The bucket of a hash prefix (the first 8 bytes of SHA-256, big-endian): the prefix modulo 10 000.
    public static func bucket(hashPrefix: UInt64) -> Int { Int(hashPrefix % bucketCount) }

    /// The exclusive upper bucket of each arm, in listed order: `floor(10000 * (w0 + ... + wi) / total)`
    /// (the last is always 10 000).
    public var upperBuckets: [Int] {
        let total = arms.reduce(0) { $0 + $1.weight }
        guard total > 0 else { return arms.map { _ in 0 } }
        var running = 0
        return arms.map { arm in
            running += arm.weight
            return Int(Self.bucketCount) * running / total
        }
    }

    /// The index of the arm covering `bucket` (0 ..< 10 000).
    public func armIndex(forBucket bucket: Int) -> Int {
        let bounds = upperBuckets
        return bounds.firstIndex(where: { bucket < $0 }) ?? max(arms.count - 1, 0)
    }

    /// The arm named `id`.
    public func arm(_ id: String) -> ExperimentArm? { arms.first { $0.id == id } }

    /// Whether two versions of an experiment assign every user alike: same arms (ids, weights,
    /// holdout), in the same order.
    public func assignsAlike(_ other: Experiment) -> Bool {
        arms.count == other.arms.count
            && zip(arms, other.arms).allSatisfy { $0.id == $1.id && $0.weight == $1.weight && $0.holdout == $1.holdout }
    }
}

/// How a decision places users in experiments: the user and the hash that buckets them. The policy
/// has no digest of its own (it imports only the standard library); the service passes SHA-256's.
public struct ExperimentAssigner: Sendable {
    public var userId: String
    /// The first 8 bytes of SHA-256 of the UTF-8 of its argument, big-endian.
    public var hashPrefix: @Sendable (String) -> UInt64

    public init(userId: String, hashPrefix: @escaping @Sendable (String) -> UInt64) {
        self.userId = userId; self.hashPrefix = hashPrefix
    }

    /// The user's bucket in `experiment` (0 ..< 10 000).
    public func bucket(in experiment: Experiment) -> Int {
        Experiment.bucket(hashPrefix: hashPrefix(Experiment.hashInput(experimentId: experiment.id, userId: userId)))
    }
}

/// Why a user got the arm they got (trace lines and exposure).
public enum ArmSource: String, Sendable, CaseIterable {
    /// By bucket, in a running experiment.
    case bucket
    /// A QA pin (`PUT /v1/experiments/{experimentId}/pins/{userId}`): not exposed, not counted.
    case pinned
    /// The winner of a stopped experiment: not exposed.
    case winner
}

/// The arm a user gets in one experiment.
public struct ArmAssignment: Sendable, Equatable {
    public var experimentId: String
    public var arm: ExperimentArm
    public var source: ArmSource
    /// The bucket, when the source is `bucket`.
    public var bucket: Int?
    public init(experimentId: String, arm: ExperimentArm, source: ArmSource, bucket: Int? = nil) {
        self.experimentId = experimentId; self.arm = arm; self.source = source; self.bucket = bucket
    }
    /// A holdout user is not shown the sheet (never so with the winner of a stopped experiment).
    public var holdsOut: Bool { arm.holdout && source != .winner }
    /// A decision presenting (or, for the holdout, holding) the sheet exposes the user.
    public var exposes: Bool { source == .bucket }
}

/// The `experiment` of a presented sheet: which experiment, which arm, and the arm's payload.
public struct PresentedExperiment: Sendable, Equatable {
    public var id: String
    public var arm: String
    /// Canonical JSON bytes of the arm's payload object; nil when the arm has none (JSON null).
    public var payloadJSON: [UInt8]?
    public init(id: String, arm: String, payloadJSON: [UInt8]?) { self.id = id; self.arm = arm; self.payloadJSON = payloadJSON }
}

/// A user the decision exposes to an experiment: the first such decision counts (stored once per
/// experiment and user, insert-or-ignore), repeated ones do not.
public struct ExperimentExposure: Sendable, Equatable, Hashable {
    public var experimentId: String
    public var sheetId: String
    public var arm: String
    public init(experimentId: String, sheetId: String, arm: String) {
        self.experimentId = experimentId; self.sheetId = sheetId; self.arm = arm
    }
}

/// What a user's state keeps about experiments: their exposures (for conversion windows) and QA pins.
public struct ExperimentState: Sendable, Equatable {
    public struct Exposure: Sendable, Equatable {
        public var arm: String
        public var at: Timestamp
        public init(arm: String, at: Timestamp) { self.arm = arm; self.at = at }
    }
    /// Experiment id → the user's first exposure.
    public var exposures: [String: Exposure]
    /// Experiment id → the arm a QA pin puts the user in.
    public var pins: [String: String]
    /// Experiment id → the conversions of this user counted so far (for an arm or unattributed), so
    /// that one user cannot count more than the per-user cap (`SheetPolicy.recordConversion`).
    public var conversions: [String: Int]
    public init(exposures: [String: Exposure] = [:], pins: [String: String] = [:], conversions: [String: Int] = [:]) {
        self.exposures = exposures; self.pins = pins; self.conversions = conversions
    }
    public var isEmpty: Bool { exposures.isEmpty && pins.isEmpty && conversions.isEmpty }
}

extension Experiment {
    /// The arm of the user this assigner places, or nil when the experiment assigns nothing
    /// (stopped without a winner, or a winner no longer among the arms).
    public func assignment(for assigner: ExperimentAssigner, pins: [String: String]) -> ArmAssignment? {
        if status == .stopped {
            guard let winner, let arm = arm(winner) else { return nil }
            return ArmAssignment(experimentId: id, arm: arm, source: .winner)
        }
        if let pinned = pins[id], let arm = arm(pinned) {
            return ArmAssignment(experimentId: id, arm: arm, source: .pinned)
        }
        guard !arms.isEmpty else { return nil }
        let bucket = assigner.bucket(in: self)
        return ArmAssignment(experimentId: id, arm: arms[armIndex(forBucket: bucket)], source: .bucket, bucket: bucket)
    }

    /// Whether a conversion at `at` falls in the window opened by an exposure at `exposedAt`:
    /// `exposedAt <= at < exposedAt + conversionWindowSeconds` (milliseconds, exact).
    public func isWithinWindow(_ at: Timestamp, exposedAt: Timestamp) -> Bool {
        exposedAt <= at && at < exposedAt.adding(seconds: conversionWindowSeconds)
    }
}

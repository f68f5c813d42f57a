/// Any JSON value: an arm's `payload` and `overrides` are objects sheetd does not interpret.
public enum JSONValue: Codable, Sendable, Equatable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Decodes whatever JSON value is there.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else {
            self = .object(try c.decode([String: JSONValue].self))
        }
    }

    /// Encodes the value as it came.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n): try c.encode(n)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// The string, when this is one.
    public var string: String? { if case .string(let s) = self { s } else { nil } }
}

/// The experiment of a presented sheet (openapi.yaml `PresentedExperiment`): the user's arm, whose
/// overrides the presentation already has, and its payload for the app to pick its content.
public struct PresentedExperiment: Codable, Sendable, Equatable, Hashable {
    /// The experiment's id.
    public var id: String
    /// The user's arm.
    public var arm: String
    /// The arm's payload object, or nil when it has none.
    public var payload: [String: JSONValue]?

    /// A value with every member.
    public init(id: String, arm: String, payload: [String: JSONValue]? = nil) {
        self.id = id
        self.arm = arm
        self.payload = payload
    }
}

/// One arm of a sheet's experiment (openapi.yaml `ExperimentArmInput`, and the arms of `Experiment`).
public struct ExperimentArm: Codable, Sendable, Equatable, Hashable {
    /// The arm's id.
    public var id: String
    /// Its share of the users (a positive integer).
    public var weight: Int
    /// Whether its users are held out (not shown the sheet).
    public var holdout: Bool?
    /// Definition members this arm's users get instead.
    public var overrides: [String: JSONValue]?
    /// The arm's payload for the app.
    public var payload: [String: JSONValue]?

    /// A value with every member.
    public init(id: String, weight: Int, holdout: Bool? = nil, overrides: [String: JSONValue]? = nil, payload: [String: JSONValue]? = nil) {
        self.id = id
        self.weight = weight
        self.holdout = holdout
        self.overrides = overrides
        self.payload = payload
    }
}

/// A sheet's experiment (openapi.yaml `ExperimentInput` and `Experiment`).
public struct ExperimentDefinition: Codable, Sendable, Equatable, Hashable {
    /// The experiment's id (one sheet's).
    public var id: String
    /// `running` or `stopped`.
    public var status: String
    /// The arms, in the order their bucket ranges follow.
    public var arms: [ExperimentArm]
    /// A conversion counts for the arm within this many seconds of the exposure.
    public var conversionWindowSeconds: Int
    /// A stopped experiment's winner (every user gets it).
    public var winner: String?

    /// A value with every member.
    public init(id: String, status: String, arms: [ExperimentArm], conversionWindowSeconds: Int, winner: String? = nil) {
        self.id = id
        self.status = status
        self.arms = arms
        self.conversionWindowSeconds = conversionWindowSeconds
        self.winner = winner
    }
}

/// The body of `recordConversion` (openapi.yaml `Conversion`).
public struct Conversion: Codable, Sendable, Equatable, Hashable {
    /// The sheet whose experiment the conversion is for.
    public var sheetId: String
    /// What was achieved (echoed).
    public var goal: String?
    /// Makes the event idempotent.
    public var eventId: String?
    /// When the event happened, RFC 3339 (``SheetdUserClient/rfc3339(_:)``); nil: when the server gets it.
    /// Sent by the outbox for events delivered late (see ``SheetdOutbox``).
    public var occurredAt: String?

    /// A value with every member.
    public init(sheetId: String, goal: String? = nil, eventId: String? = nil, occurredAt: String? = nil) {
        self.sheetId = sheetId
        self.goal = goal
        self.eventId = eventId
        self.occurredAt = occurredAt
    }
}

/// Where a conversion counted (openapi.yaml `ConversionOutcome`).
public struct ConversionOutcome: Codable, Sendable, Equatable, Hashable {
    /// The sheet.
    public var sheetId: String
    /// The sheet's experiment, or nil when it has none.
    public var experimentId: String?
    /// The goal, as reported.
    public var goal: String?
    /// False for a pinned user and a sheet without an experiment.
    public var counted: Bool
    /// The arm it counted for; nil when unattributed.
    public var arm: String?
    /// True when the user reached the experiment's per-user cap of conversions, so this one did not
    /// count (nil from servers older than the cap).
    public var capped: Bool?

    /// A value with every member.
    public init(sheetId: String, experimentId: String? = nil, goal: String? = nil, counted: Bool, arm: String? = nil, capped: Bool? = nil) {
        self.sheetId = sheetId
        self.experimentId = experimentId
        self.goal = goal
        self.counted = counted
        self.arm = arm
        self.capped = capped
    }
}

/// An experiment's results (openapi.yaml `ExperimentResults`).
public struct ExperimentResults: Codable, Sendable, Equatable, Hashable {
    /// One arm's exact counts, pinned users left out.
    public struct Arm: Codable, Sendable, Equatable, Hashable {
        public var id: String
        public var holdout: Bool
        public var weight: Int
        public var exposedUsers: Int
        public var impressions: Int
        public var convertedUsers: Int
        public var conversions: Int
        public var conversionRate: Double
    }
    /// One arm against the baseline (the holdout, else the first arm).
    public struct Comparison: Codable, Sendable, Equatable, Hashable {
        public var arm: String
        public var baseline: String
        public var difference: Double
        /// The 95 % interval of the difference; nil while an arm has no users.
        public var ci95: [Double]?
        /// Two-sided p-value of the two-proportion z-test; nil while an arm has no users.
        public var pValue: Double?
    }
    /// The chi-square test of the exposed users against the weights.
    public struct SampleRatio: Codable, Sendable, Equatable, Hashable {
        public var chiSquare: Double
        public var pValue: Double
        /// True when the p-value is below 0.001.
        public var mismatch: Bool
    }
    public var experimentId: String
    public var status: String
    public var winner: String?
    public var arms: [Arm]
    public var comparisons: [Comparison]
    public var sampleRatio: SampleRatio
    /// Conversions outside any exposure's window.
    public var unattributed: Int
    /// The most conversions one user counts per experiment (nil from servers older than the cap).
    public var conversionCapPerUser: Int?
}

/// The body of `pinExperimentArm` (openapi.yaml `PinInput`).
public struct PinInput: Codable, Sendable, Equatable, Hashable {
    public var arm: String
    /// A value with every member.
    public init(arm: String) { self.arm = arm }
}

/// A QA pin (openapi.yaml `Pin`); `arm` nil once removed.
public struct Pin: Codable, Sendable, Equatable, Hashable {
    public var experimentId: String
    public var userId: String
    public var arm: String?
}

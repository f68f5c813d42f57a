import JSONKit
public import SheetPolicy

/// The answer of `GET /v1/experiments/{experimentId}/results`: exact counts per arm, each arm
/// compared with the baseline, and the sample ratio check. The statistics are the service's; this
/// is their wire form.
public struct ExperimentResults: Sendable, Equatable {
    /// One arm's counts.
    public struct Arm: Sendable, Equatable {
        public var id: String
        public var holdout: Bool
        public var weight: Int
        public var exposedUsers: Int
        public var impressions: Int
        public var convertedUsers: Int
        public var conversions: Int
        public var conversionRate: Double

        public init(
            id: String, holdout: Bool, weight: Int, exposedUsers: Int, impressions: Int, convertedUsers: Int, conversions: Int,
            conversionRate: Double
        ) {
            self.id = id; self.holdout = holdout; self.weight = weight; self.exposedUsers = exposedUsers; self.impressions = impressions
            self.convertedUsers = convertedUsers; self.conversions = conversions; self.conversionRate = conversionRate
        }
    }

    /// One arm against the baseline.
    public struct Comparison: Sendable, Equatable {
        public var arm: String
        public var baseline: String
        public var difference: Double
        public var ci95: [Double]?
        public var pValue: Double?

        public init(arm: String, baseline: String, difference: Double, ci95: [Double]?, pValue: Double?) {
            self.arm = arm; self.baseline = baseline; self.difference = difference; self.ci95 = ci95; self.pValue = pValue
        }
    }

    public var experimentId: String
    public var status: ExperimentStatus
    public var winner: String?
    public var arms: [Arm]
    public var comparisons: [Comparison]
    public var chiSquare: Double
    public var sampleRatioPValue: Double
    public var unattributed: Int
    /// The most conversions one user counts per experiment (`conversions` and `unattributed` stop
    /// there; rates are over `convertedUsers`, which the cap does not change).
    public var conversionCapPerUser: Int

    public init(
        experimentId: String, status: ExperimentStatus, winner: String?, arms: [Arm], comparisons: [Comparison], chiSquare: Double,
        sampleRatioPValue: Double, unattributed: Int, conversionCapPerUser: Int
    ) {
        self.experimentId = experimentId; self.status = status; self.winner = winner; self.arms = arms; self.comparisons = comparisons
        self.chiSquare = chiSquare; self.sampleRatioPValue = sampleRatioPValue; self.unattributed = unattributed
        self.conversionCapPerUser = conversionCapPerUser
    }

    /// The body; `sampleRatio.mismatch` when its p-value is under 0.001.
    public func jsonBytes() -> [UInt8] {
        var w = JSONWriter()
        w.object { o in
            o.member("experimentId", experimentId)
            o.member("status", status.rawValue)
            o.member("winner", winner)
            o.arrayMember("arms") { items in
                for arm in arms {
                    items.object { a in
                        a.member("id", arm.id)
                        a.member("holdout", arm.holdout)
                        a.member("weight", arm.weight)
                        a.member("exposedUsers", arm.exposedUsers)
                        a.member("impressions", arm.impressions)
                        a.member("convertedUsers", arm.convertedUsers)
                        a.member("conversions", arm.conversions)
                        a.member("conversionRate", arm.conversionRate)
                    }
                }
            }
            o.arrayMember("comparisons") { items in
                for comparison in comparisons {
                    items.object { x in
                        x.member("arm", comparison.arm)
                        x.member("baseline", comparison.baseline)
                        x.member("difference", comparison.difference)
                        x.member("ci95", comparison.ci95)
                        x.member("pValue", comparison.pValue)
                    }
                }
            }
            o.objectMember("sampleRatio") { s in
                s.member("chiSquare", chiSquare)
                s.member("pValue", sampleRatioPValue)
                s.member("mismatch", sampleRatioPValue < 0.001)
            }
            o.member("unattributed", unattributed)
            o.member("conversionCapPerUser", conversionCapPerUser)
        }
        return w.bytes
    }
}

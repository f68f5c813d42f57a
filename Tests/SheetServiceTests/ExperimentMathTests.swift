import Crypto
import Foundation
import SheetPolicy
import SheetStore
import SheetWire
import Testing

@testable import SheetService

/// The assignment formula with the real SHA-256, and the statistics of the results, against values
/// computed by hand (or by Python's hashlib and math.erfc, as the comments say).
@Suite struct ExperimentAssignmentTests {
    static let experiment = Experiment(
        id: "offers-copy-2026-12", status: .running,
        arms: [ExperimentArm(id: "control", weight: 20, holdout: true), ExperimentArm(id: "a", weight: 40), ExperimentArm(id: "b", weight: 40)],
        conversionWindowSeconds: 604_800)

    static func assigner(_ user: String) -> ExperimentAssigner {
        ExperimentAssigner(userId: user, hashPrefix: { SHA256.bigEndianPrefix(of: $0) })
    }

    /// docs/experiments.md's worked example: python3 -c "import hashlib; d = hashlib.sha256(b'offers-copy-2026-12:demo-user').digest();
    /// print(d[:8].hex(), int.from_bytes(d[:8], 'big') % 10000)" prints 0bf2df2c1959c89c 5580: arm a (2000 ≤ 5580 < 6000).
    @Test func workedExample() throws {
        #expect(SHA256.bigEndianPrefix(of: "offers-copy-2026-12:demo-user") == 0x0bf2_df2c_1959_c89c)
        #expect(Self.assigner("demo-user").bucket(in: Self.experiment) == 5580)
        #expect(Self.experiment.assignment(for: Self.assigner("demo-user"), pins: [:])?.arm.id == "a")
        // bob: 648b567b29543f6c → 7244979512529928044 % 10000 = 8044, arm b.
        #expect(Self.assigner("bob").bucket(in: Self.experiment) == 8044)
        #expect(Self.experiment.assignment(for: Self.assigner("bob"), pins: [:])?.arm.id == "b")
    }

    /// For 10 000 generated ids the arm is the one the formula names, computed independently from the
    /// whole digest; the arms' shares pass a chi-square test against the weights.
    @Test func tenThousandIdsFollowTheFormula() throws {
        var perArm = [0, 0, 0]
        for i in 0..<10_000 {
            let user = "user-\(i)"
            let digest = SHA256.hash(Array("offers-copy-2026-12:\(user)".utf8))
            let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let bucket = Int(prefix % 10_000)
            // floor(10000 * 20 / 100) = 2000, floor(10000 * 60 / 100) = 6000.
            let expected = bucket < 2000 ? "control" : bucket < 6000 ? "a" : "b"
            let arm = try #require(Self.experiment.assignment(for: Self.assigner(user), pins: [:]))
            #expect(arm.arm.id == expected, "user \(user), bucket \(bucket)")
            #expect(arm.bucket == bucket)
            perArm[["control", "a", "b"].firstIndex(of: expected)!] += 1
        }
        let ratio = ExperimentStatistics.sampleRatio(observed: perArm, weights: [20, 40, 40])
        #expect(ratio.pValue > 0.001, "shares \(perArm) against 20/40/40: χ² \(ratio.chiSquare)")
        // A skewed split fails the same test.
        #expect(ExperimentStatistics.sampleRatio(observed: [2600, 3700, 3700], weights: [20, 40, 40]).pValue < 0.001)
    }

    /// The same user lands in the same arm in a new process: the assignment depends on nothing but the ids.
    @Test func stableAcrossInstances() {
        let first = (0..<200).map { Self.experiment.assignment(for: Self.assigner("u\($0)"), pins: [:])?.arm.id }
        let again = (0..<200).map {
            Self.experiment.assignment(for: ExperimentAssigner(userId: "u\($0)", hashPrefix: { SHA256.bigEndianPrefix(of: $0) }), pins: [:])?.arm.id
        }
        #expect(first == again)
    }
}

@Suite struct ExperimentStatisticsTests {
    static func close(_ a: Double?, _ b: Double, _ tolerance: Double = 1e-9) -> Bool { a.map { abs($0 - b) <= tolerance } ?? false }

    /// Q(a, x) against closed forms and table values: Q(1, x) = e^-x; Q(1/2, x) = erfc(√x);
    /// the chi-square 95th percentiles for 1, 2, 3 and 10 degrees of freedom give 0.05; 10.8276 (1 dof) gives 0.001.
    @Test func upperIncompleteGamma() {
        #expect(ExperimentStatistics.regularizedUpperGamma(1, 0) == 1)
        #expect(Self.close(ExperimentStatistics.regularizedUpperGamma(1, 2.5), exp(-2.5), 1e-13))
        #expect(Self.close(ExperimentStatistics.regularizedUpperGamma(1, 0.3), exp(-0.3), 1e-13))
        #expect(Self.close(ExperimentStatistics.regularizedUpperGamma(0.5, 0.5), 0.31731050786291415, 1e-12))  // erfc(1/√2)
        #expect(Self.close(ExperimentStatistics.regularizedUpperGamma(0.5, 4.5), 0.0026997960632601913, 1e-13))  // erfc(3/√2)
        #expect(Self.close(ExperimentStatistics.chiSquarePValue(3.841458820694124, degreesOfFreedom: 1), 0.05, 1e-12))
        #expect(Self.close(ExperimentStatistics.chiSquarePValue(5.991464547107979, degreesOfFreedom: 2), 0.05, 1e-12))
        #expect(Self.close(ExperimentStatistics.chiSquarePValue(7.814727903251178, degreesOfFreedom: 3), 0.05, 1e-12))
        #expect(Self.close(ExperimentStatistics.chiSquarePValue(18.307038053275146, degreesOfFreedom: 10), 0.05, 1e-12))
        #expect(Self.close(ExperimentStatistics.chiSquarePValue(10.827566170662733, degreesOfFreedom: 1), 0.001, 1e-13))
        // Far in the tail (continued fraction) and near 0 (series).
        #expect(Self.close(ExperimentStatistics.regularizedUpperGamma(1, 40), exp(-40), 1e-25))
        #expect(Self.close(ExperimentStatistics.regularizedUpperGamma(3, 1e-6), 1, 1e-12))
        // ln Γ: Γ(1/2) = √π, Γ(5) = 24, Γ(10.5) = 1133278.3889487855.
        #expect(Self.close(ExperimentStatistics.logGamma(0.5), log(Double.pi.squareRoot()), 1e-14))
        #expect(Self.close(ExperimentStatistics.logGamma(5), log(24), 1e-13))
        #expect(Self.close(ExperimentStatistics.logGamma(10.5), log(1_133_278.3889487855), 1e-12))
    }

    /// The two-proportion test by hand: 130 of 1000 against 100 of 1000.
    /// d = 0.13 - 0.10 = 0.03; SE = √(0.13·0.87/1000 + 0.1·0.9/1000) = 0.014166; CI = 0.03 ± 1.96·SE = [0.0020679, 0.0579321];
    /// pooled p = 0.115, SE0 = √(0.115·0.885·(2/1000)) = 0.014267, z = 2.1027406, p = erfc(z/√2) = 0.0354885.
    @Test func twoProportionTest() throws {
        let c = ExperimentStatistics.compare(converted: 130, exposed: 1000, baselineConverted: 100, baselineExposed: 1000)
        #expect(Self.close(c.difference, 0.03, 1e-15))
        let ci = try #require(c.ci95)
        #expect(Self.close(ci.low, 0.0020679344393763656, 1e-12))
        #expect(Self.close(ci.high, 0.057932065560623636, 1e-12))
        #expect(Self.close(c.pValue, 0.03548845046647473, 1e-10))
        // No users in an arm: no interval, no p-value; no conversions anywhere: p = 1.
        #expect(ExperimentStatistics.compare(converted: 0, exposed: 0, baselineConverted: 1, baselineExposed: 10).pValue == nil)
        #expect(ExperimentStatistics.compare(converted: 0, exposed: 10, baselineConverted: 0, baselineExposed: 10).pValue == 1)
    }

    /// χ² by hand: 180/420/400 exposed against 20/40/40: expected 200/400/400, χ² = 400/200 + 400/400 + 0 = 3,
    /// 2 degrees of freedom, p = e^(-3/2) = 0.22313016014842982 (no mismatch).
    @Test func sampleRatioByHand() {
        let r = ExperimentStatistics.sampleRatio(observed: [180, 420, 400], weights: [20, 40, 40])
        #expect(Self.close(r.chiSquare, 3, 1e-12))
        #expect(Self.close(r.pValue, 0.22313016014842982, 1e-12))
        #expect(ExperimentStatistics.sampleRatio(observed: [0, 0, 0], weights: [20, 40, 40]).pValue == 1)
    }

    /// The results body: the baseline is the holdout, every non-baseline arm is compared with it.
    @Test func resultsBody() throws {
        let counts = ExperimentCounts(
            arms: [
                "control": ExperimentArmCounts(exposedUsers: 1000, impressions: 0, convertedUsers: 100, conversions: 120),
                "a": ExperimentArmCounts(exposedUsers: 1000, impressions: 1500, convertedUsers: 130, conversions: 140),
            ], unattributed: 7)
        let body = ExperimentStatistics.results(ExperimentAssignmentTests.experiment, counts, conversionCapPerUser: 10).jsonBytes()
        let json = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(json["experimentId"] as? String == "offers-copy-2026-12")
        #expect(json["unattributed"] as? Int == 7)
        let arms = try #require(json["arms"] as? [[String: Any]])
        #expect(arms.map { $0["id"] as? String } == ["control", "a", "b"])
        #expect(arms[1]["conversionRate"] as? Double == 0.13)
        #expect(arms[2]["exposedUsers"] as? Int == 0)
        let comparisons = try #require(json["comparisons"] as? [[String: Any]])
        #expect(comparisons.map { $0["arm"] as? String } == ["a", "b"])
        #expect(comparisons.allSatisfy { $0["baseline"] as? String == "control" })
        #expect(Self.close(comparisons[0]["pValue"] as? Double, 0.03548845046647473, 1e-10))
        #expect(comparisons[1]["pValue"] is NSNull)
        let ratio = try #require(json["sampleRatio"] as? [String: Any])
        // 1000/1000/0 against 20/40/40 is far off: a mismatch.
        #expect(ratio["mismatch"] as? Bool == true)
    }
}

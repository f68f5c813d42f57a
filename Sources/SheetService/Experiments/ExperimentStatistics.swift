import SheetPolicy
import SheetStore
import SheetWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The statistics of experiment results: pure functions over exact counts (no I/O, no state).
/// Only `exp` and `log` come from the C library; the gamma functions are written out here.
enum ExperimentStatistics {
    /// The 97.5th percentile of the standard normal distribution (a two-sided 95 % interval).
    static let z975 = 1.959963984540054

    /// One arm against the baseline.
    struct Comparison: Equatable {
        /// `rate - baselineRate`.
        var difference: Double
        /// The 95 % interval of the difference (unpooled standard error); nil when an arm has no users.
        var ci95: (low: Double, high: Double)?
        /// Two-sided p-value of the two-proportion z-test (pooled); nil when an arm has no users.
        var pValue: Double?
        static func == (a: Self, b: Self) -> Bool {
            a.difference == b.difference && a.ci95?.low == b.ci95?.low && a.ci95?.high == b.ci95?.high && a.pValue == b.pValue
        }
    }

    /// `converted / exposed`, 0 without users.
    static func rate(_ converted: Int, _ exposed: Int) -> Double { exposed > 0 ? Double(converted) / Double(exposed) : 0 }

    /// Arm a (ca converted of na) against the baseline b (cb of nb):
    /// d = pa - pb; CI = d ± 1.96 · sqrt(pa(1-pa)/na + pb(1-pb)/nb);
    /// z = d / sqrt(p(1-p)(1/na + 1/nb)) with the pooled p = (ca+cb)/(na+nb); p-value = P(|Z| > |z|) = Q(1/2, z²/2).
    static func compare(converted ca: Int, exposed na: Int, baselineConverted cb: Int, baselineExposed nb: Int) -> Comparison {
        let pa = rate(ca, na), pb = rate(cb, nb)
        let d = pa - pb
        guard na > 0, nb > 0 else { return Comparison(difference: d, ci95: nil, pValue: nil) }
        let se = (pa * (1 - pa) / Double(na) + pb * (1 - pb) / Double(nb)).squareRoot()
        let pooled = Double(ca + cb) / Double(na + nb)
        let se0 = (pooled * (1 - pooled) * (1 / Double(na) + 1 / Double(nb))).squareRoot()
        // Both rates 0 (or both 1): no evidence of any difference.
        let p = se0 > 0 ? twoSidedNormalPValue(d / se0) : 1
        return Comparison(difference: d, ci95: (d - z975 * se, d + z975 * se), pValue: p)
    }

    /// P(|Z| > |z|) for a standard normal Z: erfc(|z|/√2), which is Q(1/2, z²/2).
    static func twoSidedNormalPValue(_ z: Double) -> Double { regularizedUpperGamma(0.5, z * z / 2) }

    /// Pearson's chi-square of `observed` counts against shares proportional to `weights`:
    /// χ² = Σ (O - E)² / E with E = N · w / Σw, k - 1 degrees of freedom, p = Q((k-1)/2, χ²/2).
    /// No observations (or one arm): p = 1.
    static func sampleRatio(observed: [Int], weights: [Int]) -> (chiSquare: Double, pValue: Double) {
        let total = observed.reduce(0, +), weightTotal = weights.reduce(0, +)
        guard total > 0, observed.count > 1, weightTotal > 0, observed.count == weights.count else { return (0, 1) }
        var chi = 0.0
        for (o, w) in zip(observed, weights) {
            let expected = Double(total) * Double(w) / Double(weightTotal)
            chi += (Double(o) - expected) * (Double(o) - expected) / expected
        }
        return (chi, chiSquarePValue(chi, degreesOfFreedom: observed.count - 1))
    }

    /// The upper tail of the chi-square distribution: Q(k/2, x/2).
    static func chiSquarePValue(_ x: Double, degreesOfFreedom k: Int) -> Double { regularizedUpperGamma(Double(k) / 2, x / 2) }

    /// Q(a, x) = Γ(a, x) / Γ(a), for a > 0 and x ≥ 0: the series of P(a, x) below x < a + 1 (Q = 1 - P),
    /// the continued fraction of Q (modified Lentz) above, as in Numerical Recipes' `gammq`.
    static func regularizedUpperGamma(_ a: Double, _ x: Double) -> Double {
        precondition(a > 0, "a must be positive")
        if x <= 0 { return 1 }
        if x.isInfinite { return 0 }
        let prefix = exp(-x + a * log(x) - logGamma(a))
        if x < a + 1 {
            // P(a, x) = e^-x x^a / Γ(a) · Σ x^n / (a (a+1) ... (a+n)).
            var term = 1 / a, sum = term, ap = a
            for _ in 0..<10_000 {
                ap += 1
                term *= x / ap
                sum += term
                if abs(term) < abs(sum) * 1e-16 { break }
            }
            return max(0, min(1, 1 - sum * prefix))
        }
        // Q(a, x) = e^-x x^a / Γ(a) · 1 / (x + 1 - a - 1·(1-a) / (x + 3 - a - 2·(2-a) / (x + 5 - a - ...))).
        let tiny = 1e-300
        var b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d
        for i in 1..<10_000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-16 { break }
        }
        return max(0, min(1, prefix * h))
    }

    /// ln Γ(x) for x > 0: Lanczos' approximation (g = 7, nine coefficients), relative error near 1e-15;
    /// the reflection formula below 1/2.
    static func logGamma(_ x: Double) -> Double {
        if x < 0.5 { return log(Double.pi / abs(sin(Double.pi * x))) - logGamma(1 - x) }
        let coefficients: [Double] = [
            0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059,
            12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
        ]
        let z = x - 1
        var sum = coefficients[0]
        for i in 1..<coefficients.count { sum += coefficients[i] / (z + Double(i)) }
        let t = z + 7.5
        return 0.5 * log(2 * Double.pi) + (z + 0.5) * log(t) - t + log(sum)
    }
}

extension ExperimentStatistics {
    /// An experiment's results from its exact counts: each arm's rate, each arm against the baseline
    /// (the holdout arm, else the first), and the sample ratio check against the arms' weights.
    static func results(_ experiment: Experiment, _ counts: ExperimentCounts, conversionCapPerUser: Int) -> ExperimentResults {
        let arms = experiment.arms.map { ($0, counts.arms[$0.id] ?? ExperimentArmCounts()) }
        let baseline = arms.first(where: { $0.0.holdout }) ?? arms[0]
        let ratio = sampleRatio(observed: arms.map { $0.1.exposedUsers }, weights: arms.map { $0.0.weight })
        return ExperimentResults(
            experimentId: experiment.id, status: experiment.status, winner: experiment.winner,
            arms: arms.map { arm, c in
                ExperimentResults.Arm(
                    id: arm.id, holdout: arm.holdout, weight: arm.weight, exposedUsers: c.exposedUsers, impressions: c.impressions,
                    convertedUsers: c.convertedUsers, conversions: c.conversions, conversionRate: rate(c.convertedUsers, c.exposedUsers))
            },
            comparisons: arms.filter { $0.0.id != baseline.0.id }.map { arm, c in
                let comparison = compare(
                    converted: c.convertedUsers, exposed: c.exposedUsers, baselineConverted: baseline.1.convertedUsers,
                    baselineExposed: baseline.1.exposedUsers)
                return ExperimentResults.Comparison(
                    arm: arm.id, baseline: baseline.0.id, difference: comparison.difference, ci95: comparison.ci95.map { [$0.low, $0.high] },
                    pValue: comparison.pValue)
            },
            chiSquare: ratio.chiSquare, sampleRatioPValue: ratio.pValue, unattributed: counts.unattributed,
            conversionCapPerUser: conversionCapPerUser)
    }
}

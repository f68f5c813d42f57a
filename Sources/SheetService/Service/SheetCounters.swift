import SheetPolicy
import SheetStore
import Synchronization

/// Per-sheet Prometheus counters (impressions, dismissals by method), counted after the commit of
/// the event that caused them (replays count nothing), since the process started.
///
/// Cardinality is bounded by the catalog: only sheets in the catalog are ever counted (the routes
/// 404 the others) and rendered; when a sheet is deleted its series are dropped at the next render
/// (and start from 0 if it comes back, which Prometheus reads as a counter reset).
final class SheetCounters: Sendable {
    private struct Counts {
        var impressions = 0
        var dismissals: [String: Int] = [:]
    }

    private let counts = Mutex<[String: Counts]>([:])

    /// Counts what one committed event emitted.
    func add(_ activity: [SheetActivity]) {
        guard activity.contains(where: { $0.kind == .impression || $0.kind == .dismissal }) else { return }
        counts.withLock { counts in
            for record in activity {
                switch record.kind {
                case .impression: counts[record.sheetId, default: Counts()].impressions += 1
                case .dismissal: counts[record.sheetId, default: Counts()].dismissals[record.method ?? "", default: 0] += 1
                case .latchRelease, .opened, .exposure, .experimentImpression, .conversion, .pin: break
                }
            }
        }
    }

    /// The two metric families in the text exposition format, for the sheets of `catalog`.
    func render(catalog: Catalog) -> String {
        let snapshot = counts.withLock { counts in
            for id in counts.keys where catalog[id] == nil { counts[id] = nil }
            return counts
        }
        var impressions = """
            # HELP sheetd_sheet_impressions_total Impressions reported per sheet (since the process started).
            # TYPE sheetd_sheet_impressions_total counter

            """
        var dismissals = """
            # HELP sheetd_sheet_dismissals_total Dismissals reported per sheet and method (since the process started).
            # TYPE sheetd_sheet_dismissals_total counter

            """
        for id in snapshot.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            let c = snapshot[id]!
            // Sheet ids are identifiers (letters, digits, ._:@-): nothing to escape in a label value.
            if c.impressions > 0 { impressions += "sheetd_sheet_impressions_total{sheet=\"\(id)\"} \(c.impressions)\n" }
            for method in DismissMethod.allCases {
                if let n = c.dismissals[method.rawValue] {
                    dismissals += "sheetd_sheet_dismissals_total{sheet=\"\(id)\",method=\"\(method.rawValue)\"} \(n)\n"
                }
            }
        }
        return impressions + dismissals
    }
}

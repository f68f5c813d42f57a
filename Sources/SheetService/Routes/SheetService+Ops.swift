import Crypto
import FoundationEssentials
import Glibc
import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// /healthz, /readyz and /metrics.
extension SheetService {
    func readiness() throws(Problem) -> HTTPResponse {
        if draining.load(ordering: .relaxed) { throw Problems.unavailable("sheetd is shutting down") }
        do {
            try store.ping()
        } catch {
            databaseErrors.add(1, ordering: .relaxed)
            throw Problems.unavailable("the database does not answer: \(error)")
        }
        return .json(200, Array(#"{"status":"ready"}"#.utf8))
    }

    func renderMetrics() -> String {
        var text = metrics.renderPrometheus()
        text += "# HELP sheetd_database_errors_total Storage operations that failed.\n"
        text += "# TYPE sheetd_database_errors_total counter\n"
        text += "sheetd_database_errors_total \(databaseErrors.load(ordering: .relaxed))\n"
        text += "# HELP sheetd_catalog_sheets Sheet definitions in the catalog.\n"
        text += "# TYPE sheetd_catalog_sheets gauge\n"
        text += "sheetd_catalog_sheets \(catalog.sheets.count)\n"
        text += "# HELP sheetd_build_info Build information.\n"
        text += "# TYPE sheetd_build_info gauge\n"
        text += "sheetd_build_info{version=\"\(Self.version)\"} 1\n"
        return text
    }
}

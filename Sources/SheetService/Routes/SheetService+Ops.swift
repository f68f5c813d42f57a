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
        let writes = store.writeStatistics
        return metrics.renderPrometheus()
            + Self.family(
                "sheetd_database_errors_total", "counter", "Storage operations that failed.",
                "\(databaseErrors.load(ordering: .relaxed))")
            + Self.family("sheetd_store_updates_total", "counter", "User events run in committed write transactions.", "\(writes.updates)")
            + Self.family(
                "sheetd_store_commits_total", "counter",
                "Write transactions committed for user events (group commit: one carries many).", "\(writes.commits)")
            + Self.family("sheetd_store_largest_batch", "gauge", "The most user events one transaction carried.", "\(writes.largestBatch)")
            + Self.family("sheetd_store_checkpoints_total", "counter", "Background WAL checkpoints.", "\(writes.checkpoints)")
            + Self.family(
                "sheetd_store_wal_restarts_total", "counter",
                "Checkpoints by the writer that let the WAL start over.", "\(writes.walRestarts)")
            + Self.family("sheetd_streams_open", "gauge", "Open decision streams (Server-Sent Events).", "\(streams.openCount)")
            + Self.family("sheetd_long_polls_waiting", "gauge", "Decision requests held by Prefer: wait.", "\(longPolls.count)")
            + Self.family("sheetd_catalog_sheets", "gauge", "Sheet definitions in the catalog.", "\(catalog.sheets.count)")
            + sheetCounters.render(catalog: catalog)
            + Self.family("sheetd_build_info", "gauge", "Build information.", "1", labels: "{version=\"\(Self.version)\"}")
    }

    /// One Prometheus metric family with a single sample, in the text exposition format.
    private static func family(_ name: String, _ type: String, _ help: String, _ value: String, labels: String = "") -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name)\(labels) \(value)\n"
    }
}

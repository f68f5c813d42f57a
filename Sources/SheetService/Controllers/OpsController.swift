import MicroHTTP
import SheetPolicy
import SheetStore
import Synchronization

/// /healthz, /readyz, /metrics and /openapi.yaml.
struct OpsController: RouteController {
    let store: any SheetStore
    let draining: Draining
    let databaseErrors: DatabaseErrors
    let metrics: HTTPMetrics
    let openAPIDocument: [UInt8]
    /// Read as last loaded (metrics do no database read).
    let catalog: CatalogKeeper
    let decisions: DecisionCache
    let replicaCounters: ReplicaCounters
    let experimentRecorder: ExperimentRecorder
    let sheetCounters: SheetCounters
    let streams: DecisionStreams
    let longPolls: LongPolls

    func register(on router: Router) {
        router.add(.GET, "/healthz") { _ in .json(200, Array(#"{"status":"ok"}"#.utf8)) }
        router.add(.GET, "/readyz") { [self] _ in try readiness() }
        router.add(.GET, "/metrics") { [self] _ in .text(200, renderMetrics(), contentType: "text/plain; version=0.0.4; charset=utf-8") }
        router.add(.GET, "/openapi.yaml") { [openAPIDocument] _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "application/yaml")], body: openAPIDocument)
        }
    }

    func readiness() throws(Problem) -> HTTPResponse {
        if draining.isDraining { throw Problems.unavailable("sheetd is shutting down") }
        do {
            try store.ping()
        } catch {
            databaseErrors.record()
            throw Problems.unavailable("the database does not answer: \(error)")
        }
        return .json(200, Array(#"{"status":"ready"}"#.utf8))
    }

    func renderMetrics() -> String {
        let writes = store.writeStatistics
        let current = catalog.current
        return metrics.renderPrometheus()
            + Self.family("sheetd_database_errors_total", "counter", "Storage operations that failed.", "\(databaseErrors.count)")
            + Self.family("sheetd_store_updates_total", "counter", "User events run in committed write transactions.", "\(writes.updates)")
            + Self.family(
                "sheetd_store_commits_total", "counter",
                "Write transactions committed for user events (group commit: one carries many).", "\(writes.commits)")
            + Self.family("sheetd_store_largest_batch", "gauge", "The most user events one transaction carried.", "\(writes.largestBatch)")
            + Self.family("sheetd_store_checkpoints_total", "counter", "Background WAL checkpoints.", "\(writes.checkpoints)")
            + Self.family(
                "sheetd_store_wal_restarts_total", "counter",
                "Checkpoints by the writer that let the WAL start over.", "\(writes.walRestarts)")
            + connectionMetrics()
            + decisionCacheMetrics()
            + experimentRecorder.render(catalog: current)
            + Self.family("sheetd_streams_open", "gauge", "Open decision streams (Server-Sent Events).", "\(streams.openCount)")
            + Self.family("sheetd_long_polls_waiting", "gauge", "Decision requests held by Prefer: wait.", "\(longPolls.count)")
            + Self.family("sheetd_catalog_sheets", "gauge", "Sheet definitions in the catalog.", "\(current.sheets.count)")
            + sheetCounters.render(catalog: current)
            + replicaMetrics()
            + Self.family("sheetd_build_info", "gauge", "Build information.", "1", labels: "{version=\"\(SheetService.version)\"}")
    }

    /// Attempts to reach a database server (PostgreSQL only): a failover or an outage shows as
    /// failures at a bounded rate (the backoff) and ends with a connect.
    private func connectionMetrics() -> String {
        guard let c = store.connectionStatistics else { return "" }
        return Self.family("sheetd_database_connects_total", "counter", "Database sessions opened on a writable server.", "\(c.connects)")
            + Self.family(
                "sheetd_database_connect_failures_total", "counter",
                "Connection attempts that found no writable database server (refused, timed out, only standbys).", "\(c.failures)")
            + Self.family(
                "sheetd_database_read_only_sessions_total", "counter",
                "Database sessions dropped because their server was or became read-only (standby, fenced or demoted primary).",
                "\(c.readOnlySessions)")
            + Self.family(
                "sheetd_database_connect_backoff_seconds", "gauge",
                "Wait before the next connection attempt after a failure (0 while the database answers).",
                "\(Double(c.backoffMilliseconds) / 1000)")
    }

    /// Decision cache lookups: the hit ratio tells whether `SHEETD_DECISION_CACHE` holds the active
    /// users (none while the cache is off).
    private func decisionCacheMetrics() -> String {
        guard decisions.enabled else { return "" }
        let (hits, misses) = decisions.hitsAndMisses
        return Self.family(
            "sheetd_decision_cache_hits_total", "counter", "Decisions answered from the decision cache.", "\(hits)")
            + Self.family(
                "sheetd_decision_cache_misses_total", "counter",
                "Decisions computed because no current answer was cached (first request, after a write, past a time boundary, or evicted).",
                "\(misses)")
    }

    /// The replica families, on a shared database only.
    private func replicaMetrics() -> String {
        guard catalog.isReplicated else { return "" }
        let c = replicaCounters
        return Self.family(
            "sheetd_replica_notifications_total", "counter", "Change notifications heard from other replicas.",
            "\(c.notifications.load(ordering: .relaxed))")
            + Self.family(
                "sheetd_replica_listener_up", "gauge", "1 while the LISTEN connection to the database listens.",
                c.listenerConnected.load(ordering: .relaxed) ? "1" : "0")
            + Self.family(
                "sheetd_replica_listener_losses_total", "counter", "Times the LISTEN connection was lost (caches flushed each time).",
                "\(c.listenerLosses.load(ordering: .relaxed))")
            + Self.family(
                "sheetd_replica_catalog_reloads_total", "counter", "Catalog reloads after another replica changed it.",
                "\(c.catalogReloads.load(ordering: .relaxed))")
            + Self.family(
                "sheetd_replica_barrier_round_trips_total", "counter",
                "Round trips on the listening session that proved cached decisions current (one serves many requests).",
                "\(decisions.freshness.barrierRoundTrips)")
            + Self.family(
                "sheetd_replica_barrier_hits_total", "counter", "Cached decisions answered after such a round trip, with no read of the user.",
                "\(c.barrierHits.load(ordering: .relaxed))")
    }

    /// One Prometheus metric family with a single sample, in the text exposition format.
    private static func family(_ name: String, _ type: String, _ help: String, _ value: String, labels: String = "") -> String {
        "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name)\(labels) \(value)\n"
    }
}

/// The service's defaults, where both the library (`SheetService.init`) and the command line
/// (`sheetd serve`'s configuration and help) read them.
public enum ServiceDefaults {
    /// About how many users' decision answers are kept in memory.
    public static let decisionCacheUsers = 65_536
    /// Open decision streams per process.
    public static let maxStreams = 10_000
    /// Idle seconds before a stream's heartbeat.
    public static let streamHeartbeatSeconds = 15
    /// Events one user may report per minute (429 beyond; 0: no limit).
    public static let eventsPerUserPerMinute = 600
}

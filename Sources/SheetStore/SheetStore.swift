public import SheetPolicy

/// One catalog entry as stored: its id and the definition's canonical JSON (the API's own format).
public struct StoredSheet: Sendable, Equatable {
    public var id: String
    public var json: String
    public init(id: String, json: String) { self.id = id; self.json = json }
}

/// The result of an event write: the outcome the client is answered with.
public struct EventResult: Sendable, Equatable {
    /// The response body of the first processing of this event.
    public var outcome: [UInt8]
    /// True when the event id had been processed before and nothing was applied now.
    public var replayed: Bool
    public init(outcome: [UInt8], replayed: Bool) { self.outcome = outcome; self.replayed = replayed }
}

/// One fact about a sheet, emitted by a user's update: counted into the sheet's hour rollup
/// (`sheet_rollups`, see `RollupCounters`) in the same transaction as the update that caused it;
/// `GET /v1/sheets/{sheetId}/stats` reads the rollups. No per-event row is kept.
public struct SheetActivity: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// The client reported that it presented the sheet (`POST .../impressions`).
        case impression
        /// The user dismissed the sheet; `method` is the dismissal method.
        case dismissal
        /// A container count released the user's latch of the sheet.
        case latchRelease = "latch-release"
        /// A presentation was opened with this sheet as its `parentSheetId`.
        case opened
        // Experiment facts (not in the rollups): written to `experiment_exposures` and
        // `experiment_unattributed` in the same transaction (see `ExperimentSQL`).
        /// The user's first exposure to `experimentId`, in `arm` (insert-or-ignore).
        case exposure
        /// An impression of the sheet by a user exposed to its experiment.
        case experimentImpression = "experiment-impression"
        /// A conversion: counted for `arm`, or unattributed when `arm` is nil.
        case conversion
        /// A QA pin set (`arm`) or removed (nil): pinned users leave the results.
        case pin
    }
    public var sheetId: String
    public var kind: Kind
    /// The dismissal method (`swipe`, ...) for `.dismissal`; nil otherwise.
    public var method: String?
    public var at: Timestamp
    /// Experiment facts: the experiment.
    public var experimentId: String?
    /// Experiment facts: the arm (see the kinds).
    public var arm: String?
    public init(sheetId: String, kind: Kind, method: String? = nil, at: Timestamp, experimentId: String? = nil, arm: String? = nil) {
        self.sheetId = sheetId; self.kind = kind; self.method = method; self.at = at
        self.experimentId = experimentId; self.arm = arm
    }

    /// Whether the record is an experiment fact.
    public var isExperimentFact: Bool {
        switch kind {
        case .exposure, .experimentImpression, .conversion, .pin: true
        case .impression, .dismissal, .latchRelease, .opened: false
        }
    }
}

/// One arm's exact counts in an experiment's results (pinned users left out).
public struct ExperimentArmCounts: Sendable, Equatable {
    public var exposedUsers: Int
    public var impressions: Int
    public var convertedUsers: Int
    public var conversions: Int
    public init(exposedUsers: Int = 0, impressions: Int = 0, convertedUsers: Int = 0, conversions: Int = 0) {
        self.exposedUsers = exposedUsers; self.impressions = impressions
        self.convertedUsers = convertedUsers; self.conversions = conversions
    }
}

/// What the store counts for one experiment.
public struct ExperimentCounts: Sendable, Equatable {
    /// Arm id → its counts (arms with no exposed user are absent).
    public var arms: [String: ExperimentArmCounts]
    /// Conversions outside any exposure's window, or of users never exposed.
    public var unattributed: Int
    public init(arms: [String: ExperimentArmCounts] = [:], unattributed: Int = 0) { self.arms = arms; self.unattributed = unattributed }
}

/// What the rollups say about one sheet (`GET /v1/sheets/{sheetId}/stats`).
public struct SheetStats: Sendable, Equatable {
    /// Impressions reported.
    public var impressions: Int
    /// Distinct users whose latest impression is in the period counted (exact; erased users are gone).
    public var uniqueUsers: Int
    /// Dismissals per method (only methods seen).
    public var dismissals: [String: Int]
    /// Latches of this sheet released by a count change.
    public var latchReleases: Int
    /// Presentations opened with this sheet as their parent.
    public var openedFrom: Int
    /// With `since`: the start of the first whole hour counted (the first hour boundary at or after
    /// `since`); nil for the totals.
    public var countedFrom: Timestamp?
    public init(
        impressions: Int = 0, uniqueUsers: Int = 0, dismissals: [String: Int] = [:], latchReleases: Int = 0, openedFrom: Int = 0,
        countedFrom: Timestamp? = nil
    ) {
        self.impressions = impressions; self.uniqueUsers = uniqueUsers; self.dismissals = dismissals
        self.latchReleases = latchReleases; self.openedFrom = openedFrom; self.countedFrom = countedFrom
    }

}

/// Counters of the write path (`update`): how many updates committed in how many transactions.
/// Under concurrent writers `commits < updates` shows group commit at work.
public struct WriteStatistics: Sendable, Equatable {
    /// Updates run in committed transactions (replays and failed bodies included).
    public var updates: Int
    /// Write transactions committed by the update path.
    public var commits: Int
    /// The largest number of updates one transaction carried.
    public var largestBatch: Int
    /// Background WAL checkpoints run (see `Checkpointer`).
    public var checkpoints: Int = 0
    /// The writer's own RESTART checkpoints that completed (each lets the WAL start over).
    public var walRestarts: Int = 0
}

/// Why the store failed; the service turns these into HTTP answers.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The storage cannot take writes (or reads) right now: busy, locked, read-only, disk full, I/O.
    /// Clients may retry; the service answers 503.
    case unavailable(String)
    /// Anything else (a bug, a corrupt file). The service answers 500.
    case failure(String)
    /// The database was migrated by a newer binary.
    case schemaTooNew(database: Int, binary: Int)
    /// A migration that was already applied no longer matches the shipped file.
    case checksumMismatch(version: Int, name: String)
    /// The write contradicts what is stored (an experiment's identity, `ExperimentIdentitySQL`);
    /// nothing was changed. The service answers 409 with the message.
    case conflict(String)

    public var description: String {
        switch self {
        case .unavailable(let m): "storage unavailable: \(m)"
        case .failure(let m): "storage failure: \(m)"
        case .schemaTooNew(let db, let bin):
            "database schema version \(db) is newer than this binary's \(bin); upgrade sheetd or restore a backup"
        case .checksumMismatch(let v, let n):
            "migration \(v) (\(n)) was changed after it was applied; never edit a shipped migration, add a new one"
        case .conflict(let m): m
        }
    }
}

/// The catalog and the campaign settings stored with it, and their history (revisions). Catalog and
/// settings writes are rare and admin-driven; every process serves them from memory (see
/// `SharedSheetStore.catalogVersion` for how replicas notice another's).
public protocol CatalogStore: AnyObject, Sendable {
    // MARK: Catalog
    // Every catalog write records its revision (when it changed anything) and the identities of the
    // experiments it carries in its own transaction: a change without its revision cannot be stored.

    /// All catalog entries, ordered by id.
    func catalog() throws(StoreError) -> [StoredSheet]
    /// Creates or replaces one entry; returns true when it was created.
    func putSheet(_ sheet: StoredSheet, record: CatalogWriteRecord) throws(StoreError) -> Bool
    /// Upserts many entries in one transaction (catalog file at start-up).
    func putSheets(_ sheets: [StoredSheet], record: CatalogWriteRecord) throws(StoreError)
    /// Removes one entry; returns true when it existed.
    func deleteSheet(id: String, record: CatalogWriteRecord) throws(StoreError) -> Bool
    /// Records the identities of experiments not bound yet (`ExperimentIdentitySQL.adopt`).
    func adoptExperimentIdentities(_ identities: [ExperimentIdentity]) throws(StoreError)

    // MARK: Settings
    /// The campaign settings (`GET /v1/settings`); `.off` when never written.
    func settings() throws(StoreError) -> CampaignSettings
    /// Replaces the campaign settings.
    func putSettings(_ settings: CampaignSettings, record: CatalogWriteRecord) throws(StoreError)

    // MARK: Catalog history
    /// Appends a revision holding the catalog and settings as stored now, made by `author`, in one
    /// transaction; then drops the oldest beyond the newest `keep`. Returns it (without its sheets).
    /// (The first revision of a catalog found at start; every change records its own.)
    func appendCatalogRevision(author: RevisionAuthor, keep: Int) throws(StoreError) -> CatalogRevision
    /// Up to `limit` revisions, newest first, older than `before` when given (without their sheets).
    func catalogRevisions(before: Int64?, limit: Int) throws(StoreError) -> [CatalogRevision]
    /// One revision with its sheets; nil when it is not kept (or never was).
    func catalogRevision(_ number: Int64) throws(StoreError) -> CatalogRevision?
    /// In one transaction: checks and records `record.experiments` (those of the revision), makes the
    /// catalog and settings those of revision `number`, and appends a revision equal to it
    /// (`restoredFrom` = `number`) by `record.author`. Nil (nothing changed) when the revision is not kept.
    func restoreCatalogRevision(_ number: Int64, record: CatalogWriteRecord) throws(StoreError) -> CatalogRevision?
}

/// Each user's state: read whole, changed by events through one read-modify-write per event.
///
/// Read-your-writes: a `userState` call that starts after an `update` returned (or a `submit`'s
/// completion ran) shows that update. The SQLite store keeps it with its write generation (a read
/// snapshot kept between reads is used only while no write ended since it began, `ReaderPool`); a
/// shared database with one snapshot per statement.
public protocol UserStateStore: AnyObject, Sendable {
    /// The user's state; a user never seen has an empty state.
    func userState(userId: String) throws(StoreError) -> UserState
    /// Read-modify-write of one user's state in one write transaction.
    ///
    /// When `eventId` was already processed for this user, `body` is not called and the stored
    /// outcome is returned with `replayed` true. Otherwise `body` mutates the state and returns the
    /// outcome to remember; the changed state, the outcome and the event id commit together, and
    /// nothing is acknowledged before the commit. A throwing `body` changes nothing, records no event
    /// id, and its error comes back unchanged (`UserStateLimits.enforcing` relies on this).
    ///
    /// The body may append `SheetActivity` records to its second argument: they are counted into the
    /// sheets' rollups in the same transaction, and only when the body returns (a throwing body emits
    /// nothing; a replay runs no body, so emits nothing either). Unique users follow the impression
    /// log of the state (`CampaignState.impressions`), not the records.
    func update(
        userId: String, eventId: String?, _ body: (inout UserState, inout [SheetActivity]) throws -> [UInt8]
    ) throws -> EventResult
    /// The same as `update`, without waiting: `completion` runs once, on the store's writer thread,
    /// after the transaction carrying the update committed (or failed). Keep it short: the next batch
    /// waits for it.
    func submit(
        userId: String, eventId: String?, _ body: @escaping @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8],
        completion: @escaping @Sendable (Result<EventResult, any Error>) -> Void)
    /// Erases everything stored for the user (no error for an unknown user): the state (campaign
    /// facts and segments included) and processed event ids; the user leaves the rollups' unique
    /// users. The rollups' counters hold no user id and stay. Event ids go in small transactions, so
    /// that a user with many never holds up other users' writes.
    func deleteUser(userId: String) throws(StoreError)
}

/// What the write path counted: per-sheet rollups and experiment counts.
public protocol StatisticsStore: AnyObject, Sendable {
    /// One sheet's figures from the rollups: with `since`, over the whole hours from the first hour
    /// boundary at or after it (`SheetStats.countedFrom`); without, everything kept, the rows folded
    /// by retention included.
    func sheetStats(sheetId: String, since: Timestamp?) throws(StoreError) -> SheetStats
    /// One sheet's figures per hour or day over a range of whole hours (`RollupRange`), every bucket
    /// of the range in order (empty ones at zero): they add up to `sheetStats` over the same hours.
    func sheetStatsSeries(sheetId: String, range: RollupRange) throws(StoreError) -> [SheetStatsBucket]
    /// One experiment's exact counts (`GET /v1/experiments/{experimentId}/results`), pinned users left out.
    func experimentCounts(experimentId: String) throws(StoreError) -> ExperimentCounts
}

/// Readiness, sampling, write counters and closing: what operators and the process lifecycle use.
public protocol StoreOperations: AnyObject, Sendable {
    /// Succeeds when the database answers a trivial read (readiness).
    func ping() throws(StoreError)
    /// Up to `limit` stored users with their states, in order of user id from the first id at or
    /// after `from`, continuing from the smallest id when the end comes first (so any `from` yields
    /// `limit` users when as many are stored). Without `from`, from a stored user picked uniformly at
    /// random (one count and one scan of the ids before it). Reads only: never on the writer's path.
    func sampleUsers(from: String?, limit: Int) throws(StoreError) -> [(userId: String, state: UserState)]
    /// Counters of the write path: updates, the transactions that carried them, checkpoints.
    var writeStatistics: WriteStatistics { get }
    /// Connection attempts to a database server (nil for an embedded database).
    var connectionStatistics: ConnectionStatistics? { get }
    /// Flushes the WAL and closes every connection; the store is unusable afterwards.
    func close()
}

extension StoreOperations {
    /// An embedded database has no server to connect to.
    public var connectionStatistics: ConnectionStatistics? { nil }
}

/// How a store's attempts to reach its database server went (failover and outages show here).
public struct ConnectionStatistics: Sendable, Equatable {
    /// Sessions opened on a writable server.
    public var connects: Int
    /// Attempts that found no writable server.
    public var failures: Int
    /// Sessions dropped because their server was, or turned, read-only.
    public var readOnlySessions: Int
    /// The wait before the next attempt after the last failure (0 while the server answers).
    public var backoffMilliseconds: Int

    public init(connects: Int, failures: Int, readOnlySessions: Int, backoffMilliseconds: Int) {
        self.connects = connects
        self.failures = failures
        self.readOnlySessions = readOnlySessions
        self.backoffMilliseconds = backoffMilliseconds
    }
}

/// Persistence for sheetd: every capability above, over one database. Events go in through `update`,
/// user state comes out through `userState`. Implementations: `SQLiteSheetStore` (embedded default)
/// and the PostgreSQL store (also a `SharedSheetStore`); nothing above this protocol may depend on a
/// backend. A component that needs one capability holds that protocol (`any UserStateStore`, ...).
public protocol SheetStore: CatalogStore, UserStateStore, StatisticsStore, StoreOperations {
    /// How this store's processes coordinate when several share the database (versions, a listener):
    /// nil for a store only this process writes. Chosen by conformance, not by a cast: every
    /// `SharedSheetStore` answers itself (see its extension), every other store nil.
    var replicaCoordination: (any ReplicaCoordination)? { get }
}

extension SheetStore {
    /// A store only this process writes.
    public var replicaCoordination: (any ReplicaCoordination)? { nil }
}

extension UserStateStore {
    /// `update` with a body that emits no activity.
    public func update(userId: String, eventId: String?, _ body: (inout UserState) throws -> [UInt8]) throws -> EventResult {
        try update(userId: userId, eventId: eventId) { (state: inout UserState, _: inout [SheetActivity]) in try body(&state) }
    }

    /// `submit` with a body that emits no activity.
    public func submit(
        userId: String, eventId: String?, _ body: @escaping @Sendable (inout UserState) throws -> [UInt8],
        completion: @escaping @Sendable (Result<EventResult, any Error>) -> Void
    ) {
        submit(userId: userId, eventId: eventId, { (state: inout UserState, _: inout [SheetActivity]) in try body(&state) }, completion: completion)
    }
}

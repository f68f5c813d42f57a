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

    public var description: String {
        switch self {
        case .unavailable(let m): "storage unavailable: \(m)"
        case .failure(let m): "storage failure: \(m)"
        case .schemaTooNew(let db, let bin):
            "database schema version \(db) is newer than this binary's \(bin); upgrade sheetd or restore a backup"
        case .checksumMismatch(let v, let n):
            "migration \(v) (\(n)) was changed after it was applied; never edit a shipped migration, add a new one"
        }
    }
}

/// Persistence for sheetd: the catalog and each user's state. Events go in through `update`,
/// user state comes out through `userState`. Implementations: `SQLiteSheetStore` (embedded default);
/// nothing above this protocol may depend on SQLite.
public protocol SheetStore: AnyObject, Sendable {
    // MARK: Catalog
    /// All catalog entries, ordered by id.
    func catalog() throws(StoreError) -> [StoredSheet]
    /// Creates or replaces one entry; returns true when it was created.
    func putSheet(_ sheet: StoredSheet) throws(StoreError) -> Bool
    /// Upserts many entries in one transaction (catalog file at start-up).
    func putSheets(_ sheets: [StoredSheet]) throws(StoreError)
    /// Removes one entry; returns true when it existed.
    func deleteSheet(id: String) throws(StoreError) -> Bool

    // MARK: Users
    /// The user's state; a user never seen has an empty state.
    func userState(userId: String) throws(StoreError) -> UserState
    /// Read-modify-write of one user's state in one write transaction.
    ///
    /// When `eventId` was already processed for this user, `body` is not called and the stored
    /// outcome is returned with `replayed` true. Otherwise `body` mutates the state and returns the
    /// outcome to remember; the changed state, the outcome and the event id commit together, and
    /// nothing is acknowledged before the commit. A throwing `body` changes nothing, records no event
    /// id, and its error comes back unchanged (`UserStateLimits.enforcing` relies on this).
    func update(
        userId: String, eventId: String?, _ body: (inout UserState) throws -> [UInt8]
    ) throws -> EventResult
    /// The same as `update`, without waiting: `completion` runs once, on the store's writer thread,
    /// after the transaction carrying the update committed (or failed). Keep it short: the next batch
    /// waits for it.
    func submit(
        userId: String, eventId: String?, _ body: @escaping @Sendable (inout UserState) throws -> [UInt8],
        completion: @escaping @Sendable (Result<EventResult, any Error>) -> Void)
    /// Erases everything stored for the user (no error for an unknown user).
    func deleteUser(userId: String) throws(StoreError)

    // MARK: Operations
    /// Succeeds when the database answers a trivial read (readiness).
    func ping() throws(StoreError)
    /// Counters of the write path: updates, the transactions that carried them, checkpoints.
    var writeStatistics: WriteStatistics { get }
    /// Flushes the WAL and closes every connection; the store is unusable afterwards.
    func close()
}

import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire
import Synchronization

/// Records the events clients report for one user: each one transaction, replayed by event id,
/// limited per user per minute and in what a user may store, and, once committed, the caches,
/// streams and counters told.
final class EventRecorder: Sendable {
    /// Every event's transaction goes through it (it bumps the user's epoch and tells the feed).
    private let writes: UserStateWrites
    /// How much one user may store; events beyond are refused with 409.
    private let stateLimits: UserStateLimits
    /// How many events one user may report per minute; more are refused with 429.
    private let eventRate: EventRateLimiter
    private let sheetCounters: SheetCounters
    private let experimentRecorder: ExperimentRecorder
    private let databaseErrors: DatabaseErrors
    /// The service's clock: when an event without `occurredAt` happened.
    let clock: @Sendable () -> Timestamp
    /// How late, or how far ahead, an event's `occurredAt` may be.
    let occurredAtWindow: OccurredAtWindow

    init(
        writes: UserStateWrites, stateLimits: UserStateLimits, eventRate: EventRateLimiter, sheetCounters: SheetCounters,
        experimentRecorder: ExperimentRecorder, databaseErrors: DatabaseErrors,
        occurredAtWindow: OccurredAtWindow, clock: @escaping @Sendable () -> Timestamp
    ) {
        self.writes = writes
        self.stateLimits = stateLimits
        self.eventRate = eventRate
        self.sheetCounters = sheetCounters
        self.experimentRecorder = experimentRecorder
        self.databaseErrors = databaseErrors
        self.clock = clock
        self.occurredAtWindow = occurredAtWindow
    }

    /// One event, one transaction; the outcome of the first processing answers every retry.
    /// Event ids are scoped to the kind of event: the same id on another route is another event (a
    /// replay must answer with the route's own outcome shape, not another route's).
    ///
    /// The answer is deferred: the connection is parked until the writer commits the batch carrying
    /// this event, so the worker thread serves others meanwhile and one commit carries many events.
    ///
    /// `occurredAt`: when the event happened, if the client says so. The body gets the event's time
    /// (`occurredAt`, else the clock); an `occurredAt` outside `occurredAtWindow` is a 400 that stores
    /// nothing. It is checked in the transaction, after the event id: a retry of an event already
    /// processed answers its first outcome, whatever time it carries now.
    ///
    /// `emitting`: the activity records (stats) this event adds when its body succeeds, stamped with the
    /// event's time; latches the body releases are added as `latch-release` records. They commit with
    /// the state, and count on /metrics after the commit.
    func record(
        userId: String, eventId: String?, occurredAt: Timestamp? = nil, kind: EventKind,
        emitting: [(sheetId: String, kind: SheetActivity.Kind, method: String?)] = [],
        _ body: @escaping @Sendable (inout UserState, Timestamp) throws -> [UInt8]
    ) -> HTTPResponse {
        record(userId: userId, eventId: eventId, occurredAt: occurredAt, kind: kind, emitting: emitting) {
            (state: inout UserState, _: inout [SheetActivity], at: Timestamp) in
            try body(&state, at)
        }
    }

    /// `record` with a body that may emit records of its own (experiment facts).
    func record(
        userId: String, eventId: String?, occurredAt: Timestamp? = nil, kind: EventKind,
        emitting: [(sheetId: String, kind: SheetActivity.Kind, method: String?)] = [],
        _ body: @escaping @Sendable (inout UserState, inout [SheetActivity], Timestamp) throws -> [UInt8]
    ) -> HTTPResponse {
        if let retryAfter = eventRate.admit(userId) {
            return Problems.tooManyRequests(
                "user '\(userId)' reported more than \(eventRate.eventsPerMinute) events within a minute; retry in \(retryAfter) s",
                retryAfterSeconds: retryAfter
            ).response
        }
        let storedEventId = eventId.map(kind.storedEventId)
        let clock = self.clock, window = occurredAtWindow
        let emitted = EmittedActivity()
        let withActivity: @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8] = { state, activity in
            let at = try Problems.decoding { () throws(WireError) in try window.time(of: occurredAt, now: clock()) }
            let latched = state.latches
            let outcome = try body(&state, &activity, at)
            for (sheetId, kind, method) in emitting { activity.append(SheetActivity(sheetId: sheetId, kind: kind, method: method, at: at)) }
            // Sorted only when some latch was released (most events release none).
            var released: [String] = []
            for sheetId in latched.keys where state.latches[sheetId] == nil { released.append(sheetId) }
            for sheetId in released.sorted() { activity.append(SheetActivity(sheetId: sheetId, kind: .latchRelease, at: at)) }
            emitted.records.withLock { $0 = activity }
            return outcome
        }
        return .deferred { [self] promise in
            // Past the commit (or the failure) the user's epoch is bumped and the feed told, before this runs.
            writes.submit(userId: userId, eventId: storedEventId, stateLimits.enforcing(withActivity)) { [self] result in
                if case .success(let event) = result, !event.replayed {
                    let records = emitted.records.withLock { $0 }
                    sheetCounters.add(records)
                    experimentRecorder.add(records)
                }
                promise.complete {
                    switch result {
                    case .success(let event):
                        return .json(200, event.outcome, headers: event.replayed ? [("Idempotent-Replayed", "true")] : [])
                    case .failure(let error as StateLimitExceeded):
                        throw error.problem
                    case .failure(let error as StoreError):
                        databaseErrors.record()
                        throw Problems.storage(error)
                    case .failure(let error):
                        throw error
                    }
                }
            }
        }
    }
}

/// What an event's body emitted, read after its commit (the body runs once, on the writer).
private final class EmittedActivity: Sendable {
    let records = Mutex<[SheetActivity]>([])
}

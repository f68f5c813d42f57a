import Concurrency
public import SheetPolicy
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One queued update: immutable. The engine runs `body` against the user's state in memory (more
/// than once when its batch is rerun job by job after a statement failed, so a body must depend on
/// the state alone), and hands the result to `completion` once the transaction carrying it
/// committed (or failed).
public struct GroupCommitJob: Sendable {
    public typealias Body = @Sendable (inout UserState, inout [SheetActivity]) throws -> [UInt8]
    public typealias Completion = @Sendable (Result<EventResult, any Error>) -> Void

    public let userId: String
    public let eventId: String?
    public let body: Body
    public let completion: Completion

    public init(userId: String, eventId: String?, body: @escaping Body, completion: @escaping Completion) {
        self.userId = userId
        self.eventId = eventId
        self.body = body
        self.completion = completion
    }
}

/// A processed event id of a user.
public struct EventKey: Hashable, Sendable {
    public var userId: String
    public var eventId: String

    public init(userId: String, eventId: String) {
        self.userId = userId
        self.eventId = eventId
    }
}

/// What a batch's transaction read before its bodies ran: the states of its users (a user without
/// stored state may be absent: empty) and the outcomes of its event ids already processed.
public struct BatchReads: Sendable {
    public var states: [String: UserState]
    public var processed: [EventKey: [UInt8]]

    public init(states: [String: UserState] = [:], processed: [EventKey: [UInt8]] = [:]) {
        self.states = states
        self.processed = processed
    }
}

/// Everything a batch writes, handed to the backend once, in the transaction `begin` opened.
public struct BatchWrites: Sendable {
    /// A user's state as loaded in this transaction and after the user's last update of the batch.
    public struct StateChange: Sendable {
        public var userId: String
        public var old: UserState
        public var new: UserState
    }

    /// An event id to record with the outcome its retries answer.
    public struct ProcessedEvent: Sendable {
        public var userId: String
        public var eventId: String
        public var outcome: [UInt8]
    }

    /// The users whose state changed, in user order (each once; `new != old`).
    public var states: [StateChange] = []
    /// The batch's new event ids, in arrival order.
    public var events: [ProcessedEvent] = []
    /// The batch's rollup changes, written once per (sheet, hour).
    public var rollups = RollupDeltas()
    /// The experiment facts of the batch's records, in arrival order (see `ExperimentSQL`).
    public var experimentFacts: [ExperimentSQL.Write] = []
    /// The users with an update applied now (not replayed, body returned), in user order, each once:
    /// what the other replicas are told.
    public var changedUsers: [String] = []
    /// Unix seconds of the batch (processed event ids' time).
    public var now: Int64
    /// Each user keeps at most this many latest event ids (`StoreRetention.eventIdsPerUser`).
    public var eventIdsPerUser: Int

    public init(now: Int64, eventIdsPerUser: Int) {
        self.now = now
        self.eventIdsPerUser = eventIdsPerUser
    }
}

/// How the engine goes on after a statement of a batch failed.
public enum BatchFailure: Sendable {
    /// Nothing committed and the connection still works: the jobs are rerun in smaller
    /// transactions (halves, down to single jobs), so only the job at fault fails.
    case statement
    /// The transaction or the connection is gone (or the store is closed): every job of the batch
    /// fails, nobody is acknowledged.
    case batch
}

/// A backend's dialect of the batch transaction. One session serves one batch (and its reruns) on
/// the writer's thread.
public protocol GroupCommitSession {
    /// Opens the batch's transaction, locks `users` (in this order, the same on every writer, so
    /// writers never deadlock on them), and reads their states and which of `events` were processed.
    mutating func begin(users: [String], events: [EventKey]) throws -> BatchReads
    /// Writes `writes` in the open transaction and commits it (notifying, where the backend does).
    mutating func commit(_ writes: BatchWrites) throws
    /// After `begin` or `commit` threw: ends what is left of the transaction, and says whether the
    /// jobs may be rerun one by one.
    mutating func abandon(after error: any Error) -> BatchFailure
    /// What a job's completion receives for `error` (a storage error as `StoreError`).
    func jobError(for error: any Error) -> any Error
    /// After each commit, still on the writer's thread (SQLite: the checkpoint policy).
    mutating func committed()
    /// One prune step (see `StoreRetention`), in its own short transaction.
    mutating func prune(now: Int64, retention: StoreRetention) throws
}

/// A backend's writer connection, lent to the engine for one batch at a time.
public protocol GroupCommitBackend: Sendable {
    associatedtype Session: GroupCommitSession
    /// Runs `body` with a session on the writer connection. When it returns, whatever must hear of
    /// the batch's transactions has heard of them: the completions run only afterwards.
    func withSession<R, E: Error>(_ body: (inout Session) throws(E) -> R) throws(E) -> R
}

/// The write counters of a store, which all its engines add to.
public final class WriteCounters: Sendable {
    private let counters = Mutex(WriteStatistics(updates: 0, commits: 0, largestBatch: 0))

    public init() {}

    public var current: WriteStatistics { counters.withLock { $0 } }

    /// Counts a committed transaction of `updates` jobs.
    func committed(updates: Int) {
        counters.withLock { s in
            s.updates += updates
            s.commits += 1
            s.largestBatch = max(s.largestBatch, updates)
        }
    }

    /// Counts a checkpoint that let the WAL start over (SQLite).
    public func walRestarted() { counters.withLock { $0.walRestarts += 1 } }
}

/// The group-commit engine both backends share.
///
/// Callers queue jobs (`GroupCommitQueue`); the writer's thread takes everything queued (at most
/// `maxBatch`) as one batch and runs it in one transaction of its backend: `begin` locks the batch's
/// users in user order and reads their states and seen event ids; the bodies then run in memory in
/// arrival order (a replay runs no body; a throwing body changes nothing; a user's later job sees
/// its earlier jobs' changes); `commit` writes the changed states, the new event ids, the
/// experiment facts and the rollups (once per sheet and hour) and commits. Only then are the jobs
/// completed. When a statement fails, the batch runs again split in halves (each its own
/// transaction, split again while a statement fails), so that only the job at fault fails. Every `StoreRetention.pruneEveryCommits` commits a prune step runs. `close`
/// refuses new jobs and returns once the queued ones ran.
public final class GroupCommitEngine<Backend: GroupCommitBackend>: Sendable {
    /// At most this many jobs share one transaction.
    public static var maxBatch: Int { GroupCommitQueue<GroupCommitJob>.maxBatch }

    public let backend: Backend
    public let retention: StoreRetention
    public let counters: WriteCounters
    /// Whether a job queued inside an event loop's turn is committed by that loop's thread when the
    /// turn ends (`GroupCommitQueue.enqueue(_:atTurnEnd:)`): for a backend whose commit never waits
    /// on the network (SQLite), so that a loop is never held up by a round trip.
    public let commitsAtTurnEnd: Bool
    private let queue: GroupCommitQueue<GroupCommitJob>
    /// Commits since the last prune step (counted by the one drain running: the writer's thread or a loop's).
    private let commitsSincePrune = Atomic<Int>(0)

    public init(backend: Backend, retention: StoreRetention, counters: WriteCounters = WriteCounters(), commitsAtTurnEnd: Bool = false) {
        self.backend = backend
        self.commitsAtTurnEnd = commitsAtTurnEnd
        self.retention = retention
        self.counters = counters
        // The queue's writer must not keep the engine alive (it is set once, below).
        let owner = WeakReference<GroupCommitEngine>()
        queue = GroupCommitQueue { batch in
            guard let engine = owner.value else {
                let completions = batch.map(\.completion)
                return { for completion in completions { completion(.failure(StoreError.unavailable("the store is closed"))) } }
            }
            // Only the completions and results outlive the batch: the bodies are released before
            // any completion runs (a blocking `update`'s body must not outlive its call).
            let completions = zip(batch.map(\.completion), engine.run(batch))
            return { for (completion, result) in completions { completion(result) } }
        }
        owner.value = self
    }

    /// Queues `job`; a closed engine completes it at once with `unavailable`.
    public func enqueue(_ job: GroupCommitJob) {
        enqueue(job, atTurnEnd: commitsAtTurnEnd)
    }

    private func enqueue(_ job: GroupCommitJob, atTurnEnd: Bool) {
        if !queue.enqueue(job, atTurnEnd: atTurnEnd) { job.completion(.failure(StoreError.unavailable("the store is closed"))) }
    }

    /// `SheetStore.update`: queues the job and waits for its completion.
    public func update(
        userId: String, eventId: String?, _ body: (inout UserState, inout [SheetActivity]) throws -> [UInt8]
    ) throws -> EventResult {
        try withoutActuallyEscaping(body) { body in
            // The body is called on the writer's thread while this thread waits below, and the
            // engine releases it before the completion runs: nothing else can call it, and it
            // cannot outlive this call (`withoutActuallyEscaping` checks).
            nonisolated(unsafe) let body = body
            let outcome = Latch<Result<EventResult, any Error>>()
            // Never left to the end of this thread's loop turn: the turn cannot end while it waits.
            enqueue(
                GroupCommitJob(userId: userId, eventId: eventId, body: { try body(&$0, &$1) }) { result in
                    outcome.open(with: result)
                }, atTurnEnd: false)
            return try outcome.wait().get()
        }
    }

    /// One prune step now, on the writer connection (start-up, tests).
    public func prune(now: Int64) throws {
        try backend.withSession { session throws in try session.prune(now: now, retention: retention) }
    }

    /// Refuses new jobs; returns once the queued ones ran.
    public func close() { queue.close() }

    // MARK: - Batches

    /// Runs one batch; returns each job's result, in order.
    private func run(_ batch: [GroupCommitJob]) -> [Result<EventResult, any Error>] {
        let now = currentUnixTime()
        return backend.withSession { session in process(batch, &session, now: now) }
    }

    private func process(_ jobs: [GroupCommitJob], _ session: inout Backend.Session, now: Int64) -> [Result<EventResult, any Error>] {
        switch attempt(jobs, &session, now: now) {
        case .committed(let results):
            counters.committed(updates: jobs.count)
            session.committed()
            if commitsSincePrune.add(1, ordering: .relaxed).newValue >= StoreRetention.pruneEveryCommits {
                commitsSincePrune.store(0, ordering: .relaxed)
                try? session.prune(now: now, retention: retention)
            }
            return results
        case .failed(_, .statement) where jobs.count > 1:
            // Each half again, in its own transaction, in order (a user's jobs keep their order):
            // down to the job at fault, which fails alone; one bad job among n costs about
            // 2 log2(n) transactions instead of n.
            let half = jobs.count / 2
            return process(Array(jobs[..<half]), &session, now: now) + process(Array(jobs[half...]), &session, now: now)
        case .failed(let error, _):
            return Array(repeating: .failure(session.jobError(for: error)), count: jobs.count)
        }
    }

    private enum Attempt {
        case committed([Result<EventResult, any Error>])
        case failed(any Error, BatchFailure)
    }

    /// `jobs` in one transaction.
    private func attempt(_ jobs: [GroupCommitJob], _ session: inout Backend.Session, now: Int64) -> Attempt {
        // Users in one order on every writer (and replica): their locks can then never deadlock.
        let users = Set(jobs.lazy.map(\.userId)).sorted()
        let events = jobs.compactMap { job in job.eventId.map { EventKey(userId: job.userId, eventId: $0) } }
        let reads: BatchReads
        do {
            reads = try session.begin(users: users, events: events)
        } catch {
            return .failed(error, session.abandon(after: error))
        }
        var states = reads.states
        var seen = reads.processed
        var writes = BatchWrites(now: now, eventIdsPerUser: retention.eventIdsPerUser)
        var applied = Set<String>()
        var results: [Result<EventResult, any Error>] = []
        results.reserveCapacity(jobs.count)
        for job in jobs {
            let key = job.eventId.map { EventKey(userId: job.userId, eventId: $0) }
            if let key, let outcome = seen[key] {
                results.append(.success(EventResult(outcome: outcome, replayed: true)))
                continue
            }
            let old = states[job.userId] ?? UserState()
            var new = old
            var activity: [SheetActivity] = []
            do {
                let outcome = try job.body(&new, &activity)
                writes.rollups.add(activity, from: old, to: new)
                if activity.contains(where: \.isExperimentFact) {
                    writes.experimentFacts += ExperimentSQL.writes(userId: job.userId, activity: activity)
                }
                if let key {
                    writes.events.append(.init(userId: job.userId, eventId: key.eventId, outcome: outcome))
                    seen[key] = outcome
                }
                states[job.userId] = new
                applied.insert(job.userId)
                results.append(.success(EventResult(outcome: outcome, replayed: false)))
            } catch {
                // The body's own error, unchanged; its changes (in `new`) are dropped.
                results.append(.failure(error))
            }
        }
        for user in users {
            guard applied.contains(user) else { continue }
            writes.changedUsers.append(user)
            let old = reads.states[user] ?? UserState()
            if let new = states[user], new != old { writes.states.append(.init(userId: user, old: old, new: new)) }
        }
        do {
            try session.commit(writes)
        } catch {
            return .failed(error, session.abandon(after: error))
        }
        return .committed(results)
    }
}

/// The wall clock in Unix seconds (the retention's prune steps, event timestamps of a batch).
public func currentUnixTime() -> Int64 { Int64(time(nil)) }

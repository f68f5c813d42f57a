import Dispatch
import SheetPolicy
import Synchronization
import Testing

@testable import SQLiteStore
@testable import SheetStore

/// The engine alone, over an in-memory backend that records every transaction: what a batch reads,
/// runs and writes, how it reruns after a failed statement, when it completes, when it prunes.
@Suite struct GroupCommitEngineTests {
    struct StatementFailed: Error {}
    struct ConnectionLost: Error {}
    struct BodyFailed: Error {}

    /// The committed data, and what happened to it.
    final class Database: Sendable {
        struct Contents {
            var states: [String: UserState] = [:]
            var processed: [EventKey: [UInt8]] = [:]
            /// Each committed transaction's locked users, in lock order.
            var commits: [[String]] = []
            var attempts = 0
            var prunes = 0
            var sessionOpen = false
            /// A state write of this user fails (a statement error).
            var refusedUser: String?
            /// Every commit fails with a lost connection.
            var connectionLost = false
        }

        let contents = Mutex(Contents())
    }

    struct Backend: GroupCommitBackend {
        let database: Database

        func withSession<R, E: Error>(_ body: (inout Session) throws(E) -> R) throws(E) -> R {
            database.contents.withLock { $0.sessionOpen = true }
            defer { database.contents.withLock { $0.sessionOpen = false } }
            var session = Session(database: database)
            return try body(&session)
        }
    }

    struct Session: GroupCommitSession {
        let database: Database
        var locked: [String] = []

        mutating func begin(users: [String], events: [EventKey]) throws -> BatchReads {
            locked = users
            return database.contents.withLock { c in
                c.attempts += 1
                return BatchReads(states: c.states.filter { users.contains($0.key) }, processed: c.processed.filter { events.contains($0.key) })
            }
        }

        mutating func commit(_ writes: BatchWrites) throws {
            let users = locked
            try database.contents.withLock { (c: inout Database.Contents) throws in
                if c.connectionLost { throw ConnectionLost() }
                if let refused = c.refusedUser, writes.states.contains(where: { $0.userId == refused }) { throw StatementFailed() }
                for change in writes.states { c.states[change.userId] = change.new }
                for event in writes.events { c.processed[EventKey(userId: event.userId, eventId: event.eventId)] = event.outcome }
                c.commits.append(users)
            }
        }

        mutating func abandon(after error: any Error) -> BatchFailure { error is StatementFailed ? .statement : .batch }
        func jobError(for error: any Error) -> any Error { StoreError.unavailable("\(type(of: error))") }
        mutating func committed() {}
        mutating func prune(now: Int64, retention: StoreRetention) throws { database.contents.withLock { $0.prunes += 1 } }
    }

    static let key = ContainerKey(containerId: "c")

    /// A value a completion can reach.
    final class Box<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
    }

    /// Queues `jobs` while the writer is held by a first job, so that they form one batch; returns
    /// each job's result, in order.
    static func runAsOneBatch(
        _ engine: GroupCommitEngine<Backend>, _ jobs: [(user: String, eventId: String?, body: GroupCommitJob.Body)]
    ) -> [Result<EventResult, any Error>] {
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        engine.enqueue(
            GroupCommitJob(
                userId: "holder", eventId: nil,
                body: { _, _ in
                    held.signal()
                    release.wait()
                    return []
                }, completion: { _ in }))
        held.wait()
        let results = Box<[Int: Result<EventResult, any Error>]>([:])
        let done = DispatchGroup()
        for (index, job) in jobs.enumerated() {
            done.enter()
            engine.enqueue(
                GroupCommitJob(userId: job.user, eventId: job.eventId, body: job.body) { result in
                    results.value.withLock { $0[index] = result }
                    done.leave()
                })
        }
        release.signal()
        done.wait()
        return results.value.withLock { r in jobs.indices.map { r[$0]! } }
    }

    static func add(_ n: Int, outcome: UInt8) -> GroupCommitJob.Body {
        { state, _ in
            state.containers[key, default: ContainerCount(count: 0)].count += n
            return [outcome]
        }
    }

    /// One transaction for the batch, its users locked in user order; the bodies run in arrival
    /// order, a user's later job seeing the earlier one's change; a throwing body changes nothing;
    /// an event id repeated in the batch replays the first outcome; nothing completes before the
    /// commit and the end of the session.
    @Test func aBatchRunsItsJobsInOrderInOneTransaction() throws {
        let database = Database()
        let engine = GroupCommitEngine(backend: Backend(database: database), retention: .default)
        defer { engine.close() }
        let results = Self.runAsOneBatch(
            engine,
            [
                ("b", "e1", Self.add(1, outcome: 1)),
                ("a", nil, Self.add(10, outcome: 2)),
                ("b", nil, { _, _ in throw BodyFailed() }),
                (
                    "b", "e2",
                    { state, _ in
                        #expect(state.count(for: Self.key) == 1, "the earlier job's change")
                        state.containers[Self.key]!.count *= 5
                        return [3]
                    }
                ),
                (
                    "b", "e1",
                    { _, _ in
                        Issue.record("a replayed event runs no body")
                        return [9]
                    }
                ),
            ])
        #expect(try results[0].get() == EventResult(outcome: [1], replayed: false))
        #expect(try results[1].get() == EventResult(outcome: [2], replayed: false))
        #expect(throws: BodyFailed.self) { try results[2].get() }
        #expect(try results[3].get() == EventResult(outcome: [3], replayed: false))
        #expect(try results[4].get() == EventResult(outcome: [1], replayed: true))
        let contents = database.contents.withLock { $0 }
        #expect(contents.commits == [["holder"], ["a", "b"]])
        #expect(contents.states["b"]?.count(for: Self.key) == 5)
        #expect(contents.states["a"]?.count(for: Self.key) == 10)
        #expect(contents.processed.keys.map(\.eventId).sorted() == ["e1", "e2"])
        #expect(engine.counters.current.commits == 2)
        #expect(engine.counters.current.largestBatch == 5)
    }

    /// A failed statement reruns the batch in halves: only the job at fault fails, with the
    /// backend's error; the others commit, a user's jobs still in order, in far fewer transactions
    /// than jobs.
    @Test func aFailedStatementFailsOnlyTheJobAtFault() throws {
        let database = Database()
        database.contents.withLock { $0.refusedUser = "bad" }
        let engine = GroupCommitEngine(backend: Backend(database: database), retention: .default)
        defer { engine.close() }
        let jobs: [(user: String, eventId: String?, body: GroupCommitJob.Body)] = (0..<64).map { i in
            (i == 40 ? "bad" : "u\(i % 4)", "e\(i)", Self.add(1, outcome: UInt8(i)))
        }
        let results = Self.runAsOneBatch(engine, jobs)
        for (i, result) in results.enumerated() {
            if i == 40 {
                #expect(throws: StoreError.unavailable("StatementFailed")) { try result.get() }
            } else {
                #expect(try result.get() == EventResult(outcome: [UInt8(i)], replayed: false), "job \(i)")
            }
        }
        let contents = database.contents.withLock { $0 }
        for u in 0..<4 { #expect(contents.states["u\(u)"]?.count(for: Self.key) == 16 - (u == 0 ? 1 : 0)) }
        #expect(contents.states["bad"] == nil)
        #expect(contents.commits.count - 1 <= 2 * 6, "\(contents.commits.count - 1) transactions for 64 jobs")
        #expect(engine.counters.current.updates == 1 + 63)
    }

    /// A failure that is not a statement's (the connection or the commit lost) fails every job of
    /// the batch, commits nothing and reruns nothing.
    @Test func aLostCommitAcknowledgesNobody() throws {
        let database = Database()
        let engine = GroupCommitEngine(backend: Backend(database: database), retention: .default)
        defer { engine.close() }
        _ = try engine.update(userId: "u", eventId: nil) { state, _ in
            state.containers[Self.key] = ContainerCount(count: 1)
            return []
        }
        database.contents.withLock { $0.connectionLost = true }
        let attemptsBefore = database.contents.withLock { $0.attempts }
        let results = Self.runAsOneBatch(engine, (0..<10).map { i in ("u\(i)", nil, Self.add(1, outcome: 0)) })
        database.contents.withLock { $0.connectionLost = false }
        for result in results { #expect(throws: StoreError.unavailable("ConnectionLost")) { try result.get() } }
        let contents = database.contents.withLock { $0 }
        #expect(contents.attempts - attemptsBefore == 2, "the holder's batch and the batch of ten, once each")
        #expect(contents.states.keys.sorted() == ["u"])
    }

    /// Completions run once the session has ended (SQLite's readers have heard of the commit).
    @Test func completionsRunAfterTheSession() throws {
        let database = Database()
        let engine = GroupCommitEngine(backend: Backend(database: database), retention: .default)
        defer { engine.close() }
        let done = DispatchSemaphore(value: 0)
        let sessionOpen = Box<Bool?>(nil)
        engine.enqueue(
            GroupCommitJob(userId: "u", eventId: nil, body: Self.add(1, outcome: 0)) { _ in
                let open = database.contents.withLock { $0.sessionOpen }
                sessionOpen.value.withLock { $0 = open }
                done.signal()
            })
        done.wait()
        #expect(sessionOpen.value.withLock { $0 } == false)
    }

    /// One prune step every `StoreRetention.pruneEveryCommits` commits; a closed engine refuses jobs.
    @Test func prunesEveryFewHundredCommitsAndRefusesJobsWhenClosed() throws {
        let database = Database()
        let engine = GroupCommitEngine(backend: Backend(database: database), retention: .default)
        for i in 0..<(StoreRetention.pruneEveryCommits * 2 + 1) {
            _ = try engine.update(userId: "u", eventId: "e\(i)") { _, _ in [] }
        }
        #expect(database.contents.withLock { $0.prunes } == 2)
        engine.close()
        #expect(throws: StoreError.unavailable("the store is closed")) {
            try engine.update(userId: "u", eventId: nil) { _, _ in [] }
        }
    }
}

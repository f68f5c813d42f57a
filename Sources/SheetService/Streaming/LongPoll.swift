import Concurrency
import MicroHTTP
import SheetPolicy
import Synchronization

/// A decision GET held by `Prefer: wait=N` (RFC 7240) until the decision differs from the ETag the
/// client has (200 with the new body) or N seconds pass (304). Its connection is parked meanwhile
/// (a deferred response), so it holds no worker thread.
final class LongPoll: DecisionWatcher {
    let userId: String
    let context: ClientContext
    let waitSeconds: Int
    /// The answer the client holds (its ETag; its length for the 304), in the form it asked for.
    private let held: DecisionCache.Answer
    private let form: DecisionForm
    private let promise: ResponsePromise
    private let settled = Atomic<Bool>(false)
    private let answer: @Sendable (String, ClientContext) -> DecisionCache.Fresh?
    private let done: @Sendable (LongPoll) -> Void
    /// Rechecks at the decision's next time boundary, through `wake` (the feed's queue).
    let boundary = BoundaryTimer()
    private let clock: @Sendable () -> Timestamp
    private let wake: @Sendable (LongPoll) -> Void

    init(
        userId: String, context: ClientContext, held: DecisionCache.Answer, form: DecisionForm, waitSeconds: Int, promise: ResponsePromise,
        answer: @escaping @Sendable (String, ClientContext) -> DecisionCache.Fresh?, done: @escaping @Sendable (LongPoll) -> Void,
        clock: @escaping @Sendable () -> Timestamp, wake: @escaping @Sendable (LongPoll) -> Void
    ) {
        self.clock = clock
        self.wake = wake
        self.userId = userId
        self.context = context
        self.held = held
        self.form = form
        self.waitSeconds = waitSeconds
        self.promise = promise
        self.answer = answer
        self.done = done
    }

    func recheck() {
        guard !settled.load(ordering: .acquiring), let current = answer(userId, context) else { return }
        guard current.answer.etag != held.etag else { return armBoundary(current.validUntil) }
        settle(DecisionResponse.ok(current.answer, form: form, wait: waitSeconds))
    }

    /// Arms the timer for the decision's next time boundary (none when it has none).
    func armBoundary(_ validUntil: Timestamp?) {
        boundary.arm(at: validUntil, now: clock()) { [weak self] in
            guard let self, !self.settled.load(ordering: .acquiring) else { return }
            self.wake(self)
        }
    }

    /// The wait is over without a change (or the server is stopping): 304, as for a plain conditional GET.
    func expire() {
        settle(DecisionResponse.notModified(held, form: form, wait: waitSeconds))
    }

    /// The client went away while waiting: the poll ends now (its answer reaches nobody), so it holds
    /// neither its connection nor its user's place until the end of its wait.
    func clientClosed() {
        settle(DecisionResponse.notModified(held, form: form, wait: waitSeconds))
    }

    private func settle(_ response: HTTPResponse) {
        guard !settled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        boundary.cancel()
        done(self)
        promise.succeed(response)
    }
}

/// The long-polls waiting in this process: their per-user limit, their deadlines and shutdown.
final class LongPolls: Sendable {
    /// Why a new long-poll was refused.
    enum Refusal: Error { case userFull }

    private struct Registry {
        var polls: [ObjectIdentifier: LongPoll] = [:]
        /// Long-polls per user, reserved or waiting.
        var perUser: [String: Int] = [:]
        var closed = false
    }

    /// Long-polls one user may have waiting at once (as decision streams); one more is a 429.
    let maxPerUser: Int
    private let waiting = Mutex(Registry())

    init(maxPerUser: Int = 8) {
        self.maxPerUser = maxPerUser
    }

    /// Takes one of `userId`'s places; pair with `add` (whose poll gives it back when it settles) or `release`.
    func reserve(_ userId: String) throws(Refusal) {
        try waiting.withLock { r throws(Refusal) in
            if r.perUser[userId, default: 0] >= maxPerUser { throw .userFull }
            r.perUser[userId, default: 0] += 1
        }
    }

    /// Gives back a place of `userId` (a reservation never added, or a poll that settled).
    func release(_ userId: String) {
        waiting.withLock { r in
            let n = (r.perUser[userId] ?? 1) - 1
            r.perUser[userId] = n > 0 ? n : nil
        }
    }

    /// Registers `poll` (reserved) and arms its deadline; false after `expireAll` (answer at once instead).
    func add(_ poll: LongPoll) -> Bool {
        let added = waiting.withLock { r in
            if r.closed { return false }
            r.polls[ObjectIdentifier(poll)] = poll
            return true
        }
        if added {
            TimerThread.shared.schedule(after: .seconds(poll.waitSeconds)) { poll.expire() }
        }
        return added
    }

    /// A poll settled: it leaves the registry and gives its user's place back.
    func remove(_ poll: LongPoll) {
        waiting.withLock { r in
            guard r.polls.removeValue(forKey: ObjectIdentifier(poll)) != nil else { return }
            let n = (r.perUser[poll.userId] ?? 1) - 1
            r.perUser[poll.userId] = n > 0 ? n : nil
        }
    }

    var count: Int { waiting.withLock { $0.polls.count } }

    /// Long-polls of `userId` reserved or waiting, for tests.
    func count(of userId: String) -> Int { waiting.withLock { $0.perUser[userId] ?? 0 } }

    /// Shutdown: every waiting poll answers 304 now (with `Connection: close`, as every answer while draining).
    func expireAll() {
        let all = waiting.withLock { r in
            r.closed = true
            return Array(r.polls.values)
        }
        for poll in all { poll.expire() }
    }
}

import Dispatch
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
    /// The answer the client holds (its ETag; its length for the 304).
    private let held: DecisionCache.Answer
    private let promise: ResponsePromise
    private let settled = Atomic<Bool>(false)
    private let answer: @Sendable (String, ClientContext) -> DecisionCache.Fresh?
    private let done: @Sendable (LongPoll) -> Void
    /// Rechecks at the decision's next time boundary, through `wake` (the feed's queue).
    let boundary = BoundaryTimer()
    private let clock: @Sendable () -> Timestamp
    private let wake: @Sendable (LongPoll) -> Void

    init(
        userId: String, context: ClientContext, held: DecisionCache.Answer, waitSeconds: Int, promise: ResponsePromise,
        answer: @escaping @Sendable (String, ClientContext) -> DecisionCache.Fresh?, done: @escaping @Sendable (LongPoll) -> Void,
        clock: @escaping @Sendable () -> Timestamp, wake: @escaping @Sendable (LongPoll) -> Void
    ) {
        self.clock = clock
        self.wake = wake
        self.userId = userId
        self.context = context
        self.held = held
        self.waitSeconds = waitSeconds
        self.promise = promise
        self.answer = answer
        self.done = done
    }

    var preferenceApplied: (String, String) { ("Preference-Applied", "wait=\(waitSeconds)") }

    func recheck() {
        guard !settled.load(ordering: .acquiring), let current = answer(userId, context) else { return }
        guard current.answer.etag != held.etag else { return armBoundary(current.validUntil) }
        settle(SheetService.decisionResponse(current.answer, extraHeaders: [preferenceApplied]))
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
        settle(SheetService.notModified(held, extraHeaders: [preferenceApplied]))
    }

    private func settle(_ response: HTTPResponse) {
        guard !settled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        boundary.cancel()
        done(self)
        promise.succeed(response)
    }
}

/// The long-polls waiting in this process (for shutdown).
final class LongPolls: Sendable {
    private let waiting = Mutex<(polls: [ObjectIdentifier: LongPoll], closed: Bool)>(([:], false))
    private let timers = DispatchQueue(label: "sheetd.long-poll-deadlines")

    /// Registers `poll` and arms its deadline; false after `expireAll` (answer at once instead).
    func add(_ poll: LongPoll) -> Bool {
        let added = waiting.withLock { w in
            if w.closed { return false }
            w.polls[ObjectIdentifier(poll)] = poll
            return true
        }
        if added {
            timers.asyncAfter(deadline: .now() + .seconds(poll.waitSeconds)) { poll.expire() }
        }
        return added
    }

    func remove(_ poll: LongPoll) {
        _ = waiting.withLock { $0.polls.removeValue(forKey: ObjectIdentifier(poll)) }
    }

    var count: Int { waiting.withLock { $0.polls.count } }

    /// Shutdown: every waiting poll answers 304 now (with `Connection: close`, as every answer while draining).
    func expireAll() {
        let all = waiting.withLock { w in
            w.closed = true
            return Array(w.polls.values)
        }
        for poll in all { poll.expire() }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Timers pending on a heap, by deadline: the pure part of `TimerThread`, with time passed in, so
/// tests step it without waiting. Deadlines are monotonic microseconds (`Timers.now()`).
public struct TimerHeap<Action> {
    /// What `popDue` hands back: the action, and the token it was scheduled under.
    public typealias Due = (token: TimerToken, action: Action)

    private struct Entry {
        let deadline: Int
        /// Scheduling order, so that timers with one deadline run in the order they were scheduled.
        let sequence: UInt64
        let token: TimerToken
        let action: Action
        /// For a repeating timer, its period; each run is scheduled one period after the previous
        /// deadline (not after the run), so the phase a caller chose does not drift.
        let interval: Int?
    }

    /// Cancelled entries stay in the heap until they reach its top (then dropped): a cancel costs no
    /// search. `live` holds the tokens still to run.
    private var heap: [Entry] = []
    private var live: Set<TimerToken> = []
    private var sequence: UInt64 = 0
    private var nextToken: UInt64 = 1

    public init() {}

    /// Timers scheduled and not yet run or cancelled (a repeating timer counts until cancelled).
    public var count: Int { live.count }

    /// The earliest deadline, nil when nothing is pending.
    public mutating func nextDeadline() -> Int? {
        dropDeadTop()
        return heap.first?.deadline
    }

    /// Schedules `action` at `deadline`; with `interval`, again every `interval` after it.
    public mutating func schedule(at deadline: Int, every interval: Int? = nil, _ action: Action) -> TimerToken {
        precondition(interval.map { $0 > 0 } ?? true, "a repeating timer needs a positive interval")
        let token = TimerToken(raw: nextToken)
        nextToken += 1
        live.insert(token)
        push(Entry(deadline: deadline, sequence: nextSequence(), token: token, action: action, interval: interval))
        return token
    }

    /// Cancels a timer: it does not run (again). False when it already ran (once) or was cancelled.
    public mutating func cancel(_ token: TimerToken) -> Bool {
        live.remove(token) != nil
    }

    /// The actions due at `now`, earliest first; repeating timers are scheduled again.
    public mutating func popDue(now: Int) -> [Due] {
        var due: [Due] = []
        while true {
            dropDeadTop()
            guard let top = heap.first, top.deadline <= now else { return due }
            popTop()
            due.append((top.token, top.action))
            if let interval = top.interval {
                // Skip the periods missed while late rather than run them in a burst.
                var next = top.deadline + interval
                if next <= now { next += (now - next) / interval * interval + interval }
                push(Entry(deadline: next, sequence: nextSequence(), token: top.token, action: top.action, interval: interval))
            } else {
                live.remove(top.token)
            }
        }
    }

    private mutating func nextSequence() -> UInt64 {
        sequence += 1
        return sequence
    }

    private mutating func dropDeadTop() {
        while let top = heap.first, !live.contains(top.token) { popTop() }
    }

    private static func before(_ a: Entry, _ b: Entry) -> Bool {
        a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
    }

    private mutating func push(_ entry: Entry) {
        heap.append(entry)
        var i = heap.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard Self.before(heap[i], heap[parent]) else { break }
            heap.swapAt(i, parent)
            i = parent
        }
    }

    private mutating func popTop() {
        let last = heap.removeLast()
        guard !heap.isEmpty else { return }
        heap[0] = last
        var i = 0
        while true {
            let l = 2 * i + 1
            let r = l + 1
            var smallest = i
            if l < heap.count && Self.before(heap[l], heap[smallest]) { smallest = l }
            if r < heap.count && Self.before(heap[r], heap[smallest]) { smallest = r }
            if smallest == i { return }
            heap.swapAt(i, smallest)
            i = smallest
        }
    }
}

/// Names one scheduled timer, for `cancel`.
public struct TimerToken: Hashable, Sendable {
    let raw: UInt64
}

/// The project's one timer facility: a heap of deadlines served by one thread, which runs each due
/// action itself (actions must be short: hand longer work to a queue). Repeating timers keep their
/// phase, so callers spread periodic work (heartbeats) by giving each timer its own first deadline
/// within the interval (`spread(_:of:over:)`) instead of waking everything at once.
public final class TimerThread: Sendable {
    private struct State {
        var heap = TimerHeap<@Sendable () -> Void>()
        var started = false
        var stopped = false
        /// A timer was scheduled or cancelled since the thread last looked: its wait must be recomputed.
        var changed = false
    }

    private let state = ConditionLock(State())

    /// The process-wide timer thread (started on first use, never stopped).
    public static let shared = TimerThread()

    public init() {}

    /// Runs `action` on the timer thread once, after `delay`.
    @discardableResult
    public func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> TimerToken {
        schedule(at: Timers.now() + Timers.micros(delay), every: nil, action)
    }

    /// Runs `action` on the timer thread every `interval`, first after `firstAfter`.
    @discardableResult
    public func scheduleRepeating(
        every interval: Duration, firstAfter: Duration, _ action: @escaping @Sendable () -> Void
    ) -> TimerToken {
        schedule(at: Timers.now() + Timers.micros(firstAfter), every: max(1, Timers.micros(interval)), action)
    }

    /// Cancels a timer; false when it already ran (once) or was cancelled. An action already running
    /// is not waited for.
    @discardableResult
    public func cancel(_ token: TimerToken) -> Bool {
        state.withLock(wake: .one) { s in
            s.changed = true
            return s.heap.cancel(token)
        }
    }

    /// Timers pending.
    public var pending: Int { state.withLock { $0.heap.count } }

    /// Stops the thread after the actions running now; pending timers never run.
    public func stop() {
        state.withLock(wake: .all) { $0.stopped = true }
    }

    /// The first deadline offset of member `index` of `count` members sharing a period: evenly spread
    /// over `interval`, so that `count` repeating timers do not fire together.
    public static func spread(_ index: Int, of count: Int, over interval: Duration) -> Duration {
        guard count > 1 else { return .zero }
        return interval * (index % count) / count
    }

    private func schedule(at deadline: Int, every interval: Int?, _ action: @escaping @Sendable () -> Void) -> TimerToken {
        let (token, start) = state.withLock(wake: .one) { s -> (TimerToken, Bool) in
            let token = s.heap.schedule(at: deadline, every: interval, action)
            s.changed = true
            defer { s.started = true }
            return (token, !s.started && !s.stopped)
        }
        if start { startDetachedThread(named: "timer") { [self] in run() } }
        return token
    }

    /// The timer thread: waits for the earliest deadline (or a change), runs what is due. With
    /// nothing pending it waits without a timeout: a schedule, a cancel or `stop` wakes it.
    private func run() {
        while true {
            let due = state.wait(
                until: { s in
                    if s.stopped || s.changed { return true }
                    guard let next = s.heap.nextDeadline() else { return false }
                    return next <= Timers.now()
                },
                timeout: nextWait()
            ) { s -> [TimerHeap<@Sendable () -> Void>.Due]? in
                s.changed = false
                return s.stopped ? nil : s.heap.popDue(now: Timers.now())
            }
            switch due {
            case .none: continue  // the wait timed out: look again
            case .some(.none): return  // stopped
            case .some(.some(let actions)): for (_, action) in actions { action() }
            }
        }
    }

    /// How long to sleep at most: until the earliest deadline (a schedule or cancel wakes the thread
    /// earlier), nil (no timeout) when nothing is pending.
    private func nextWait() -> Duration? {
        let next = state.withLock { $0.heap.nextDeadline() }
        guard let next else { return nil }
        return .microseconds(max(0, next - Timers.now()))
    }
}

/// The monotonic clock timers use.
public enum Timers {
    /// Monotonic microseconds.
    @inline(__always) public static func now() -> Int {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int(ts.tv_sec) * 1_000_000 + Int(ts.tv_nsec) / 1000
    }

    /// A duration in whole microseconds (negative ones as 0).
    public static func micros(_ d: Duration) -> Int {
        let (seconds, attoseconds) = d.components
        return max(0, Int(seconds) * 1_000_000 + Int(attoseconds / 1_000_000_000_000))
    }
}

import Concurrency
import SheetPolicy
import Synchronization

/// A watcher's timer at its decision's next time boundary (`Decision.validUntil`: a schedule start or
/// end, a cooldown's end, a cap window sliding): the decision may change then with no write, so the
/// watcher rechecks. One timer per boundary, none for a decision without one (no polling).
///
/// The delay is the boundary minus the service's clock, run on the monotonic clock: a wall clock
/// stepped meanwhile makes it early or late by the step; early, the recheck finds the same answer and
/// arms again for the rest.
final class BoundaryTimer: Sendable {
    /// The longest single wait; a farther boundary is reached in several (the recheck re-arms).
    static let longestWaitMillis: Int64 = 24 * 3600 * 1000

    private struct Armed {
        /// Makes every earlier timer a no-op (one may be running while it is replaced).
        var generation = 0
        var at: Timestamp?
        /// The pending timer, cancelled when replaced so that far boundaries do not pile up.
        var token: TimerToken?
    }

    private let armed = Mutex(Armed())

    /// Arms a timer firing `fire` at `boundary` (measured against `now`), unless one is armed for that
    /// same instant already. A `nil` boundary disarms.
    func arm(at boundary: Timestamp?, now: Timestamp, fire: @escaping @Sendable () -> Void) {
        let generation: Int? = armed.withLock { a in
            guard a.at != boundary else { return nil }
            a.generation += 1
            a.at = boundary
            if let token = a.token { TimerThread.shared.cancel(token) }
            a.token = nil
            return boundary == nil ? nil : a.generation
        }
        guard let generation, let boundary else { return }
        let delay = min(max(boundary.millisecondsSince1970 - now.millisecondsSince1970, 1), Self.longestWaitMillis)
        let token = TimerThread.shared.schedule(after: .milliseconds(delay)) { [self] in
            let current = armed.withLock { a in
                guard a.generation == generation else { return false }
                a.at = nil  // fired: the recheck arms the next one (possibly the same instant, after an early wake)
                a.token = nil
                return true
            }
            if current { fire() }
        }
        armed.withLock { a in
            // Re-armed or cancelled meanwhile: this timer is stale already.
            if a.generation == generation { a.token = token } else { TimerThread.shared.cancel(token) }
        }
    }

    /// No timer fires any more (the watcher ended).
    func cancel() {
        armed.withLock { a in
            a.generation += 1
            a.at = nil
            if let token = a.token { TimerThread.shared.cancel(token) }
            a.token = nil
        }
    }

    /// The boundary armed now, for tests.
    var armedAt: Timestamp? { armed.withLock { $0.at } }
}

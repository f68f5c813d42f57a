import MicroHTTP
import Observability
import Synchronization

/// How many events one user may report: a token bucket per user id, filled at `eventsPerMinute / 60`
/// per second up to `eventsPerMinute` (a burst of a whole minute's worth), one token per event. An app
/// reports a handful of events per screen, so no honest client comes near the default; a token that
/// loops on events gets 429 with `Retry-After` instead of filling the database.
///
/// Per process: behind a balancer each replica counts its own share. Users whose bucket is full carry
/// no information (a new bucket starts full), so they are dropped when a shard grows: memory follows
/// the users sending fast right now, not every user ever seen.
final class EventRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var lastMicros: Int
    }
    private struct Shard {
        var buckets: [String: Bucket] = [:]
        /// Buckets held before the next sweep for full ones.
        var sweepAt = EventRateLimiter.initialSweepSize
    }
    private final class LockedShard: Sendable {
        let shard = Mutex(Shard())
    }

    /// Events per user per minute (the bucket's size); 0 turns the limit off.
    let eventsPerMinute: Int
    private let shards: [LockedShard]
    private static let shardCount = 32
    private static let initialSweepSize = 1024

    init(eventsPerMinute: Int) {
        self.eventsPerMinute = eventsPerMinute
        self.shards = (0..<Self.shardCount).map { _ in LockedShard() }
    }

    /// Takes one event of `userId` at `nowMicros` (monotonic): nil when admitted, otherwise the whole
    /// seconds until one more would be.
    func admit(_ userId: String, nowMicros: Int = monotonicMicros()) -> Int? {
        guard eventsPerMinute > 0 else { return nil }
        let capacity = Double(eventsPerMinute)
        let perMicro = capacity / 60_000_000
        return shards[userId.hashValue & (Self.shardCount - 1)].shard.withLock { shard -> Int? in
            var bucket = shard.buckets[userId] ?? Bucket(tokens: capacity, lastMicros: nowMicros)
            bucket.tokens = min(capacity, bucket.tokens + Double(max(0, nowMicros - bucket.lastMicros)) * perMicro)
            bucket.lastMicros = nowMicros
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                shard.buckets[userId] = bucket
                if shard.buckets.count > shard.sweepAt { Self.sweep(&shard, capacity: capacity, perMicro: perMicro, now: nowMicros) }
                return nil
            }
            shard.buckets[userId] = bucket
            return max(1, Int(((1 - bucket.tokens) / perMicro / 1_000_000).rounded(.up)))
        }
    }

    /// Drops the buckets that would be full now; the next sweep waits until the shard doubles.
    private static func sweep(_ shard: inout Shard, capacity: Double, perMicro: Double, now: Int) {
        shard.buckets = shard.buckets.filter { _, b in b.tokens + Double(now - b.lastMicros) * perMicro < capacity }
        shard.sweepAt = max(initialSweepSize, 2 * shard.buckets.count)
    }
}

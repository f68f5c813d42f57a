public import Synchronization

/// A bounded map of `Key` to `Value` shared by threads: `shardCount` shards, each behind its own
/// lock and holding two generations of at most `generationCapacity` entries. When a shard's current
/// generation is full it becomes the previous one and the older one is dropped, so a shard holds at
/// most `2 * generationCapacity` entries and eviction is O(1) (no per-entry bookkeeping). A hit in the
/// previous generation moves the entry into the current one, so entries in use survive (LRU-like).
///
/// Every operation takes the key's `hash`, well-mixed bits the caller computes once (it may use
/// other bits of it for its own tables); bits 16 and up pick the shard. One operation takes one
/// shard lock and allocates nothing unless it stores a key or starts a new generation.
public final class GenerationalCache<Key: CacheKey, Value: Sendable>: Sendable {
    @usableFromInline struct Generations {
        @usableFromInline var current: [Key: Value] = [:]
        @usableFromInline var previous: [Key: Value] = [:]

        @inlinable init() {}

        /// Stores `value` under `key` in the current generation, starting a new one when it is full.
        @inlinable mutating func store(_ key: Key, _ value: Value, capacity: Int) {
            if current.count >= capacity {
                previous = current
                current = [:]
                current.reserveCapacity(capacity)
            }
            current[key] = value
        }

        /// The entry for `key`, moved into the current generation when it was in the previous one.
        @inlinable mutating func find(_ key: Key, capacity: Int) -> Value? {
            if let value = current[key] { return value }
            guard let value = previous.removeValue(forKey: key) else { return nil }
            store(key.storable(), value, capacity: capacity)
            return value
        }
    }

    @usableFromInline final class Shard: Sendable {
        @usableFromInline let generations = Mutex(Generations())
        @usableFromInline init() {}
    }

    public let shardCount: Int
    /// Entries per generation of one shard.
    public let generationCapacity: Int
    @usableFromInline let shards: [Shard]

    /// `shardCount` is rounded up to a power of two; `generationCapacity` is per shard.
    public init(generationCapacity: Int, shardCount: Int = 64) {
        var shardCount = max(1, shardCount)
        if shardCount & (shardCount - 1) != 0 { shardCount = 1 << (Int.bitWidth - (shardCount - 1).leadingZeroBitCount) }
        self.shardCount = shardCount
        self.generationCapacity = max(1, generationCapacity)
        self.shards = (0..<shardCount).map { _ in Shard() }
    }

    /// The shard index for a key's hash.
    @inlinable public func shardIndex(hash: Int) -> Int { (hash >> 16) & (shardCount - 1) }

    /// The value for `key`, or nil.
    @inlinable
    public func value(for key: Key, hash: Int) -> Value? {
        let capacity = generationCapacity
        return shards[shardIndex(hash: hash)].generations.withLock { $0.find(key, capacity: capacity) }
    }

    /// Reads the entry for `key` under the shard's lock (no copy of it leaves the lock).
    @inlinable
    public func withValue<R: Sendable>(for key: Key, hash: Int, _ body: (Value) -> R?) -> R? {
        let capacity = generationCapacity
        return shards[shardIndex(hash: hash)].generations.withLock { g -> R? in
            guard let value = g.find(key, capacity: capacity) else { return nil }
            return body(value)
        }
    }

    /// Stores `value` for `key` (in the current generation).
    @inlinable
    public func insert(_ value: Value, for key: Key, hash: Int) {
        let capacity = generationCapacity, key = key.storable()
        shards[shardIndex(hash: hash)].generations.withLock { $0.store(key, value, capacity: capacity) }
    }

    /// Replaces the entry for `key` with `body(old entry)` in one step under the shard's lock
    /// (nil removes it).
    @inlinable
    public func update(_ key: Key, hash: Int, _ body: (Value?) -> Value?) {
        let capacity = generationCapacity, key = key.storable()
        shards[shardIndex(hash: hash)].generations.withLock { g in
            let old = g.current.removeValue(forKey: key) ?? g.previous.removeValue(forKey: key)
            if let new = body(old) { g.store(key, new, capacity: capacity) }
        }
    }

    /// Entries held (both generations of every shard).
    public var count: Int {
        shards.reduce(0) { n, s in n + s.generations.withLock { $0.current.count + $0.previous.count } }
    }
}

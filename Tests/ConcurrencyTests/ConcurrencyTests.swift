import Concurrency
import Foundation
import Testing

/// Runs `body(i)` on `threads` new threads at once and waits for all of them.
private func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchSemaphore(value: 0)
    for i in 0..<threads {
        Thread {
            body(i)
            done.signal()
        }.start()
    }
    for _ in 0..<threads { done.wait() }
}

@Suite struct LockedTests {
    /// Every increment from every thread is kept: the value is only reached under the lock.
    @Test func incrementsFromManyThreadsAreNotLost() {
        let counter = Locked(0)
        onThreads(4) { _ in
            for _ in 0..<10_000 { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == 40_000)
    }

    /// A throwing body leaves the lock free and its changes in place.
    @Test func throwingBodyReleasesTheLock() {
        struct Failure: Error {}
        let box = Locked([1])
        #expect(throws: Failure.self) {
            try box.withLock { (v: inout [Int]) throws(Failure) in
                v.append(2); throw Failure()
            }
        }
        #expect(box.withLock { $0 } == [1, 2])
    }
}

@Suite struct ThreadLocalTests {
    final class Box: Sendable {
        let number: Int
        init(_ n: Int) { number = n }
    }

    /// Each thread gets its own value, made once per thread.
    @Test func valuesArePerThread() {
        let made = AtomicCounters(count: 1)
        let local = ThreadLocal { Box(made.add(1, at: 0)) }
        let mine = local.value
        #expect(local.value === mine)
        #expect(local.current === mine)
        let seen = AtomicCounters(count: 2)
        onThreads(1) { _ in
            if local.current == nil { seen.add(1, at: 1) }
            seen.add(local.value.number, at: 0)
            seen.add(local.value.number, at: 0)
        }
        #expect(mine.number == 1)
        #expect(seen.load(1) == 1, "nothing made for the other thread before it asked")
        #expect(seen.load(0) == 4, "the other thread made its own value (2) once and reused it")
        #expect(made.load(0) == 2)
    }

    /// A `make` that throws stores nothing: the next `get()` tries again.
    @Test func throwingMakeStoresNothing() throws {
        struct Unavailable: Error {}
        let attempts = AtomicCounters(count: 1)
        let local = ThreadLocal { () throws(Unavailable) -> Box in
            let n = attempts.add(1, at: 0)
            if n == 1 { throw Unavailable() }
            return Box(n)
        }
        #expect(throws: Unavailable.self) { try local.get() }
        #expect(local.current == nil)
        #expect(try local.get().number == 2)
        #expect(try local.get().number == 2)
    }

    /// A thread's value is released when the thread exits.
    @Test func valueIsReleasedWhenItsThreadExits() {
        final class Tracked {
            let released: AtomicCounters
            init(_ released: AtomicCounters) { self.released = released }
            deinit { released.add(1, at: 0) }
        }
        let released = AtomicCounters(count: 1)
        let local = ThreadLocal { Tracked(released) }
        onThreads(3) { _ in _ = local.value }
        // The destructors run as the threads exit, which may be just after they signalled.
        var waited = 0
        while released.load(0) < 3 && waited < 200 {
            usleep(10_000)
            waited += 1
        }
        #expect(released.load(0) == 3)
    }
}

@Suite struct AtomicCountersTests {
    /// Concurrent adds are all counted, each in its own counter.
    @Test func concurrentAddsAreCountedPerIndex() {
        let counters = AtomicCounters(count: 8)
        onThreads(4) { t in
            for i in 0..<1000 { counters.add(1, at: (i + t) % 4) }
            counters.add(t, at: 7)
        }
        #expect((0..<4).map { counters.load($0) } == [1000, 1000, 1000, 1000])
        #expect(counters.load(4) == 0 && counters.load(7) == 0 + 1 + 2 + 3)
        counters.add(Int.max, at: 5)
        counters.add(1, at: 5)
        #expect(counters.load(5) == Int.min, "adds wrap")
    }
}

@Suite struct GenerationalCacheTests {
    /// A hash that puts `key` into `shard` (bits 16 and up pick the shard).
    static func hash(shard: Int, _ key: Int = 0) -> Int { shard << 16 | (key & 0xFFFF) }

    /// A full generation becomes the previous one; the one before it is dropped.
    @Test func aFullGenerationRetiresTheOldest() {
        let cache = GenerationalCache<Int, String>(generationCapacity: 2, shardCount: 1)
        for k in 1...4 { cache.insert("v\(k)", for: k, hash: 0) }
        // Generations: previous {1, 2}, current {3, 4}; the next insert drops {1, 2}.
        #expect(cache.count == 4)
        cache.insert("v5", for: 5, hash: 0)
        #expect(cache.count == 3)
        #expect(cache.value(for: 1, hash: 0) == nil && cache.value(for: 2, hash: 0) == nil)
        #expect([5, 3, 4].map { cache.value(for: $0, hash: 0) } == ["v5", "v3", "v4"])
    }

    /// A hit in the previous generation moves the entry into the current one, so it survives the next
    /// new generation while entries nobody asked for are dropped.
    @Test func usedEntriesSurviveANewGeneration() {
        let cache = GenerationalCache<Int, Int>(generationCapacity: 3, shardCount: 1)
        for k in 1...3 { cache.insert(k, for: k, hash: 0) }
        cache.insert(4, for: 4, hash: 0)  // {1, 2, 3} retired; current {4}
        #expect(cache.value(for: 1, hash: 0) == 1)  // promoted: current {4, 1}
        cache.insert(5, for: 5, hash: 0)  // current {4, 1, 5}
        cache.insert(6, for: 6, hash: 0)  // {4, 1, 5} retired, {2, 3} dropped
        #expect(cache.value(for: 2, hash: 0) == nil && cache.value(for: 3, hash: 0) == nil)
        #expect(cache.value(for: 1, hash: 0) == 1 && cache.value(for: 6, hash: 0) == 6)
    }

    /// Whatever is inserted, no shard holds more than two generations.
    @Test func sizeIsBounded() {
        let cache = GenerationalCache<String, Int>(generationCapacity: 5, shardCount: 8)
        for n in 0..<10_000 {
            let key = "key\(n)"
            cache.insert(n, for: key, hash: key.hashValue)
            #expect(cache.count <= 2 * 5 * 8)
        }
        #expect(cache.value(for: "key9999", hash: "key9999".hashValue) == 9999)
    }

    /// Shards are independent: filling one evicts nothing from another, and a key looked up with
    /// another shard's hash is not found.
    @Test func shardsAreIndependent() {
        let cache = GenerationalCache<Int, Int>(generationCapacity: 1, shardCount: 4)
        #expect(cache.shardCount == 4)
        #expect((0..<4).map { cache.shardIndex(hash: Self.hash(shard: $0, 99)) } == [0, 1, 2, 3])
        cache.insert(0, for: 0, hash: Self.hash(shard: 0))
        for k in 1...10 { cache.insert(k, for: k, hash: Self.hash(shard: 1, k)) }
        #expect(cache.value(for: 0, hash: Self.hash(shard: 0)) == 0)
        #expect(cache.value(for: 0, hash: Self.hash(shard: 2)) == nil)
        #expect(GenerationalCache<Int, Int>(generationCapacity: 1, shardCount: 5).shardCount == 8)
    }

    /// `update` sees the entry from either generation and replaces it in one step; nil removes it.
    @Test func updateReplacesOrRemoves() {
        let cache = GenerationalCache<Int, [Int]>(generationCapacity: 1, shardCount: 1)
        cache.update(1, hash: 0) { old in (old ?? []) + [1] }
        cache.insert([], for: 2, hash: 0)  // 1 is now in the previous generation
        cache.update(1, hash: 0) { old in (old ?? []) + [2] }
        #expect(cache.value(for: 1, hash: 0) == [1, 2])
        cache.update(1, hash: 0) { _ in nil }
        #expect(cache.value(for: 1, hash: 0) == nil)
        #expect(cache.withValue(for: 2, hash: 0) { $0.count } == 0)
    }

    /// Generational invalidation, as the decision cache uses it: an entry remembers the epoch it was
    /// computed at, and a bumped epoch makes it unusable, even when it was stored afterwards.
    @Test func epochsInvalidateEntries() {
        struct Stamped: Sendable { let epoch: Int; let value: String }
        let epochs = AtomicCounters(count: 4)
        let cache = GenerationalCache<String, Stamped>(generationCapacity: 8, shardCount: 2)
        func read(_ key: String) -> String? {
            cache.withValue(for: key, hash: key.hashValue) { e in e.epoch == epochs.load(key.hashValue & 3, ordering: .synchronizing) ? e.value : nil
            }
        }
        let e0 = epochs.load("u".hashValue & 3, ordering: .synchronizing)
        cache.insert(Stamped(epoch: e0, value: "a"), for: "u", hash: "u".hashValue)
        #expect(read("u") == "a")
        epochs.add(1, at: "u".hashValue & 3, ordering: .synchronizing)
        #expect(read("u") == nil)
        cache.insert(Stamped(epoch: e0, value: "late"), for: "u", hash: "u".hashValue)
        #expect(read("u") == nil)
    }

    /// Lookups from many threads while others insert: every hit is the value stored for that key.
    @Test func concurrentUseKeepsValuesWithTheirKeys() {
        let cache = GenerationalCache<Int, Int>(generationCapacity: 16, shardCount: 4)
        let wrong = AtomicCounters(count: 1)
        onThreads(4) { t in
            for i in 0..<5_000 {
                let k = (i * 7 + t) % 200
                if let v = cache.value(for: k, hash: k.hashValue), v != k * 10 { wrong.add(1, at: 0) }
                cache.insert(k * 10, for: k, hash: k.hashValue)
            }
        }
        #expect(wrong.load(0) == 0)
        #expect(cache.count <= 2 * 16 * 4)
    }
}

@Suite struct ByteKeyTests {
    /// A borrowed key equals an owned copy of the same bytes; any differing byte or length differs.
    @Test func borrowedAndOwnedKeysCompareBytes() {
        let a = Array("header.payload.signature".utf8)
        var b = a
        b[3] ^= 1
        let shorter = Array(a.dropLast())
        let owned = ByteKey(copying: a.span, fingerprint: 7)
        ByteKey.withBorrowed(a.span, fingerprint: 7) { borrowed in
            #expect(borrowed == owned)
            #expect(borrowed.hashValue == owned.hashValue)
            ByteKey.withBorrowed(b.span, fingerprint: 7) { #expect(borrowed != $0, "same fingerprint, other bytes") }
            ByteKey.withBorrowed(shorter.span, fingerprint: 7) { #expect(borrowed != $0) }
            ByteKey.withBorrowed(a.span, fingerprint: 8) { #expect(borrowed != $0) }
        }
        let empty: [UInt8] = []
        let emptyKey = ByteKey(copying: empty.span, fingerprint: 0)
        ByteKey.withBorrowed(empty.span, fingerprint: 0) { #expect($0 == emptyKey) }
    }

    /// A hit on a borrowed key in the previous generation stores an owned copy: the entry is still
    /// found after the borrowed bytes are gone.
    @Test func promotionStoresAnOwnedKey() {
        let cache = GenerationalCache<ByteKey, Int>(generationCapacity: 1, shardCount: 1)
        let token = Array("token-1".utf8)
        let other = Array("token-2".utf8)
        cache.insert(1, for: ByteKey(copying: token.span, fingerprint: 1), hash: 0)
        cache.insert(2, for: ByteKey(copying: other.span, fingerprint: 2), hash: 0)
        do {
            var scratch = token
            let hit = scratch.withUnsafeMutableBufferPointer { p in
                let bytes = UnsafeBufferPointer(p)
                let v = ByteKey.withBorrowed(bytes.span, fingerprint: 1) { cache.value(for: $0, hash: 0) }
                p[0] = 0  // the borrowed bytes change after the lookup
                return v
            }
            #expect(hit == 1)
        }
        let again = ByteKey.withBorrowed(token.span, fingerprint: 1) { cache.value(for: $0, hash: 0) }
        #expect(again == 1)
    }
}

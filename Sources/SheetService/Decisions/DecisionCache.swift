import Concurrency
import SheetPolicy
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A bounded store of decision answers (body and ETag). Whether an answer may be served or stored is
/// not decided here: every lookup asks `DecisionFreshness.isServable` and every insert
/// `DecisionFreshness.isCurrent`; it owns the cache's exactness and states its invariants (epochs,
/// store versions, the catalog, the listener's barrier).
///
/// An entry remembers the catalog version and the context it was computed for, and its `ReadBasis`:
/// the user's epoch loaded before the state was read (`DecisionFreshness.beginRead`) and, on a shared
/// database, the store version (`SharedVersions.user`) read in the same snapshot as the state.
///
/// Bound: a `GenerationalCache` of 64 shards of two generations of at most `generationCapacity`
/// users (65 536 users in all by default, `SHEETD_DECISION_CACHE`), at most `contextsPerUser` client
/// contexts each (the most recently computed first). Identical answers (users in the same state,
/// the usual case: a decision does not contain the user id) share one `Answer`.
final class DecisionCache: Sendable {
    /// One decision answer. A class so that every user whose decision has these exact bytes shares
    /// one instance (interned by its bytes): a lookup then touches memory that other requests keep warm.
    final class Answer: Sendable {
        let body: [UInt8]
        let etag: String

        init(body: [UInt8], etag: String) {
            self.body = body
            self.etag = etag
        }
    }

    struct Item: Sendable {
        let catalogVersion: Int
        let context: ClientContext
        let answer: Answer
        /// The decision's next time boundary (`Decision.validUntil`): the entry is not served from then on.
        let validUntil: Timestamp?
    }

    /// An answer and the instant until which it holds (`nil`: until an event or a catalog change).
    /// Per user and context, not per answer: users with the same bytes may reach a boundary at different times.
    struct Fresh: Sendable {
        let answer: Answer
        let validUntil: Timestamp?
    }

    /// A user's answers: the latest inline (the usual single context needs no array), older
    /// contexts after it, at most `contextsPerUser` in all.
    struct UserEntry: Sendable {
        /// What every answer of the entry was computed from (its epoch and store version).
        let basis: ReadBasis
        var latest: Item
        var older: [Item] = []
    }

    static let shardCount = 64
    let contextsPerUser = 4
    /// The rules every lookup and insert follows.
    let freshness: DecisionFreshness
    private let users: GenerationalCache<String, UserEntry>
    /// Interned answers by the hash of their body (bytes compared on every hit), sharded by that hash:
    /// every user whose decision has these bytes, whatever their shard, gets the same instance.
    private let answers = GenerationalCache<Int, Answer>(generationCapacity: 32, shardCount: DecisionCache.shardCount)

    /// Lookups answered and not, for /metrics: per shard, a cache line apart (8 counters of 8 bytes),
    /// so that workers on different shards never write the same line.
    private let lookupCounts = AtomicCounters(count: DecisionCache.shardCount * 8)

    /// Lookups that found a current answer, and lookups that did not, since the process started
    /// (only while the cache is on).
    var hitsAndMisses: (hits: Int, misses: Int) {
        var hits = 0, misses = 0
        for shard in 0..<Self.shardCount {
            hits += lookupCounts.load(shard * 8)
            misses += lookupCounts.load(shard * 8 + 1)
        }
        return (hits, misses)
    }

    /// Users per generation of one shard.
    var generationCapacity: Int { users.generationCapacity }

    /// Whether answers are kept at all (`SHEETD_DECISION_CACHE=0` turns the cache off; epochs are
    /// still kept, they cost nothing, and so are interned answers: see `answer`).
    let enabled: Bool

    /// A cache for about `users` users in all (rounded to whole shards); 0 keeps nothing.
    convenience init(users: Int, freshness: DecisionFreshness = DecisionFreshness()) {
        self.init(generationCapacity: max(1, users / (2 * Self.shardCount)), enabled: users > 0, freshness: freshness)
    }

    init(generationCapacity: Int = 512, enabled: Bool = true, freshness: DecisionFreshness = DecisionFreshness()) {
        self.enabled = enabled
        self.freshness = freshness
        users = GenerationalCache(generationCapacity: generationCapacity, shardCount: Self.shardCount)
    }

    /// Users held (both generations of every shard), for tests.
    var count: Int { users.count }

    /// The cached answer for this context when `DecisionFreshness.isServable` says it may answer
    /// `request` (`now` is read only for an answer with a time boundary).
    func lookup(userId: String, context: ClientContext, request: ServingRequest, now: () -> Timestamp) -> Fresh? {
        guard enabled else { return nil }
        let hash = userId.hashValue
        let found = users.withValue(for: userId, hash: hash) { entry -> Fresh? in
            Self.withItem(of: entry, for: context) { item in
                guard freshness.isServable(entry.basis, catalogVersion: item.catalogVersion, validUntil: item.validUntil, to: request, now: now)
                else { return nil }
                return Fresh(answer: item.answer, validUntil: item.validUntil)
            }
        }
        countLookup(hash: hash, hit: found != nil)
        return found
    }

    /// `body` over the entry's answer for `context` (one at most: an insert replaces the context's
    /// answer), borrowed; nil when there is none.
    @inline(__always)
    private static func withItem<R>(of entry: borrowing UserEntry, for context: ClientContext, _ body: (borrowing Item) -> R?) -> R? {
        if entry.latest.context == context { return body(entry.latest) }
        for item in entry.older where item.context == context { return body(item) }
        return nil
    }

    /// The answer for a freshly rendered decision `body`: the interned one with these exact bytes
    /// when there is one (its ETag was computed from the same bytes, so `etag` is not called: users
    /// in the same state share one answer and one SHA-256), else a new one, interned.
    ///
    /// Interned with the cache off too: the table holds no decision, only which ETag exact bytes have
    /// (every byte is compared), and a decision computed again is usually one already seen.
    func answer(userId: String, body: [UInt8], etag: ([UInt8]) -> String) -> Answer {
        // Interned by the bytes' own fingerprint, so one copy serves the whole process. Interned
        // per user shard instead, each shard kept its own copy: megabytes of duplicate bodies, and
        // cooler memory to send them from (docs/benchmarks-history.md, "Interning").
        let key = Self.fingerprint(body.span), hash = key
        if let interned = answers.value(for: key, hash: hash) {
            let internedBody = interned.body  // a local, whose span lives for the comparison
            if Self.sameBytes(internedBody.span, body.span) { return interned }
        }
        let made = Answer(body: body, etag: etag(body))  // outside any lock: SHA-256 of the body
        answers.insert(made, for: key, hash: hash)
        return made
    }

    /// The intern table's key for `body`: a fast 64-bit hash of every byte, 16 at a time (the
    /// standard `hashValue` of an array feeds its hasher one byte at a time, several times the cost
    /// of the SHA-256 it saves). Not keyed: a collision only costs a byte comparison and a SHA-256.
    static func fingerprint(_ body: Span<UInt8>) -> Int {
        @inline(__always) func mix(_ a: UInt64, _ b: UInt64) -> UInt64 {
            let (high, low) = a.multipliedFullWidth(by: b)
            return high ^ low
        }
        return body.withUnsafeBytes { bytes in
            let count = bytes.count
            var seed: UInt64 = 0xa076_1d64_78bd_642f ^ UInt64(truncatingIfNeeded: count)
            var i = 0
            while i + 16 <= count {
                let a = bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let b = bytes.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
                seed = mix(a ^ 0xe703_7ed1_a0b4_28db, b ^ seed)
                i += 16
            }
            var tail: (UInt64, UInt64) = (0, 0)
            if i < count {
                withUnsafeMutableBytes(of: &tail) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[i...])) }
            }
            seed = mix(tail.0 ^ 0x8ebc_6af0_9c88_c6e3, tail.1 ^ seed)
            return Int(truncatingIfNeeded: mix(seed ^ 0x5899_65cc_7537_4cc3, UInt64(truncatingIfNeeded: count) ^ 0x1d8e_4e27_c47d_124f))
        }
    }

    /// Byte equality through `memcmp` (element by element would be several times slower).
    static func sameBytes(_ a: Span<UInt8>, _ b: Span<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in
            b.withUnsafeBytes { y in x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 }
        }
    }

    /// A cached answer on a shared database, taken when a request arrives and served once the
    /// listener has heard every change committed before that (`DecisionFreshness.confirm`).
    struct Candidate: Sendable {
        let fresh: Fresh
        let catalogVersion: Int
        let basis: ReadBasis
    }

    /// The answer for this context on a shared database servable once a barrier proves it
    /// (`ServingRequest.Proof.barrier`: an entry with a store version, that version not compared):
    /// nil when there is none (counted as a miss).
    func candidate(userId: String, context: ClientContext, catalogVersion: Int, now: () -> Timestamp) -> Candidate? {
        guard enabled else { return nil }
        let hash = userId.hashValue
        let request = ServingRequest(catalogVersion: catalogVersion, proof: .barrier)
        let found = users.withValue(for: userId, hash: hash) { entry -> Candidate? in
            Self.withItem(of: entry, for: context) { item in
                guard freshness.isServable(entry.basis, catalogVersion: item.catalogVersion, validUntil: item.validUntil, to: request, now: now)
                else { return nil }
                return Candidate(
                    fresh: Fresh(answer: item.answer, validUntil: item.validUntil), catalogVersion: item.catalogVersion, basis: entry.basis)
            }
        }
        if found == nil { countLookup(hash: hash, hit: false) }
        return found
    }

    /// Counts the outcome of a candidate's proof (`DecisionFreshness.confirm`) as a hit or a miss.
    func countProof(_ candidate: Candidate, exact: Bool) {
        countLookup(hash: candidate.basis.hash, hit: exact)
    }

    private func countLookup(hash: Int, hit: Bool) {
        lookupCounts.add(1, at: users.shardIndex(hash: hash) * 8 + (hit ? 0 : 1))
    }

    /// The store version of the cached answer for this context and catalog, when its epoch is current:
    /// the version a shared database is asked to compare before it sends the state (nil: no entry).
    /// A hint only: what it names is served after `lookup` checked it against the version read.
    func storeVersion(userId: String, context: ClientContext, catalogVersion: Int) -> Int64? {
        guard enabled else { return nil }
        return users.withValue(for: userId, hash: userId.hashValue) { entry -> Int64? in
            guard freshness.isCurrent(entry.basis) else { return nil }
            return Self.withItem(of: entry, for: context) { item in item.catalogVersion == catalogVersion ? entry.basis.storeVersion : nil }
        }
    }

    /// Remembers `answer` (from `answer(userId:body:etag:)`) for `userId`, computed from a state read
    /// on `basis` (`DecisionFreshness.beginRead`, before the read) with the catalog at `catalogVersion`.
    /// Refused when the basis is stale (a write of the user ended since it was taken) or another
    /// user's. `validUntil`: the decision's next time boundary, past which the entry is not served.
    func insert(
        userId: String, basis: ReadBasis, context: ClientContext, catalogVersion: Int, answer: Answer, validUntil: Timestamp? = nil
    ) {
        let hash = userId.hashValue
        guard enabled, basis.hash == hash, freshness.isCurrent(basis) else { return }  // off, another user's, or already stale
        let item = Item(catalogVersion: catalogVersion, context: context, answer: answer, validUntil: validUntil)
        let perUser = contextsPerUser
        users.update(userId, hash: hash) { old in
            guard var entry = old, entry.basis.epoch == basis.epoch, entry.basis.storeVersion == basis.storeVersion else {
                return UserEntry(basis: basis, latest: item)
            }
            var items = [entry.latest] + entry.older
            items.removeAll { $0.context == context }
            while items.count >= perUser { items.removeLast() }
            entry.latest = item
            entry.older = items
            return entry
        }
    }
}

import Concurrency
import SheetStore
import Synchronization

/// The stored bytes of the users whose state this process committed lately, so that the decision
/// read after an event (the event just made the cached decision stale) is served from memory instead
/// of a SQLite read: after every commit the readers' page caches start over, and such a read costs
/// several `pread`s and WAL lookups.
///
/// Exactness (every store of one file in this process shares one instance, through
/// `SnapshotCoordination`; no other process writes the file):
/// 1. A batch takes its `ticket` inside its transaction, before `COMMIT`, while it holds SQLite's
///    write lock: tickets follow commit order. Only after `COMMIT` succeeds are its users' bytes
///    published, each with that ticket, and a publication never replaces one with a later ticket.
///    So an entry holds the bytes of the user's row as of the latest commit that published them.
/// 2. Every write outside the group-commit batches (erasure, catalog, probes) moves the `floor`
///    after its commit; entries with a ticket below it are ignored. Such a write may have changed any
///    user's row, and an entry may predate it.
/// 3. Both happen before the write is acknowledged (and before the decision epochs move), so a reader
///    that reads a user's epoch and then this table never pairs a newer epoch with older bytes.
/// 4. A batch counts as publishing from before it takes its ticket until its users are published (or
///    its `COMMIT` failed). The writer's own batch reads (`SQLiteBatchSession.begin`) trust an entry
///    only when, under SQLite's write lock, no batch is publishing and the file's data version is the
///    one this writer saw after its own last commit (no commit since, by any connection or process):
///    then every commit has published, and the entry is the stored row. Otherwise they read SQLite.
///
/// Bounded: a `GenerationalCache` of at most `2 * generationCapacity * shards` entries, a few hundred
/// bytes each; a user not held is read from SQLite as before.
final class RecentUserStates: Sendable {
    struct Entry: Sendable {
        let bytes: [UInt8]
        let ticket: UInt64
    }

    /// Entries per generation of one of the 64 shards: 32 768 users held at least, 65 536 at most.
    static let generationCapacity = 512

    private let entries = GenerationalCache<String, Entry>(generationCapacity: RecentUserStates.generationCapacity, shardCount: 64)
    private let sequence = Atomic<UInt64>(0)
    private let floor = Atomic<UInt64>(0)

    /// Batches between their ticket and the end of their publication (invariant 4).
    private let publishing = Atomic<Int>(0)

    /// A batch's ticket: taken inside its transaction, before `COMMIT` (invariant 1). The batch counts
    /// as publishing until `endPublication()`, which it must call whether or not `COMMIT` succeeds.
    func beginPublication() -> UInt64 {
        publishing.add(1, ordering: .acquiringAndReleasing)
        return ticket()
    }

    /// After the batch published its users, or failed to commit (invariant 4).
    func endPublication() {
        publishing.subtract(1, ordering: .acquiringAndReleasing)
    }

    /// Whether a batch is between its ticket and the end of its publication.
    var isPublishing: Bool { publishing.load(ordering: .acquiring) > 0 }

    private func ticket() -> UInt64 { sequence.add(1, ordering: .acquiringAndReleasing).newValue }

    /// After `COMMIT` of the batch that took `ticket`: `bytes` is now the user's stored row
    /// (`UserStateCodec.encode`; the empty state's bytes for a deleted row).
    func committed(_ bytes: [UInt8], of userId: String, ticket: UInt64) {
        entries.update(userId, hash: userId.hashValue) { old in
            if let old, old.ticket > ticket { return old }
            return Entry(bytes: bytes, ticket: ticket)
        }
    }

    /// After a write outside the batches committed: nothing held before it is trusted (invariant 2).
    func forgetAll() {
        floor.store(ticket(), ordering: .releasing)
    }

    /// The user's stored bytes when held and not older than the last `forgetAll`.
    func bytes(of userId: String) -> [UInt8]? {
        let floor = floor.load(ordering: .acquiring)
        return entries.withValue(for: userId, hash: userId.hashValue) { $0.ticket > floor ? $0.bytes : nil }
    }

    /// Entries held (tests).
    var count: Int { entries.count }
}

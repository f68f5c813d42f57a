import Concurrency
import SheetPolicy
import Synchronization

/// The catalog as last written, readable on every request without a shared lock.
///
/// Writers change it under a lock and bump a version; each worker thread keeps the copy it last read
/// with its version and takes the lock only when the version moved. A reader gets either the catalog
/// before or after a concurrent write, never a mix (as with the plain `Mutex<Catalog>` it replaces,
/// whose lock was contended by every request of both workers). Which database catalog version it
/// reflects on a shared database is `DecisionFreshness`'s catalog mark.
final class CatalogSnapshot: Sendable {
    private final class ThreadCopy {
        var version = -1
        var catalog = Catalog()
    }

    private let locked: Mutex<Catalog>
    private let version = Atomic<Int>(0)
    private let copies = ThreadLocal { ThreadCopy() }

    init(_ catalog: Catalog) {
        locked = Mutex(catalog)
    }

    /// The current catalog.
    var current: Catalog { currentWithVersion.catalog }

    /// The current version alone: enough to validate a cached decision, without touching (retaining)
    /// the catalog, which every worker thread shares.
    var currentVersion: Int { version.load(ordering: .acquiring) }

    /// The current catalog and its version (which changes with every write).
    var currentWithVersion: (catalog: Catalog, version: Int) {
        let copy = copies.value
        if copy.version == version.load(ordering: .acquiring) { return (copy.catalog, copy.version) }
        let (catalog, v) = locked.withLock { ($0, version.load(ordering: .relaxed)) }
        copy.catalog = catalog
        copy.version = v
        return (catalog, v)
    }

    /// Changes the catalog (same shape as `Mutex.withLock`, so writers read as before).
    func withLock<R, E: Error>(_ body: (inout Catalog) throws(E) -> R) throws(E) -> R {
        try locked.withLock { (catalog: inout Catalog) throws(E) -> R in
            defer { version.add(1, ordering: .releasing) }
            return try body(&catalog)
        }
    }
}

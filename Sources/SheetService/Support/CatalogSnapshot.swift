import Concurrency
import SheetPolicy
import Synchronization

/// The catalog as last written, readable on every request without a shared lock.
///
/// Writers change it under a lock and bump a version; each worker thread keeps the copy it last read
/// with its version and takes the lock only when the version moved. A reader gets either the catalog
/// before or after a concurrent write, never a mix (as with the plain `Mutex<Catalog>` it replaces,
/// whose lock was contended by every request of both workers).
final class CatalogSnapshot: Sendable {
    private final class ThreadCopy {
        var version = -1
        var catalog = Catalog()
    }

    private let locked: Mutex<Catalog>
    private let version = Atomic<Int>(0)
    /// On a shared database: the `catalog_version` this snapshot is at least as new as (it was read
    /// before the catalog was); -1 when unknown (forces a reload). Unused on SQLite.
    private let shared = Atomic<Int64>(-1)
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

    /// The shared database's catalog version the snapshot reflects (-1: unknown, reload).
    var sharedVersion: Int64 {
        get { shared.load(ordering: .acquiring) }
        set { shared.store(newValue, ordering: .releasing) }
    }

    /// Changes the catalog (same shape as `Mutex.withLock`, so writers read as before).
    func withLock<R, E: Error>(_ body: (inout Catalog) throws(E) -> R) throws(E) -> R {
        try locked.withLock { (catalog: inout Catalog) throws(E) -> R in
            defer { version.add(1, ordering: .releasing) }
            return try body(&catalog)
        }
    }
}

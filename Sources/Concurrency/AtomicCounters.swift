public import Synchronization

/// A fixed number of atomic integers in one allocation, for counters and version numbers read
/// and written on every request without a lock (`Atomic` is not copyable, so an `Array` cannot
/// hold them).
///
/// `@unchecked Sendable` invariant: the cells are allocated and initialized once in `init`, never
/// reallocated, only accessed through `Atomic` operations, and freed in `deinit`.
public final class AtomicCounters: @unchecked Sendable {
    public let count: Int
    @usableFromInline let cells: UnsafeMutablePointer<Atomic<Int>>

    /// `count` counters, all zero.
    public init(count: Int) {
        precondition(count > 0, "AtomicCounters needs at least one counter")
        self.count = count
        cells = .allocate(capacity: count)
        for i in 0..<count { (cells + i).initialize(to: Atomic(0)) }
    }

    deinit {
        cells.deinitialize(count: count)
        cells.deallocate()
    }

    /// How an access orders the memory accesses around it.
    public enum Ordering: Sendable {
        /// Counting only: no ordering with other memory.
        case relaxed
        /// Loads acquire and adds acquire and release: a load that sees an add also sees what the
        /// adding thread wrote before it (version numbers that guard other data).
        case synchronizing
    }

    @inlinable
    public func load(_ index: Int, ordering: Ordering = .relaxed) -> Int {
        precondition(index >= 0 && index < count, "counter index out of range")
        switch ordering {
        case .relaxed: return cells[index].load(ordering: .relaxed)
        case .synchronizing: return cells[index].load(ordering: .acquiring)
        }
    }

    /// Adds `delta` (wrapping on overflow) to the counter at `index`; returns the new value.
    @inlinable @discardableResult
    public func add(_ delta: Int, at index: Int, ordering: Ordering = .relaxed) -> Int {
        precondition(index >= 0 && index < count, "counter index out of range")
        switch ordering {
        case .relaxed: return cells[index].wrappingAdd(delta, ordering: .relaxed).newValue
        case .synchronizing: return cells[index].wrappingAdd(delta, ordering: .acquiringAndReleasing).newValue
        }
    }
}

/// A value that arrives once, from another thread, and the one thread that waits for it: a blocking
/// call that hands its work to a queue and waits for the completion (`GroupCommitEngine.update`).
public final class Latch<Value: Sendable>: Sendable {
    private let slot = ConditionLock<Value?>(nil)

    public init() {}

    /// Sets the value and wakes the waiter. Only the first call counts.
    public func open(with value: Value) {
        slot.withLock(wake: .all) { slot in
            if slot == nil { slot = value }
        }
    }

    /// Blocks until `open(with:)` ran, then returns its value.
    public func wait() -> Value {
        // Without a timeout the wait only ends once the value is there.
        slot.wait(until: { $0 != nil }) { $0! }!
    }
}

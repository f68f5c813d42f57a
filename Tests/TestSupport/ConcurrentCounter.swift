import Concurrency

/// A count that many threads add to (tests of concurrent callers).
public final class ConcurrentCounter: Sendable {
    private let count = Locked(0)

    public init() {}

    public func add() { count.withLock { $0 += 1 } }

    public var value: Int { count.withLock { $0 } }
}

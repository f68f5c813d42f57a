import Foundation

/// A value behind a lock. `@unchecked Sendable`: every read and write of `value` holds `lock`
/// (NSLock rather than `Synchronization.Mutex`, which iOS has only from 18).
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

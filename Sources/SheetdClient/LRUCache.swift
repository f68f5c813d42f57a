/// A dictionary that keeps at most `limit` entries, dropping the least recently used (read or
/// written) first. Eviction scans for the oldest entry: O(n) once per insertion over the limit, which
/// for the few dozen contexts an app shows is cheaper than keeping a linked list in step.
struct LRUCache<Key: Hashable, Value> {
    private var entries: [Key: (value: Value, used: UInt64)] = [:]
    private var clock: UInt64 = 0
    /// The most entries kept (0: none).
    let limit: Int

    init(limit: Int) { self.limit = max(0, limit) }

    var count: Int { entries.count }

    /// The value for `key`, marking it as the most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let entry = entries[key] else { return nil }
        clock += 1
        entries[key] = (entry.value, clock)
        return entry.value
    }

    /// The value for `key` without touching its age.
    func peek(_ key: Key) -> Value? { entries[key]?.value }

    /// Stores `value` as the most recently used, dropping the least recently used beyond `limit`.
    mutating func set(_ value: Value, for key: Key) {
        guard limit > 0 else { return }
        clock += 1
        entries[key] = (value, clock)
        while entries.count > limit, let oldest = entries.min(by: { $0.value.used < $1.value.used })?.key {
            entries[oldest] = nil
        }
    }

    mutating func removeAll() { entries.removeAll() }
}

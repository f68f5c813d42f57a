/// SplitMix64: a tiny seeded PRNG, so generated cases are the same on every run and platform.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    public mutating func int(in range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }
    public mutating func chance(_ percent: Int) -> Bool { int(in: 1...100) <= percent }
    public mutating func pick<T>(_ items: [T]) -> T { items[int(in: 0...(items.count - 1))] }
    public mutating func maybe<T>(_ percent: Int, _ make: (inout SplitMix64) -> T) -> T? {
        chance(percent) ? make(&self) : nil
    }
}

/// A key of a `GenerationalCache`.
public protocol CacheKey: Hashable, Sendable {
    /// The key to store for this one: itself, or an owning copy when it borrows memory for a lookup.
    func storable() -> Self
}

extension CacheKey {
    @inlinable public func storable() -> Self { self }
}

extension String: CacheKey {}

extension Int: CacheKey {}

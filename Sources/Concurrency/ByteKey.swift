#if canImport(Glibc)
public import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A cache key made of exact bytes, hashed by a fingerprint its maker computes (e.g. over the bytes
/// that vary most). A lookup can borrow the bytes (a request header) instead of copying them
/// (`withBorrowed`); equality compares every byte.
///
/// `@unchecked Sendable` invariant: an owned key's bytes are an immutable array, and a borrowed key
/// lives only inside the `withBorrowed` call that made it, on the thread that owns its bytes (a
/// cache stores `storable()`, an owned copy).
public struct ByteKey: CacheKey, @unchecked Sendable {
    @usableFromInline enum Bytes {
        case owned([UInt8])
        case borrowed(UnsafeBufferPointer<UInt8>)
    }

    public let fingerprint: UInt64
    @usableFromInline let bytes: Bytes

    @usableFromInline
    init(fingerprint: UInt64, bytes: Bytes) {
        self.fingerprint = fingerprint
        self.bytes = bytes
    }

    /// Runs `body` with a key over `bytes` that copies nothing: for one lookup, which must not keep
    /// the key (a cache that stores it stores `storable()`).
    @inlinable
    public static func withBorrowed<R, E: Error>(
        _ bytes: Span<UInt8>, fingerprint: UInt64, _ body: (ByteKey) throws(E) -> R
    ) throws(E) -> R {
        try bytes.withUnsafeBufferPointer { (p) throws(E) -> R in try body(ByteKey(fingerprint: fingerprint, bytes: .borrowed(p))) }
    }

    /// A key owning a copy of `bytes`.
    public init(copying bytes: Span<UInt8>, fingerprint: UInt64) {
        self.init(fingerprint: fingerprint, bytes: .owned(bytes.withUnsafeBufferPointer { Array($0) }))
    }

    /// The key itself when it owns its bytes, else an owned copy.
    public func storable() -> ByteKey {
        switch bytes {
        case .owned: self
        case .borrowed(let p): ByteKey(fingerprint: fingerprint, bytes: .owned(Array(p)))
        }
    }

    @inlinable
    func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        switch bytes {
        case .owned(let a): a.withUnsafeBufferPointer(body)
        case .borrowed(let p): body(p)
        }
    }

    @inlinable
    public static func == (a: ByteKey, b: ByteKey) -> Bool {
        guard a.fingerprint == b.fingerprint else { return false }
        return a.withBytes { x in
            b.withBytes { y in x.count == y.count && (x.count == 0 || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0) }
        }
    }

    @inlinable
    public func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }
}

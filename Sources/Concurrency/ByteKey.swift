#if canImport(Glibc)
public import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A cache key made of exact bytes, hashed by a fingerprint its maker computes (e.g. over the bytes
/// that vary most). A lookup can borrow the bytes (a request header) instead of copying them;
/// equality compares every byte.
///
/// `@unchecked Sendable` invariant: an owned key's bytes are an immutable array, and a borrowed key
/// is used only for the lookup it was made for, on the thread that owns its bytes (a cache stores
/// `storable()`, an owned copy).
public struct ByteKey: CacheKey, @unchecked Sendable {
    @usableFromInline enum Bytes {
        case owned([UInt8])
        case borrowed(UnsafeBufferPointer<UInt8>)
    }

    public let fingerprint: UInt64
    @usableFromInline let bytes: Bytes

    /// A key over `bytes` for one lookup; `bytes` must stay valid while the key is used.
    @inlinable
    public init(borrowing bytes: UnsafeBufferPointer<UInt8>, fingerprint: UInt64) {
        self.fingerprint = fingerprint
        self.bytes = .borrowed(bytes)
    }

    /// A key owning a copy of `bytes`.
    public init(copying bytes: UnsafeBufferPointer<UInt8>, fingerprint: UInt64) {
        self.fingerprint = fingerprint
        self.bytes = .owned(Array(bytes))
    }

    /// The key itself when it owns its bytes, else an owned copy.
    public func storable() -> ByteKey {
        switch bytes {
        case .owned: self
        case .borrowed(let p): ByteKey(copying: p, fingerprint: fingerprint)
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

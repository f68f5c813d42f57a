internal import CZlib
import Concurrency

/// gzip from zlib. C pointers stay inside this file.
enum Gzip {
    /// zlib's level 6 (its default): most of the size saving of level 9 for much less CPU.
    static let level: Int32 = 6

    /// The gzip encoding of `bytes`, nil when zlib fails.
    static func compress(_ bytes: [UInt8]) -> [UInt8]? {
        let bound = czlib_gzip_bound(bytes.count)
        var written = 0
        let out = [UInt8](unsafeUninitializedCapacity: bound) { buffer, count in
            written = bytes.withUnsafeBytes { input in
                czlib_gzip(input.baseAddress, input.count, buffer.baseAddress, bound, level)
            }
            count = written
        }
        return written > 0 ? out : nil
    }

    /// A body and its encoding (nil when zlib failed).
    private struct Encoded: Sendable {
        let body: [UInt8]
        let gzip: [UInt8]?
    }

    /// The encodings of bodies sent again and again, by the address of the body's storage: a cached
    /// answer is one shared array for every request that gets it (the decision cache interns them), so
    /// a client population that asks for gzip costs one encoding per answer, not one per request. The
    /// entry keeps its body alive, so no other array can have that address while the entry exists.
    private static let remembered = GenerationalCache<Int, Encoded>(generationCapacity: 32, shardCount: 16)

    /// `compress(body)`, from `remembered` when this very array (not merely equal bytes) was encoded.
    static func compressRemembered(_ body: [UInt8]) -> [UInt8]? {
        let address = storageAddress(body)
        let hash = address.hashValue
        if let entry = remembered.value(for: address, hash: hash), storageAddress(entry.body) == address, entry.body.count == body.count {
            return entry.gzip
        }
        let gzip = compress(body)
        remembered.insert(Encoded(body: body, gzip: gzip), for: address, hash: hash)
        return gzip
    }

    private static func storageAddress(_ bytes: [UInt8]) -> Int {
        bytes.withUnsafeBufferPointer { Int(bitPattern: $0.baseAddress) }
    }
}

internal import CZlib

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
}

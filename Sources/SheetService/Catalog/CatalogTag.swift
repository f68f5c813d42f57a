import Crypto
import MicroHTTP
import SheetPolicy
import SheetWire
import Synchronization

/// The catalog's entity tag: what `GET /v1/sheets` (every page) and `GET /v1/settings` answer as
/// `ETag`, and what catalog writes compare `If-Match` with, so two people editing the catalog do not
/// silently overwrite each other.
///
/// A strong tag over the content (the digest of every definition's canonical JSON in id order, then
/// the settings), not over a version number: replicas that hold the same catalog answer the same tag,
/// and a restart keeps it. Computed once per catalog version; a sheet's digest is kept with its
/// definition, so a write that changes one sheet of a large catalog hashes that sheet only.
final class CatalogTag: Sendable {
    private let last = Mutex<(version: Int, tag: String)?>(nil)
    private let digests = Mutex<[String: (definition: SheetDefinition, digest: [UInt8])]>([:])

    /// The tag of `catalog` at snapshot `version`.
    func tag(of catalog: Catalog, version: Int) -> String {
        if let last = last.withLock({ $0 }), last.version == version { return last.tag }
        var bytes: [UInt8] = []
        digests.withLock { cache in
            var kept: [String: (definition: SheetDefinition, digest: [UInt8])] = [:]
            kept.reserveCapacity(catalog.sheets.count)
            for sheet in catalog.sortedByID {
                let digest =
                    cache[sheet.id].flatMap { $0.definition == sheet ? $0.digest : nil } ?? SHA256.hash(sheet.canonicalJSON)
                kept[sheet.id] = (sheet, digest)
                bytes += digest
            }
            cache = kept
        }
        bytes += catalog.settings.jsonBytes()
        let tag = SHA256.quotedHexPrefix(of: bytes, length: 16)
        last.withLock { $0 = (version, tag) }
        return tag
    }

    /// Whether an `If-Match` value admits the current `tag` (RFC 9110 §13.1.1: strong comparison; `*`
    /// matches, since the catalog always exists). A weak tag never matches.
    static func ifMatch(_ header: String, admits tag: String) -> Bool {
        let trimmed = header.trimmed()
        if trimmed == "*" { return true }
        return trimmed.split(separator: ",").contains { $0.trimmed() == tag }
    }
}

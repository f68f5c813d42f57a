import Crypto
import MicroHTTP
import SheetPolicy
import SheetWire
import Synchronization

/// The catalog's entity tag: what `GET /v1/sheets` (every page) and `GET /v1/settings` answer as
/// `ETag`, and what catalog writes compare `If-Match` with, so two people editing the catalog do not
/// silently overwrite each other.
///
/// A strong tag over the content (every definition's canonical JSON in id order, then the settings),
/// not over a version number: replicas that hold the same catalog answer the same tag, and a restart
/// keeps it. Computed once per catalog version.
final class CatalogTag: Sendable {
    private let last = Mutex<(version: Int, tag: String)?>(nil)

    /// The tag of `catalog` at snapshot `version`.
    func tag(of catalog: Catalog, version: Int) -> String {
        if let last = last.withLock({ $0 }), last.version == version { return last.tag }
        var bytes: [UInt8] = []
        for sheet in catalog.sortedByID {
            bytes += sheet.canonicalJSON
            bytes.append(0x0A)
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

import Foundation

/// A fresh directory under the system temp directory, removed by `remove()`.
public struct TemporaryDirectory: Sendable {
    public let path: String

    /// `prefix` names the directory (`<prefix>-<UUID>`), so leftovers say which suite made them.
    public init(prefix: String = "sheetd-tests") throws {
        path = NSTemporaryDirectory() + prefix + "-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    public func file(_ name: String = "test.sqlite") -> String { path + "/" + name }
    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}

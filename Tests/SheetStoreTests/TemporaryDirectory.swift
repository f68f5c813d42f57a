import Foundation

/// A fresh directory under the system temp directory, removed by `remove()`.
struct TemporaryDirectory {
    let path: String
    init() throws {
        path = NSTemporaryDirectory() + "sheetstore-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    func file(_ name: String = "test.sqlite") -> String { path + "/" + name }
    func remove() { try? FileManager.default.removeItem(atPath: path) }
}

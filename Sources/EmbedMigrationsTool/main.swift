import Foundation

// Usage: EmbedMigrationsTool [--import MODULE] OUTPUT.swift NNNN_name.sql...
// Writes `embeddedMigrations`, one entry per file, in the order given (the plugin sorts by name).
var arguments = CommandLine.arguments.dropFirst()
var importedModule: String?
if arguments.first == "--import", arguments.count >= 2 {
    importedModule = arguments.dropFirst().first
    arguments = arguments.dropFirst(2)
}
guard let outputPath = arguments.first else {
    FileHandle.standardError.write(Data("usage: EmbedMigrationsTool OUTPUT FILE...\n".utf8))
    exit(2)
}

var source = "// Generated from migrations/*.sql by the EmbedMigrations plugin. Do not edit.\n\n"
if let importedModule { source += "import \(importedModule)\n\n" }
source += "let embeddedMigrations: [EmbeddedMigration] = [\n"
var seenVersions = Set<Int>()
for path in arguments.dropFirst() {
    let fileName = URL(fileURLWithPath: path).lastPathComponent
    let stem = String(fileName.dropLast(".sql".count))
    guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]), version > 0 else {
        FileHandle.standardError.write(Data("error: \(fileName): migration files are named NNNN_name.sql\n".utf8))
        exit(1)
    }
    let name = String(stem[stem.index(after: underscore)...])
    guard seenVersions.insert(version).inserted else {
        FileHandle.standardError.write(Data("error: \(fileName): another migration file has version \(version)\n".utf8))
        exit(1)
    }
    guard let data = FileManager.default.contents(atPath: path) else {
        FileHandle.standardError.write(Data("error: cannot read \(path)\n".utf8))
        exit(1)
    }
    // The bytes go in as a UInt8 array: the checksum must cover the file exactly as shipped.
    let bytes = data.map { String($0) }.joined(separator: ",")
    source += "    EmbeddedMigration(shippedVersion: \(version), name: \"\(name)\", fileName: \"\(fileName)\", bytes: [\(bytes)]),\n"
}
source += "]\n"
do {
    try Data(source.utf8).write(to: URL(fileURLWithPath: outputPath), options: .atomic)
} catch {
    FileHandle.standardError.write(Data("error: cannot write \(outputPath): \(error)\n".utf8))
    exit(1)
}

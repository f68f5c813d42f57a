import Foundation

// Usage: EmbedFileTool OUTPUT.swift CONSTANT_NAME INPUT
// Writes `let CONSTANT_NAME: [UInt8]` holding INPUT's bytes.
let arguments = CommandLine.arguments
guard arguments.count == 4 else {
    FileHandle.standardError.write(Data("usage: EmbedFileTool OUTPUT NAME INPUT\n".utf8))
    exit(2)
}
guard let data = FileManager.default.contents(atPath: arguments[3]) else {
    FileHandle.standardError.write(Data("error: cannot read \(arguments[3])\n".utf8))
    exit(1)
}
let source =
    "// Generated from \(URL(fileURLWithPath: arguments[3]).lastPathComponent) by a build plugin. Do not edit.\n"
    + "let \(arguments[2]): [UInt8] = [" + data.map { String($0) }.joined(separator: ",") + "]\n"
do {
    try Data(source.utf8).write(to: URL(fileURLWithPath: arguments[1]), options: .atomic)
} catch {
    FileHandle.standardError.write(Data("error: cannot write \(arguments[1]): \(error)\n".utf8))
    exit(1)
}

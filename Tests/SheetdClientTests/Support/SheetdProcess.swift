import Foundation
import Testing

/// The real `sheetd` binary in a child process, as an operator runs it: SIGTERM sends its streams
/// `event: shutdown` and exits; a new process can take the same port and database (a restart).
final class SheetdProcess: @unchecked Sendable {
    // @unchecked Sendable: the stored properties are set once; `LineBuffer` locks its lines.
    let process = Process()
    let port: Int
    private let output = LineBuffer()

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    static var binary: URL {
        // The test bundle sits beside the executables in .build/<triple>/debug.
        var url = Bundle.main.bundleURL
        while url.pathComponents.count > 1, !FileManager.default.fileExists(atPath: url.appending(path: "sheetd").path) {
            url = url.deletingLastPathComponent()
        }
        return url.appending(path: "sheetd")
    }

    /// Starts `sheetd serve` on `port` (0: a free one) over the database at `database`.
    init(port: Int = 0, database: String) throws {
        process.executableURL = Self.binary
        process.arguments = ["serve", "--port", String(port), "--db", database, "--threads", "2", "--drain-timeout", "2"]
        process.environment = [
            "PATH": "/usr/bin:/bin", "SHEETD_JWT_SECRET": LiveSheetd.jwtSecret, "SHEETD_ADMIN_TOKEN": LiveSheetd.adminToken,
            "SHEETD_ACCESS_LOG": "false",
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = out.fileHandleForReading
        let output = self.output
        Thread.detachNewThread {
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: 0x0A) {
                    output.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
        }
        let deadline = Date().addingTimeInterval(15)
        var found: Int?
        while found == nil, Date() < deadline {
            if let line = output.snapshot().first(where: { $0.contains("\"msg\":\"listening\"") }),
                let text = line.components(separatedBy: "\"port\":").dropFirst().first
            {
                found = Int(text.prefix { $0.isNumber })
            } else {
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        guard let found else {
            process.terminate()
            throw CollectorTimeout(description: "sheetd did not log its listening line: \(output.snapshot())")
        }
        self.port = found
    }

    /// SIGTERM, then waits for the exit; returns the exit status.
    @discardableResult
    func terminate() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    deinit { terminate() }
}

/// Lines read from a pipe, behind a lock.
final class LineBuffer: @unchecked Sendable {
    // @unchecked Sendable: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    func snapshot() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }
}

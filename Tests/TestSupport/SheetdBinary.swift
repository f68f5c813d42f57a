import Concurrency
public import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The `sheetd` executable as an operator runs it, for the command-line tests (sheetdTests) and the
/// few service tests that need the real process (a drain under SIGTERM).
public enum SheetdBinary {
    public static var url: URL {
        // The test bundle sits beside the executables in .build/<triple>/debug.
        var url = Bundle.main.bundleURL
        while url.pathComponents.count > 1, !FileManager.default.fileExists(atPath: url.appending(path: "sheetd").path) {
            url = url.deletingLastPathComponent()
        }
        return url.appending(path: "sheetd")
    }

    public struct Run: Sendable {
        public var status: Int32
        public var stdout: String
        public var stderr: String
        public init(status: Int32, stdout: String, stderr: String) {
            self.status = status
            self.stdout = stdout
            self.stderr = stderr
        }
    }

    /// Runs `sheetd` to its end; one still running after `deadline` seconds is killed (SIGKILL), so a
    /// command that should have refused to start cannot hang the suite.
    public static func run(_ arguments: [String], environment: [String: String] = [:], deadline: Double = 120) throws -> Run {
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin"].merging(environment) { $1 }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let pid = process.processIdentifier
        let watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + deadline, execute: watchdog)
        process.waitUntilExit()
        watchdog.cancel()
        return Run(
            status: process.terminationStatus,
            stdout: String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
            stderr: String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
    }
}

/// Reads a pipe line by line on a background thread.
public final class LineReader: Sendable {
    private let lines = Locked<[String]>([])
    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending.append(chunk)
                while let nl = pending.firstIndex(of: 0x0a) {
                    let line = String(decoding: pending[pending.startIndex..<nl], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...nl)
                    lines.withLock { $0.append(line) }
                }
            }
        }
    }
    /// Lines read so far that satisfy `predicate`.
    public func count(where predicate: (String) -> Bool) -> Int {
        lines.withLock { $0.filter(predicate).count }
    }

    public var all: [String] { lines.withLock { $0 } }

    public func waitFor(_ needle: String, seconds: Double) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let found = lines.withLock { $0.first { $0.contains(needle) } }
            if let found { return found }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }
}

/// `sheetd serve` on a free port (or `port`) over a database in a temporary directory, its stdout
/// read line by line; stopped (SIGKILL if still running) and cleaned up when released.
public final class LaunchedSheetd {
    public let process = Process()
    public let reader: LineReader
    public let port: Int
    /// Its "listening" log line.
    public let listening: String
    /// The SQLite file it serves.
    public let databasePath: String
    /// Removed when released (nil: the caller's database, left alone).
    private let directory: URL?

    /// Admin token `admin`, JWT secret `secret` (or `environment`); `arguments` follow `serve --port 0 --db <temp file>`
    /// (or `port`, and `database`, which stays when released).
    public init(
        _ arguments: [String] = [], port requestedPort: Int = 0, database: String? = nil,
        environment: [String: String] = ["SHEETD_JWT_SECRET": "secret", "SHEETD_ADMIN_TOKEN": "admin"]
    ) throws {
        if let database {
            directory = nil
            databasePath = database
        } else {
            let made = FileManager.default.temporaryDirectory.appending(path: "sheetd-process-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
            directory = made
            databasePath = made.appending(path: "db.sqlite").path
        }
        process.executableURL = SheetdBinary.url
        process.arguments = ["serve", "--port", String(requestedPort), "--db", databasePath] + arguments
        process.environment = environment
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        reader = LineReader(out.fileHandleForReading)
        guard let listening = reader.waitFor("\"msg\":\"listening\"", seconds: 10),
            let port = Int(listening.split(separator: "\"port\":")[1].prefix { $0.isNumber })
        else {
            process.terminate()
            throw ClientError(description: "sheetd did not report its port")
        }
        self.port = port
        self.listening = listening
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// SIGTERM, then waits for the exit (the lock file and the WAL are released then); the exit status.
    @discardableResult
    public func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        return process.terminationStatus
    }
}

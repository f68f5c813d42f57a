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

/// `sheetd serve --port 0` over a database in a temporary directory, its stdout read line by line;
/// stopped (SIGKILL if still running) and cleaned up when released.
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
    /// (or `database`, which stays when released).
    public init(
        _ arguments: [String] = [], database: String? = nil,
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
        process.arguments = ["serve", "--port", "0", "--db", databasePath] + arguments
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

    /// SIGTERM, then waits for the exit (the lock file and the WAL are released then).
    public func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }
}

/// A plain TCP client for byte-exact requests.
public final class RawSocket {
    public let fd: Int32
    public init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { throw ClientError(description: "connect failed: errno \(errno)") }
    }
    deinit { close(fd) }
    public func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        guard n == bytes.count else { throw ClientError(description: "send failed") }
    }
    /// Everything until the peer closes (or the receive timeout).
    public func receiveAll() throws -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }
}

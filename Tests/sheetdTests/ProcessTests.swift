import Concurrency
import Foundation
import TestSupport
import Testing

/// The `sheetd` binary as an operator runs it: configuration errors, graceful stop.
@Suite(.serialized) struct ProcessTests {
    /// Invalid configuration: one clear line on stderr, exit code 2, no backtrace.
    @Test(arguments: [
        (["serve", "--port", "99999"], [String: String]()),
        (["serve", "--bogus"], [:]),
        (["serve"], ["SHEETD_SYNCHRONOUS": "SOMETIMES"]),
        (["serve"], ["SHEETD_THREADS": "zero"]),
        (["serve"], ["SHEETD_ENV": "production"]),
        (["serve", "--host", "localhost:80"], [:]),
        (["frobnicate"], [:]),
    ])
    func invalidConfigurationExitsTwo(arguments: [String], environment: [String: String]) throws {
        let r = try SheetdBinary.run(arguments, environment: environment)
        #expect(r.status == 2)
        let lines = r.stderr.split(separator: "\n")
        #expect(lines.count == 1, "stderr: \(r.stderr)")
        #expect(!r.stderr.contains("Fatal error"))
    }

    /// --help and --version answer and exit 0.
    @Test func helpAndVersion() throws {
        let help = try SheetdBinary.run(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("SHEETD_PORT"))
        let version = try SheetdBinary.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("sheetd "))
    }

    /// An invalid catalog file stops start-up naming the entry.
    /// The binary allocates with jemalloc (linked into the executable, so it serves every malloc of
    /// the process), with the options compiled into it: one arena.
    @Test func theServerAllocatesWithJemallocAndItsOptions() throws {
        let sheetd = try LaunchedSheetd(["--access-log", "false"])
        defer { sheetd.stop() }
        #expect(sheetd.listening.contains(#""allocator":"jemalloc 5."#), "\(sheetd.listening)")
        #expect(sheetd.listening.contains("(narenas 1)"), "\(sheetd.listening)")
    }

    @Test func invalidCatalogNamesTheEntry() throws {
        let dir = FileManager.default.temporaryDirectory.appending(path: "sheetd-cat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let catalog = dir.appending(path: "catalog.json")
        try Data(#"{"sheets":[{"id":"fine","kind":"action","screen":"s"},{"id":"broken","kind":"cards","screen":"s"}]}"#.utf8).write(to: catalog)
        let r = try SheetdBinary.run(
            ["serve", "--db", dir.appending(path: "db.sqlite").path, "--catalog", catalog.path, "--port", "0"],
            environment: ["SHEETD_JWT_SECRET": "x", "SHEETD_ADMIN_TOKEN": "y"])
        #expect(r.status == 2)
        #expect(r.stderr.contains("broken"))
        #expect(r.stderr.contains("containerId"))
    }

    /// SIGTERM while a request is in flight: the request is answered, the process exits 0, and the
    /// shutdown is logged.
    @Test func sigtermLetsInFlightRequestFinish() throws {
        let sheetd = try LaunchedSheetd()
        let process = sheetd.process, reader = sheetd.reader, port = sheetd.port

        // Headers and half the body, then SIGTERM, then the rest of the body.
        let socket = try RawConnection(port: port)
        let body = #"{"count":3}"#
        try socket.send(
            "PUT /v1/users/t/containers/c/count HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
                + body.prefix(4))
        Thread.sleep(forTimeInterval: 0.2)
        kill(process.processIdentifier, SIGTERM)
        Thread.sleep(forTimeInterval: 0.2)
        try socket.send(String(body.dropFirst(4)))
        let response = String(decoding: socket.readToEnd(), as: UTF8.self)
        #expect(response.hasPrefix("HTTP/1.1 200"), "\(response)")
        #expect(response.lowercased().contains("connection: close"))
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(reader.waitFor("\"msg\":\"stopped\"", seconds: 5) != nil)
    }

    /// A client closing its decision stream is a normal disconnect: no `warn` line for it (each close
    /// used to log libmicrohttpd's "application error generating response").
    @Test func closedStreamsAreNotWarnings() throws {
        let sheetd = try LaunchedSheetd(["--access-log", "false"])
        let reader = sheetd.reader, port = sheetd.port
        for i in 0..<50 {
            let stream = try EventStreamClient(
                port: port, target: "/v1/users/q\(i % 5)/decision/stream?screen=home&platform=ios", headers: [("Authorization", "Bearer admin")])
            #expect(stream.head.status == 200)
            _ = try stream.next()
        }
        // The last stream's close is seen and logged (at debug) before this marker request's line.
        Thread.sleep(forTimeInterval: 0.5)
        #expect(reader.count { $0.contains("\"level\":\"warn\"") } == 0, "\(reader.all.filter { $0.contains("warn") }.prefix(3))")
    }

    /// One SIGTERM always stops the server, under load too, in the configuration in which a first
    /// SIGTERM was once missed (`--threads 1 --decision-cache 0`): every run drains and exits 0. Every
    /// thread of the running process blocks SIGTERM and SIGINT, so the signal stays pending for the
    /// waiting main thread instead of being taken by whichever thread the kernel picks. Half the runs
    /// signal the moment the "listening" line appears, the others in the middle of decision GETs.
    @Test func oneSigtermStopsEveryRunUnderLoad() throws {
        for run in 0..<8 {
            let dir = try TemporaryDirectory(prefix: "sheetd-term-load")
            defer { dir.remove() }
            let process = try SpawnedProcess(
                SheetdBinary.url.path,
                ["serve", "--port", "0", "--db", dir.file(), "--threads", "1", "--decision-cache", "0", "--access-log", "false"],
                environment: ["SHEETD_JWT_SECRET=secret", "SHEETD_ADMIN_TOKEN=admin"])
            let reader = LineReader(process.output)
            let listening = try #require(reader.waitFor("\"msg\":\"listening\"", seconds: 10))
            let port = try #require(Int(listening.split(separator: "\"port\":")[1].prefix { $0.isNumber }))
            let load = DecisionLoad(port: port, clients: 4)
            if run % 2 == 1 {
                #expect(load.waitForAnswers(50, seconds: 10), "run \(run): no load")
                let threads = Self.threadsNotBlockingTermination(process.pid)
                #expect(threads.checked >= 2, "run \(run): the threads' signal masks were not read")
                #expect(threads.unblocked.isEmpty, "run \(run): threads that do not block SIGTERM/SIGINT: \(threads.unblocked)")
            }
            kill(process.pid, SIGTERM)
            let status = process.wait(seconds: 15)
            load.stop()
            #expect(status == 0, "run \(run): exit status \(status.map(String.init) ?? "none: still running 15 s after one SIGTERM")")
            #expect(reader.waitFor("\"msg\":\"stopped\"", seconds: 5) != nil, "run \(run)")
        }
    }

    /// A file read to its end with read(2) (/proc files report a size of 0, so Foundation reads nothing).
    static func readAll(_ path: String) -> String? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The threads of `pid` whose mask was read (all but the main thread: it waits for the signals
    /// in `sigwait`, during which the kernel shows them unblocked), and those of them (name and id)
    /// whose signal mask lets SIGTERM or SIGINT through.
    static func threadsNotBlockingTermination(_ pid: Int32) -> (checked: Int, unblocked: [String]) {
        let wanted: UInt64 = (1 << (UInt64(SIGTERM) - 1)) | (1 << (UInt64(SIGINT) - 1))
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        var checked = 0
        var unblocked: [String] = []
        for tid in tasks where tid != "\(pid)" {
            guard let status = readAll("/proc/\(pid)/task/\(tid)/status") else { continue }  // the thread ended
            let fields = status.split(separator: "\n")
            let name = fields.first { $0.hasPrefix("Name:") }?.dropFirst(5).trimmingCharacters(in: .whitespaces) ?? "?"
            guard let line = fields.first(where: { $0.hasPrefix("SigBlk:") }),
                let mask = UInt64(line.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
            else { continue }
            checked += 1
            if mask & wanted != wanted { unblocked.append("\(name) (\(tid))") }
        }
        return (checked, unblocked)
    }
}

/// Decision GETs from `clients` threads, one connection per request, until `stop()` or the server
/// stops answering.
final class DecisionLoad: Sendable {
    private let state = Locked((answered: 0, stopped: false))

    init(port: Int, clients: Int) {
        for client in 0..<clients {
            Thread.detachNewThread { [self] in
                var n = 0
                while !isStopped {
                    n += 1
                    guard let socket = try? RawConnection(port: port),
                        (try? socket.send(
                            "GET /v1/users/load-\(client)-\(n % 50)/decision?screen=home&tab=accounts&platform=ios HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer admin\r\nConnection: close\r\n\r\n"
                        )) != nil,
                        String(decoding: socket.readToEnd(), as: UTF8.self).hasPrefix("HTTP/1.1 ")
                    else { break }
                    state.withLock { $0.answered += 1 }
                }
            }
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Whether `count` requests were answered within `seconds`.
    func waitForAnswers(_ count: Int, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if state.withLock({ $0.answered }) >= count { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return false
    }

    func stop() { state.withLock { $0.stopped = true } }
}

/// A child process started with no signal blocked and SIGTERM/SIGINT at their default action, as a
/// shell or supervisor starts it (`Process` passes on the test runner's signal mask), its standard
/// output in a pipe.
final class SpawnedProcess {
    let pid: pid_t
    let output: FileHandle

    init(_ path: String, _ arguments: [String], environment: [String]) throws {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw ClientError(description: "pipe failed") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGINT)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { for p in argv + envp { free(p) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, path, &actions, &attributes, argv, envp)
        close(pipeEnds[1])
        guard rc == 0 else {
            close(pipeEnds[0])
            throw ClientError(description: "posix_spawn failed: \(rc)")
        }
        pid = child
        output = FileHandle(fileDescriptor: pipeEnds[0], closeOnDealloc: true)
    }

    /// The exit status once the process ended within `seconds`; nil (and SIGKILL) if it did not, or
    /// if a signal ended it.
    func wait(seconds: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while Date() < deadline {
            if waitpid(pid, &status, WNOHANG) == pid {
                return status & 0x7f == 0 ? (status >> 8) & 0xff : nil
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        kill(pid, SIGKILL)
        _ = waitpid(pid, &status, 0)
        return nil
    }
}

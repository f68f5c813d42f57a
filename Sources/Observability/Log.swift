public import JSONKit
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Log severity; lines below the configured minimum are dropped.
public enum LogLevel: String, Sendable, Comparable, CaseIterable {
    case debug, info, warn, error

    var rank: Int {
        switch self {
        case .debug: 0
        case .info: 1
        case .warn: 2
        case .error: 3
        }
    }

    public static func < (a: LogLevel, b: LogLevel) -> Bool { a.rank < b.rank }
}

/// A JSON scalar for log fields (and problem extension members).
public enum LogValue: Sendable, ExpressibleByStringLiteral, ExpressibleByStringInterpolation,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
{
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    public init(stringLiteral value: String) { self = .string(value) }
    public init(stringInterpolation: DefaultStringInterpolation) { self = .string(String(stringInterpolation: stringInterpolation)) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }

    /// Appends the value as a JSON scalar.
    public func write(to out: inout JSONWriter) {
        switch self {
        case .string(let s): out.string(s)
        case .int(let i): out.int(i)
        case .double(let d): out.double(d)
        case .bool(let b): out.bool(b)
        }
    }
}

/// Structured logging: one JSON object per line on stdout,
/// `{"time":"2026-11-29T21:00:00.123Z","level":"info","msg":"...",<fields>}`.
///
/// Thread-safe: each line is assembled in a private buffer and written with `write(2)` under a lock, so
/// lines from different threads never interleave. Never pass headers, tokens or bodies as fields.
public enum Log {
    private static let minimumRank = Atomic<Int>(LogLevel.info.rank)
    private static let output = Mutex(LogOutput())

    /// Drops lines below `minimum` from now on (default: `.info`).
    public static func configure(minimum: LogLevel) {
        minimumRank.store(minimum.rank, ordering: .relaxed)
    }

    /// Whether a line at `level` would be written.
    public static func isEnabled(_ level: LogLevel) -> Bool {
        level.rank >= minimumRank.load(ordering: .relaxed)
    }

    /// Writes one line (if `level` passes the minimum). `fields` follow `msg` in the given order.
    public static func write(_ level: LogLevel, _ msg: String, _ fields: [(String, LogValue)] = []) {
        guard isEnabled(level) else { return }
        var out = JSONWriter(reservingCapacity: 128 + fields.count * 24)
        out.object { line in
            begin(&line, level: level, msg: msg)
            for (k, v) in fields {
                line.key(k)
                v.write(to: &line)
            }
        }
        out.raw("\n")
        emit(out.bytes)
    }

    /// The first members of a line, inside its object: `"time":"…","level":"…","msg":…`.
    public static func begin(_ line: inout JSONWriter, level: LogLevel, msg: String) {
        line.key("time")
        line.verbatimString { appendTimestamp(&$0) }
        line.key("level")
        line.verbatimString { $0.append(contentsOf: level.rawValue.utf8) }
        line.member("msg", msg)
    }

    /// Writes a finished line (ending in "\n").
    public static func emit(_ line: [UInt8]) {
        output.withLock { o in
            if o.capture != nil {
                o.capture!.append(String(decoding: line.dropLast(), as: UTF8.self))
                return
            }
            line.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let n = Glibc.write(o.fd, raw.baseAddress! + offset, raw.count - offset)
                    if n > 0 {
                        offset += n
                    } else if n < 0 && errno == EINTR {
                        continue
                    } else {
                        return  // stdout gone or full: logging must never take the server down
                    }
                }
            }
        }
    }

    // MARK: - Testing hooks

    /// Starts collecting lines in memory instead of writing them (tests only).
    @_spi(Testing) public static func startCapture() { output.withLock { if $0.capture == nil { $0.capture = [] } } }

    /// The lines captured so far.
    @_spi(Testing) public static func captured() -> [String] { output.withLock { $0.capture ?? [] } }
}

private struct LogOutput {
    var fd: Int32 = 1
    var capture: [String]?
}

/// Appends the current UTC time as `2026-11-29T21:00:00.123Z`.
func appendTimestamp(_ out: inout [UInt8]) {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    var t = ts.tv_sec
    var tmv = tm()
    gmtime_r(&t, &tmv)
    func two(_ v: Int32) {
        out.append(UInt8(ascii: "0") &+ UInt8(v / 10))
        out.append(UInt8(ascii: "0") &+ UInt8(v % 10))
    }
    let year = Int(tmv.tm_year) + 1900
    out.append(UInt8(ascii: "0") &+ UInt8(year / 1000 % 10))
    out.append(UInt8(ascii: "0") &+ UInt8(year / 100 % 10))
    out.append(UInt8(ascii: "0") &+ UInt8(year / 10 % 10))
    out.append(UInt8(ascii: "0") &+ UInt8(year % 10))
    out.append(UInt8(ascii: "-")); two(tmv.tm_mon + 1)
    out.append(UInt8(ascii: "-")); two(tmv.tm_mday)
    out.append(UInt8(ascii: "T")); two(tmv.tm_hour)
    out.append(UInt8(ascii: ":")); two(tmv.tm_min)
    out.append(UInt8(ascii: ":")); two(tmv.tm_sec)
    let ms = Int(ts.tv_nsec / 1_000_000)
    out.append(UInt8(ascii: "."))
    out.append(UInt8(ascii: "0") &+ UInt8(ms / 100))
    out.append(UInt8(ascii: "0") &+ UInt8(ms / 10 % 10))
    out.append(UInt8(ascii: "0") &+ UInt8(ms % 10))
    out.append(UInt8(ascii: "Z"))
}

/// Monotonic microseconds, for durations.
@inline(__always) public func monotonicMicros() -> Int {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec * 1_000_000 + ts.tv_nsec / 1000
}

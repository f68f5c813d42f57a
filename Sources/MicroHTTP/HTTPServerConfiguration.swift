#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How the server listens and what it tolerates. Every limit is deliberate; see docs/configuration.md.
public struct HTTPServerConfiguration: Sendable {
    /// IPv4 address to bind ("127.0.0.1" by default; "0.0.0.0" for all interfaces).
    public var host: String = "127.0.0.1"
    /// TCP port; 0 picks a free one (read it back from `HTTPServer.port`).
    public var port: Int = 8080
    /// Workers: event loops, each one libmicrohttpd daemon on its own thread (`EventLoop`); default: 8,
    /// or the number of online cores when more.
    public var threads: Int = HTTPServerConfiguration.defaultThreads
    /// Hard cap on a request body; larger bodies get 413, announced or chunked.
    public var maxBodyBytes: Int = 65536
    /// Open connections across all workers. MHD does not refuse over the limit: new clients wait in the
    /// listen backlog. Kept below the open-file limit at start.
    public var connectionLimit: Int = 16384
    /// Kernel listen backlog (capped by net.core.somaxconn).
    public var listenBacklog: Int = 1024
    /// Seconds a connection may sit idle (no socket I/O) before MHD closes it; frees keep-alive slots.
    public var idleTimeoutSeconds: Int = 30
    /// MHD's per-connection memory pool: it holds the request line and header fields (48 bytes more
    /// per field), the read buffer, and the answer's header section. A head that leaves less than
    /// `ServerCore.answerReserve` of it is a 431 (sheetd's); one larger than the pool, MHD's 414/431.
    /// MHD zeroes it per request, so smaller is cheaper; and every open connection holds it, a decision
    /// stream for as long as it lasts, so it sets the memory of many open streams (BENCHMARKS.md).
    public var headerMemoryLimit: Int = 10240
    /// Query parameters a request may have; more is a 400 naming the limit (the decision route knows
    /// 8). sheetd parses the query from its own copy; MHD stores none of it.
    public var maxQueryParameters: Int = 16
    /// One JSON line per request on stdout (turn off for benchmarks).
    public var accessLog: Bool = true
    /// Bodies of responses that allow compression are gzip-encoded from this size on, for clients
    /// that accept it (`HTTPResponse.compression`).
    public var gzipMinimumBytes: Int = 1024
    /// Bytes all event streams together may hold for readers that have not taken them yet; a stream
    /// whose next event would go over is cut (its client reconnects with `Last-Event-ID`).
    public var streamBufferBudgetBytes: Int = HTTPServerConfiguration.defaultStreamBufferBudgetBytes
    public static let defaultStreamBufferBudgetBytes = 64 * 1024 * 1024

    public init() {}

    /// At least 8 workers even on fewer cores: a worker resumes a suspended connection (a decision
    /// stream's next event, a deferred answer) by walking the list of every connection suspended on
    /// it (libmicrohttpd 0.9.75, `resume_suspended_connections`); with thousands of streams on few
    /// workers that walk dominates a pushed event's latency and the server's CPU per event
    /// (BENCHMARKS.md). With 8 the lists are shorter, and CPU per request stays the same (idle workers
    /// cost nothing). PostgreSQL wants 8 too (a worker blocks for a query).
    static var defaultThreads: Int {
        let n = sysconf(Int32(_SC_NPROCESSORS_ONLN))
        return max(8, n > 0 ? n : 1)
    }
}

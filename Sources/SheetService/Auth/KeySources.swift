import Concurrency
import CurlKit
import FoundationEssentials
import MicroHTTP
import Observability

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where user-token keys come from (`SHEETD_JWT_SECRET`, `SHEETD_JWT_SECRETS_FILE`, `SHEETD_JWKS_FILE`,
/// `SHEETD_JWKS_URL`, `SHEETD_JWKS_REFRESH`).
public struct KeySourceSettings: Sendable, Equatable {
    /// The single HS256 secret, for tokens without `kid`.
    public var jwtSecret: String?
    /// `kid secret` lines.
    public var secretsFile: String?
    public var jwksFile: String?
    public var jwksURL: String?
    /// Seconds between fetches of the JWKS URL.
    public var refreshSeconds = 300
    /// A token naming an unknown `kid` triggers a fetch at once, at most this often.
    public var unknownKeyRefetchSeconds = 30
    /// How often the files are checked for a change.
    public var fileCheckMilliseconds = 1000
    public var fetchTimeoutSeconds = 10
    /// Shared secrets shorter than this are refused (32 in production).
    public var minimumSecretLength = 1

    public init() {}

    /// Whether anything needs watching or fetching after start-up.
    var needsWatching: Bool { secretsFile != nil || jwksFile != nil || jwksURL != nil }
}

/// Loads the key sources into a `KeyRing`, then keeps them current in the background: files
/// reloaded when they change (or on `reload()`, SIGHUP), the URL fetched every `refreshSeconds` and
/// at once (at most every `unknownKeyRefetchSeconds`) when a token names an unknown `kid`. A reload
/// or fetch that fails keeps the last good keys and is logged; requests never wait for either.
///
/// No thread of its own: a repeating timer (`fileCheckMilliseconds`) and each request for a reload
/// or fetch queue one pass on the background pool (`WorkerThreads.background`); at most one pass
/// runs at a time, and what is asked for while it runs is done by the same pass before it ends.
public final class KeySources: Sendable {
    public let ring = KeyRing()
    public let settings: KeySourceSettings

    private struct State {
        var stopping = false
        /// A pass is queued or running on the background pool.
        var busy = false
        /// The file-check timer fired since the last pass.
        var checkFiles = false
        var timer: TimerToken?
        var reloadRequested = false
        var fetchRequested = false
        /// Monotonic µs of the last fetch's start (0: none yet).
        var lastFetch = 0
        var nextFetch = Int.max
        var fileStamps: [String: FileStamp] = [:]
        var fileReloads = 0
        var fileReloadFailures = 0
        var fetchFailures = 0
    }

    private let state = ConditionLock(State())

    public init(_ settings: KeySourceSettings) {
        self.settings = settings
    }

    static let secretSource = "SHEETD_JWT_SECRET"
    static let secretsFileSource = "SHEETD_JWT_SECRETS_FILE"
    static let jwksFileSource = "SHEETD_JWKS_FILE"
    static let jwksURLSource = "SHEETD_JWKS_URL"

    /// Loads every configured source once. Throws, naming the source and the problem, when a file
    /// or document is malformed, or when no source yields a usable key (a URL that cannot be fetched
    /// is only fatal then; it is fetched again in the background).
    public func load() throws(KeySetError) {
        if let secret = settings.jwtSecret {
            try ring.replace(source: Self.secretSource, with: JSONWebKeySet(keys: [.hs256(secret: Array(secret.utf8), keyID: nil)]))
        }
        if let path = settings.secretsFile { try loadFile(path, source: Self.secretsFileSource) }
        if let path = settings.jwksFile { try loadFile(path, source: Self.jwksFileSource) }
        var fetchFailure: String?
        if let url = settings.jwksURL {
            do throws(KeySetError) { try fetch(url) } catch let error where error.message.hasPrefix(Self.unreachable) {
                fetchFailure = error.message
            }
        }
        guard ring.hasKeys else {
            let refused = ring.snapshot.refused.map { "\($0.key): \($0.value)" }.sorted()
            throw KeySetError(
                fetchFailure ?? (refused.isEmpty ? "no key to verify user tokens with" : "no usable key: \(refused.joined(separator: "; "))"))
        }
        if let fetchFailure { Log.write(.warn, "JWKS URL not fetched; serving with the other keys", [("error", .string(fetchFailure))]) }
    }

    /// Files reloaded after start-up, reloads refused (the old keys kept), and failed fetches of the URL.
    public var fileReloads: Int { state.withLock { $0.fileReloads } }
    public var fileReloadFailures: Int { state.withLock { $0.fileReloadFailures } }
    public var fetchFailures: Int { state.withLock { $0.fetchFailures } }

    /// Starts watching and fetching (when a file or URL is configured).
    public func start() {
        guard settings.needsWatching else { return }
        ring.onUnknownKeyID { [weak self] _ in self?.unknownKeyIDSeen() }
        let interval = Duration.milliseconds(settings.fileCheckMilliseconds)
        let timer = TimerThread.shared.scheduleRepeating(every: interval, firstAfter: interval) { [weak self] in
            self?.ask { $0.checkFiles = true }
        }
        state.withLock { s in
            s.timer = timer
            s.nextFetch = settings.jwksURL == nil ? Int.max : Timers.now() + settings.refreshSeconds * 1_000_000
            for path in [settings.secretsFile, settings.jwksFile].compactMap({ $0 }) where s.fileStamps[path] == nil {
                s.fileStamps[path] = FileStamp(path: path)
            }
        }
    }

    /// Reloads the files and fetches the URL now (SIGHUP).
    public func reload() {
        ask { $0.reloadRequested = true }
    }

    /// Stops the timer and waits for a pass under way (at most one fetch's timeout).
    public func stop() {
        guard settings.needsWatching else { return }
        let timer = state.withLock(wake: .all) { s -> TimerToken? in
            s.stopping = true
            defer { s.timer = nil }
            return s.timer
        }
        if let timer { TimerThread.shared.cancel(timer) }
        _ = state.wait(until: { !$0.busy }, timeout: .seconds(settings.fetchTimeoutSeconds + 2)) { _ in }
    }

    private func unknownKeyIDSeen() {
        guard settings.jwksURL != nil else { return }
        let interval = settings.unknownKeyRefetchSeconds * 1_000_000
        ask { s in
            if !s.fetchRequested && (s.lastFetch == 0 || Timers.now() - s.lastFetch >= interval) { s.fetchRequested = true }
        }
    }

    /// Notes a request (`change`) and queues a pass unless one is queued or running (it sees the
    /// request before it ends).
    private func ask(_ change: (inout State) -> Void) {
        let queue = state.withLock { s -> Bool in
            change(&s)
            guard !s.busy, !s.stopping else { return false }
            s.busy = true
            return true
        }
        if queue { WorkerThreads.background.run { [self] in pass() } }
    }

    /// Checks the files and fetches what is due, until nothing more was asked for.
    private func pass() {
        while true {
            let work = state.withLock(wake: .all) { s -> (reload: Bool, fetch: Bool)? in
                let fetchDue = s.fetchRequested || s.reloadRequested || Timers.now() >= s.nextFetch
                guard !s.stopping, s.checkFiles || s.reloadRequested || fetchDue else {
                    s.busy = false
                    return nil
                }
                defer { (s.checkFiles, s.reloadRequested, s.fetchRequested) = (false, false, false) }
                return (s.reloadRequested, fetchDue)
            }
            guard let work else { return }
            reloadChangedFiles(all: work.reload)
            if work.fetch { fetchURL() }
        }
    }

    private func reloadChangedFiles(all reload: Bool) {
        for (path, source) in [(settings.secretsFile, Self.secretsFileSource), (settings.jwksFile, Self.jwksFileSource)] {
            guard let path else { continue }
            let stamp = FileStamp(path: path)
            let changed = state.withLock { s -> Bool in
                defer { s.fileStamps[path] = stamp }
                return s.fileStamps[path] != stamp
            }
            guard changed || reload else { continue }
            do throws(KeySetError) {
                try loadFile(path, source: source)
                state.withLock { $0.fileReloads += 1 }
                Log.write(.info, "keys reloaded", [("source", .string(source)), ("keys", .string(ring.keyDescriptions.joined(separator: ", ")))])
            } catch {
                state.withLock { $0.fileReloadFailures += 1 }
                Log.write(.warn, "keys not reloaded; the previous keys stay", [("source", .string(source)), ("error", .string(error.message))])
            }
        }
    }

    private func fetchURL() {
        guard let url = settings.jwksURL else { return }
        do throws(KeySetError) {
            try fetch(url)
            Log.write(
                .info, "keys fetched",
                [("source", .string(Self.jwksURLSource)), ("keys", .string(ring.keyDescriptions.joined(separator: ", ")))])
        } catch {
            Log.write(.warn, "JWKS URL not fetched; the previous keys stay", [("error", .string(error.message))])
            // Sooner than the refresh interval: the provider may be back in a moment.
            state.withLock {
                $0.fetchFailures += 1
                $0.nextFetch = min($0.nextFetch, Timers.now() + min(settings.refreshSeconds, 30) * 1_000_000)
            }
        }
    }

    private func loadFile(_ path: String, source: String) throws(KeySetError) {
        guard let data = FileManager.default.contents(atPath: path) else { throw KeySetError("\(source): cannot read \(path)") }
        do throws(KeySetError) {
            let set =
                source == Self.secretsFileSource
                ? try JSONWebKeySet.sharedSecrets(String(decoding: data, as: UTF8.self), minimumLength: settings.minimumSecretLength)
                : try JSONWebKeySet.parse(Array(data))
            try ring.replace(source: source, with: set)
        } catch {
            throw KeySetError(error.message.hasPrefix(source) ? error.message : "\(source) \(path): \(error.message)")
        }
    }

    /// Marks a fetch failure that is the network's or the server's, not the document's.
    private static let unreachable = "SHEETD_JWKS_URL: cannot fetch"

    private func fetch(_ url: String) throws(KeySetError) {
        let now = Timers.now()
        state.withLock { s in
            s.lastFetch = now
            s.nextFetch = now + settings.refreshSeconds * 1_000_000
        }
        let document: FetchedDocument
        do {
            document = try HTTPGet.fetch(url, timeoutSeconds: settings.fetchTimeoutSeconds, maximumBytes: JSONWebKeySet.maximumBytes)
        } catch {
            throw KeySetError("\(Self.unreachable) \(url): \(error.message)")
        }
        guard document.status == 200 else { throw KeySetError("\(Self.unreachable) \(url): HTTP \(document.status)") }
        do throws(KeySetError) {
            try ring.replace(source: Self.jwksURLSource, with: try JSONWebKeySet.parse(document.body))
        } catch {
            throw KeySetError(error.message.hasPrefix(Self.jwksURLSource) ? error.message : "\(Self.jwksURLSource) \(url): \(error.message)")
        }
    }
}

/// What tells a file changed: modification time, size and inode (a file replaced by rename has a new one).
private struct FileStamp: Equatable, Sendable {
    var seconds = 0
    var nanoseconds = 0
    var size = 0
    var inode: UInt = 0

    init(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
        size = Int(info.st_size)
        inode = UInt(info.st_ino)
    }
}

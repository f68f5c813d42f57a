public import Foundation

/// A durable, bounded queue of one user's events: each is written to a file before anything is sent,
/// with its `eventId` and the time it happened fixed then, and delivered in order, once the server
/// can be reached. Reports are no longer lost offline: caps count every impression, and a dismissal
/// sent late still latches its sheet (and, with ``SheetdConfiguration/sendsOccurredAt``, starts its
/// cooldown from when it happened).
///
/// - **Durable.** The file (``defaultFile(forUser:)``: Application Support/sheetd/) is rewritten
///   atomically on every change, so a crash or a kill loses nothing recorded; a new outbox on the same
///   file (the next launch) sends what is left.
/// - **In order, once.** Events go one at a time, oldest first; an event leaves the file only when the
///   server answered it. When the answer was lost, the event is sent again with the same `eventId` and
///   the server answers it as a replay (`Idempotent-Replayed`): it counts once.
/// - **When.** At once after ``record(_:)``; after a failure, again after a pause that doubles from 2 s
///   to 60 s; and whenever the app calls ``flush()`` (when the network returns and on foreground:
///   `observeSystem()` on iOS does both). One outbox per file at a time (one per user).
/// - **What stops a flush and what drops an event.** A transport failure, 408, 429, 5xx, 401, 403 or a
///   token provider that throws stops it with the events kept (they may pass later). Any other refusal
///   (400, 404, 409, 422: the event can never pass) drops that event (``DropReason/refused``) and goes on,
///   except a 400 naming `occurredAt` (a device clock far off, a server without it): that event is sent
///   again without its time.
/// - **Late events.** The server takes `occurredAt` up to 24 h back. An impression or a conversion older
///   than ``maximumAge`` is dropped (``DropReason/tooOld``): counted at delivery it would fill today's
///   caps and a wrong experiment window. Counts, dismissals, presentations and heights are sent without
///   their time: the state they carry (a count, a latch, a stack) still matters.
/// - **Bounded.** At most ``capacity`` events (1000 by default, a few hundred bytes each). Recording
///   one more drops the oldest (``DropReason/overflow``): the newest events are the ones the campaign
///   rules read. Every drop is counted in ``dropped`` and told to `onDrop`.
public actor SheetdOutbox {
    /// Why an event left the outbox without being delivered.
    public enum DropReason: Sendable, Equatable {
        /// The outbox was full: the oldest event made room.
        case overflow
        /// An impression or conversion older than the server's `occurredAt` window.
        case tooOld
        /// The server refused it for good (its status and problem in the error).
        case refused(SheetdError)
    }

    /// How an event left the outbox.
    public enum Settlement: Sendable, Equatable {
        /// The server applied it (`replayed`: it had already, and did not apply it twice).
        case delivered(replayed: Bool)
        /// It was dropped.
        case dropped(DropReason)
    }

    /// What a ``flush()`` did.
    public struct FlushResult: Sendable, Equatable {
        /// Events the server applied in this flush.
        public var delivered: Int
        /// Of those, the ones it had applied already (replays).
        public var replayed: Int
        /// Events still waiting.
        public var remaining: Int
        /// What stopped the flush early (offline, a 5xx, a token problem), or nil when it emptied the outbox.
        public var stoppedBy: SheetdError?

        /// A result.
        public init(delivered: Int, replayed: Int, remaining: Int, stoppedBy: SheetdError?) {
            self.delivered = delivered
            self.replayed = replayed
            self.remaining = remaining
            self.stoppedBy = stoppedBy
        }
    }

    /// The most events kept by default.
    public static let defaultCapacity = 1000
    /// How old an event may be for the server to take its `occurredAt`: its 24 h, less 10 minutes for
    /// clock drift and the time a flush takes.
    public static let maximumAge: TimeInterval = 86_400 - 600

    /// The file the events are kept in.
    public nonisolated let file: URL
    /// The most events kept.
    public nonisolated let capacity: Int
    /// Events dropped since this outbox was made.
    public private(set) var dropped = 0

    private let client: any SheetdClientProtocol
    private let now: @Sendable () -> Date
    private let onDrop: @Sendable (SheetdEvent, DropReason) -> Void
    private var entries: [SheetdEvent]
    private var flushing: Task<FlushResult, Never>?
    private var retry: Task<Void, Never>?
    private var retryDelay: TimeInterval = 0
    private var waiting: [String: [CheckedContinuation<Settlement, Never>]] = [:]

    /// An outbox delivering through `client` (its user's), keeping its events in `file` (read now:
    /// what an earlier launch left is sent first). A file that cannot be read as an outbox is moved
    /// aside (`<file>.unreadable`) and the outbox starts empty.
    public init(
        file: URL, client: any SheetdClientProtocol, capacity: Int = SheetdOutbox.defaultCapacity,
        now: @escaping @Sendable () -> Date = { Date() }, onDrop: @escaping @Sendable (SheetdEvent, DropReason) -> Void = { _, _ in }
    ) throws {
        self.file = file
        self.client = client
        self.capacity = max(1, capacity)
        self.now = now
        self.onDrop = onDrop
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        if let data = try? Data(contentsOf: file) {
            if let stored = try? JSONDecoder().decode([SheetdEvent].self, from: data) {
                entries = stored
            } else {
                let aside = file.appendingPathExtension("unreadable")
                try? FileManager.default.removeItem(at: aside)
                try FileManager.default.moveItem(at: file, to: aside)
                entries = []
            }
        } else {
            entries = []
        }
    }

    /// The outbox file of `userId`: `Application Support/sheetd/outbox-<userId>.json` (characters other
    /// than letters, digits, `.`, `_` and `-` escaped), one per user so each user's events keep their order.
    public static func defaultFile(forUser userId: String) throws -> URL {
        let support = try FileManager.default.url(for: .applicationSupportDirectory, in: .userDomainMask, appropriateFor: nil, create: true)
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        allowed.remove(charactersIn: "%")
        let name = userId.addingPercentEncoding(withAllowedCharacters: allowed) ?? "user"
        return support.appendingPathComponent("sheetd", isDirectory: true).appendingPathComponent("outbox-\(name).json")
    }

    /// The events waiting, oldest first.
    public var pending: [SheetdEvent] { entries }

    /// Records an event that happens now (a new `eventId`) and starts delivering it. Returns it once
    /// it is in the file.
    @discardableResult
    public func record(_ kind: SheetdEvent.Kind) throws -> SheetdEvent {
        let event = SheetdEvent(kind, occurredAt: now())
        try enqueue(event)
        return event
    }

    /// Keeps `event` (its `eventId` and time as they are) and starts delivering it.
    public func enqueue(_ event: SheetdEvent) throws {
        var kept = entries + [event]
        var overflow: [SheetdEvent] = []
        if kept.count > capacity {
            overflow = Array(kept.prefix(kept.count - capacity))
            kept.removeFirst(overflow.count)
        }
        try save(kept)
        entries = kept
        for event in overflow { settle(event, .dropped(.overflow)) }
        if retry == nil { startFlush() }
    }

    /// Waits until the event `eventId` left the outbox: delivered, or dropped (an event not waiting
    /// has left already: delivered). Across a long time offline this waits as long; the event is safe
    /// in the file meanwhile.
    public func settlement(of eventId: String) async -> Settlement {
        guard entries.contains(where: { $0.eventId == eventId }) else { return .delivered(replayed: false) }
        return await withCheckedContinuation { waiting[eventId, default: []].append($0) }
    }

    /// Sends every waiting event in order (a flush under way is joined, not doubled). Call it when the
    /// network returns and when the app comes to the foreground.
    @discardableResult
    public func flush() async -> FlushResult {
        retry?.cancel()
        retry = nil
        retryDelay = 0
        return await startFlush().value
    }

    @discardableResult
    private func startFlush() -> Task<FlushResult, Never> {
        if let flushing { return flushing }
        let task = Task { await self.drain() }
        flushing = task
        return task
    }

    private func drain() async -> FlushResult {
        var result = FlushResult(delivered: 0, replayed: 0, remaining: 0, stoppedBy: nil)
        defer { flushing = nil }
        delivering: while var event = entries.first {
            if let occurredAt = event.occurredAt, now().timeIntervalSince(occurredAt) > Self.maximumAge {
                switch event.kind {
                case .impression, .conversion:
                    remove(event, .dropped(.tooOld))
                    continue
                default:
                    event.occurredAt = nil  // the server counts it at delivery; its state still matters
                }
            }
            do {
                let delivery = try await client.deliver(event)
                result.delivered += 1
                if delivery.replayed { result.replayed += 1 }
                remove(event, .delivered(replayed: delivery.replayed))
            } catch let error as SheetdError {
                if error.kind == .invalidResponse, let status = error.status, (200..<300).contains(status) {
                    result.delivered += 1
                    remove(event, .delivered(replayed: false))  // applied; only its answer was unreadable
                } else if error.status == 400, event.occurredAt != nil, error.invalidParams.contains(where: { $0.name == "occurredAt" }) {
                    // The time was refused (a device clock far off, or a server without `occurredAt`):
                    // the event is sent again, counted when the server gets it.
                    entries[0].occurredAt = nil
                    continue delivering
                } else if Self.mayPassLater(error) {
                    result.stoppedBy = error
                    break delivering
                } else {
                    remove(event, .dropped(.refused(error)))
                }
            } catch {
                // Cancelled (or a conformer's own error): keep it for the next flush.
                result.stoppedBy = SheetdError(kind: .transport, message: "the delivery ended: \(error)", underlying: error)
                break delivering
            }
        }
        result.remaining = entries.count
        if result.stoppedBy != nil { scheduleRetry() } else { retryDelay = 0 }
        return result
    }

    /// Whether a failed delivery may pass later (the event is kept): offline, the server busy or
    /// failing, or the token refused.
    static func mayPassLater(_ error: SheetdError) -> Bool {
        switch error.kind {
        case .transport, .token: return true
        case .server: return [401, 403, 408, 429].contains(error.status ?? 0) || (error.status ?? 0) >= 500
        default: return false
        }
    }

    /// After a failed flush: another one after 2 s, doubling up to 60 s (an explicit flush comes first).
    private func scheduleRetry() {
        retryDelay = min(max(retryDelay * 2, 2), 60)
        let delay = retryDelay
        retry?.cancel()
        retry = Task { [weak self] in
            try? await Task.sleep(nanoseconds: UInt64(delay * 1e9))
            guard !Task.isCancelled, let self else { return }
            await self.retried()
        }
    }

    private func retried() {
        retry = nil
        startFlush()
    }

    /// Takes `event` out of the file and tells whoever waits for it.
    private func remove(_ event: SheetdEvent, _ settlement: Settlement) {
        let kept = entries.filter { $0.eventId != event.eventId }
        do { try save(kept) } catch {
            // The file could not be rewritten: the event stays in it and is sent again on the next
            // launch, answered as a replay. In memory it is done.
        }
        entries = kept
        settle(event, settlement)
    }

    private func settle(_ event: SheetdEvent, _ settlement: Settlement) {
        if case .dropped(let reason) = settlement {
            dropped += 1
            onDrop(event, reason)
        }
        for continuation in waiting.removeValue(forKey: event.eventId) ?? [] { continuation.resume(returning: settlement) }
    }

    private func save(_ events: [SheetdEvent]) throws {
        let data = try JSONEncoder().encode(events)
        #if os(iOS)
        // Readable after the first unlock: events recorded while the phone is locked are kept and sent.
        try data.write(to: file, options: [.atomic, .completeFileProtectionUntilFirstUserAuthentication])
        #else
        try data.write(to: file, options: .atomic)
        #endif
    }
}

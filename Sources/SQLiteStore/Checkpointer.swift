import Concurrency
import SQLiteKit
import SheetStore

/// Copies the WAL back into the database file on its own connection, on the background pool.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses 1000 WAL frames: that writer,
/// and every update queued behind it, waits for the whole copy and its fsyncs.
/// Here the writer only asks, and a PASSIVE checkpoint runs beside
/// it and never blocks writers. Under steady writes it never catches the frames committed while it
/// runs, so the writer itself finishes the last ones now and then (see
/// `SQLiteGroupCommitWriter.blockingCheckpointFrames`) and the WAL starts over.
final class Checkpointer: Sendable {
    private struct State {
        var scheduled = false
        /// A `requestSoon` timer is pending.
        var soon = false
        var closed = false
        var completed = 0
    }

    /// How long after the last commit the frames a checkpoint has not copied yet are copied anyway.
    static let settleDelay = Duration.milliseconds(100)

    private let path: String
    private let options: Connection.Options
    /// `close()` waits on it for a running checkpoint.
    private let state = ConditionLock(State())
    private let connection = Locked<Connection?>(nil)
    /// Where checkpoints run (one at a time: `scheduled`).
    private let thread = WorkerThreads.background
    private let beforeEach: @Sendable () -> Void

    /// `beforeEach` runs before every checkpoint (the readers give up their idle snapshots).
    init(path: String, options: Connection.Options, beforeEach: @escaping @Sendable () -> Void) {
        self.path = path
        self.beforeEach = beforeEach
        // Its own read-write connection; the file is already in WAL mode (the writer set it).
        self.options = Connection.Options(
            walJournal: false, synchronous: options.synchronous, busyTimeoutMilliseconds: options.busyTimeoutMilliseconds,
            foreignKeys: options.foreignKeys)
    }

    /// No checkpoint scheduled or running. Only the writer requests checkpoints, so when the writer
    /// sees this it stays true until the writer requests again.
    var isIdle: Bool { state.withLock { !$0.scheduled } }

    /// Passive checkpoints run so far.
    var completed: Int { state.withLock { $0.completed } }

    /// Schedules a checkpoint unless one is scheduled or running already. Cheap: called after commits.
    func request() {
        let schedule = state.withLock { s in
            if s.scheduled || s.closed { return false }
            s.scheduled = true
            return true
        }
        if schedule { thread.run { [self] in run() } }
    }

    /// Asks for a checkpoint `settleDelay` from now unless one is pending: so that what the last
    /// commits of a burst wrote reaches the database file (and its fsync) soon after the writes stop,
    /// not at the next `checkpointFrames` of writes.
    func requestSoon() {
        let schedule = state.withLock { s in
            if s.soon || s.closed { return false }
            s.soon = true
            return true
        }
        guard schedule else { return }
        _ = TimerThread.shared.schedule(after: Self.settleDelay) { [weak self] in
            guard let self else { return }
            state.withLock { $0.soon = false }
            request()
        }
    }

    private func run() {
        beforeEach()
        connection.withLock { current in
            do {
                try current.opened(path: path, flags: [.readWrite, .noMutex], options: options).checkpoint(.passive)
            } catch {
                // A storage fault: the writer sees it too (and reports it); reopen next time. The WAL
                // only grows meanwhile, bounded by the writer's own blocking checkpoint.
                current?.close()
                current = nil
            }
        }
        state.withLock(wake: .all) { s in
            s.scheduled = false
            s.completed += 1
        }
    }

    /// Waits for a running checkpoint, refuses new ones and closes the connection (before the writer
    /// closes, so that the writer is the last connection and removes the WAL files).
    func close() {
        state.withLock { $0.closed = true }
        _ = state.wait(until: { !$0.scheduled }) { _ in }
        connection.withLock { current in
            current?.close()
            current = nil
        }
    }
}

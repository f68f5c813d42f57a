import Concurrency

/// The queue in front of a group-committing writer, the same for every backend: jobs queue up,
/// the first job of an idle queue starts a drain on the writer's own thread, which takes batches of
/// at most `maxBatch` jobs (those queued meanwhile form the next batch) until the queue is empty.
/// What a batch is (one transaction, the commit) is the writer's `run` (`GroupCommitEngine`); what it
/// returns (the completions) runs after the batch's jobs were released, while newer jobs queue up.
///
/// A job queued inside an event loop's turn may instead wait for the turn's end and run there, on
/// the loop's thread (`enqueue(_:atTurnEnd:)`): one batch per turn, and no thread woken per job. Either
/// way one drain at a time takes the batches (`active`), so batches never overlap and keep queue order.
public final class GroupCommitQueue<Job: Sendable>: Sendable {

    /// At most this many jobs share one transaction.
    public static var maxBatch: Int { 256 }

    private struct State {
        var jobs: [Job] = []
        /// A drain is queued or running, on `writer` or at a loop turn's end.
        var active = false
        /// Set by `close()`: new jobs are refused.
        var closed = false
    }

    /// `close()` waits on it for the writer to go idle.
    private let state = ConditionLock(State())
    /// The writer's one thread; it exits when the queue is released.
    private let writer = WorkerThreads(count: 1, name: "store-writer")
    private let run: @Sendable ([Job]) -> () -> Void

    /// `run` receives each batch, in queue order, on the writer's thread or a loop's, and returns what completes
    /// its jobs; that must not hold on to the jobs (a blocking caller's body must not outlive its call).
    public init(run: @escaping @Sendable ([Job]) -> () -> Void) {
        self.run = run
    }

    /// Queues `job`; false when the queue is closed (the job was not taken).
    ///
    /// With `atTurnEnd`, a job queued inside a turn of an event loop (`LoopTurn`) starts no drain on
    /// the writer's thread: the loop's thread runs one batch itself when its turn ends, so all the
    /// jobs one turn received share a transaction and no thread is woken for them. A caller that
    /// waits for its job on that thread must not pass it (the turn would never end).
    public func enqueue(_ job: Job, atTurnEnd: Bool = false) -> Bool {
        let start = state.withLock { state -> Start? in
            if state.closed { return nil }
            state.jobs.append(job)
            if state.active { return .queued }
            if atTurnEnd && LoopTurn.isOpen { return .atTurnEnd }
            state.active = true
            return .writer
        }
        switch start {
        case nil: return false
        case .queued?: break
        case .writer?: writer.run { [self] in drain() }
        case .atTurnEnd?: _ = LoopTurn.atEnd(of: self) { [self] in runAtTurnEnd() }
        }
        return true
    }

    private enum Start { case queued, writer, atTurnEnd }

    /// At the end of a loop turn that queued jobs: one batch on this thread, unless a drain already
    /// runs (it takes them). Jobs queued meanwhile go to the writer's thread, so that a loop never
    /// works off other threads' jobs for long.
    private func runAtTurnEnd() {
        let run = state.withLock { state -> Bool in
            if state.active || state.jobs.isEmpty { return false }
            state.active = true
            return true
        }
        guard run, let complete = runNextBatch() else { return }
        complete()
        let more = state.withLock(wake: .all) { state -> Bool in
            if !state.jobs.isEmpty { return true }
            state.active = false
            return false
        }
        if more { writer.run { [self] in drain() } }
    }

    private func drain() {
        while let complete = runNextBatch() { complete() }
    }

    /// Takes and runs the next batch; nil when the queue is empty. The batch is released when this
    /// returns, before its completions run.
    private func runNextBatch() -> (() -> Void)? {
        // Going idle wakes a `close()` waiting for it.
        let batch = state.withLock(wake: .all) { state in
            let batch = Array(state.jobs.prefix(Self.maxBatch))
            state.jobs.removeFirst(batch.count)
            if batch.isEmpty { state.active = false }
            return batch
        }
        return batch.isEmpty ? nil : run(batch)
    }

    /// Refuses new jobs and returns once the queued ones have run. Not on the writer's thread while a
    /// drain runs (it would wait for itself); the last release of the queue may happen there, since
    /// the drain has then ended.
    public func close() {
        // Jobs deferred to a loop turn that will not end any more (the loop stopped) run here.
        let start = state.withLock { state -> Bool in
            state.closed = true
            if state.active || state.jobs.isEmpty { return false }
            state.active = true
            return true
        }
        if start { writer.run { [self] in drain() } }
        _ = state.wait(until: { !$0.active }) { _ in }
    }
}

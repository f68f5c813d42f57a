import Concurrency

/// The queue in front of a group-committing writer, the same for every backend: jobs queue up,
/// the first job of an idle queue starts a drain on the writer's own thread, which takes batches of
/// at most `maxBatch` jobs (those queued meanwhile form the next batch) until the queue is empty.
/// What a batch is (one transaction, the commit) is the writer's `run` (`GroupCommitEngine`); what it
/// returns (the completions) runs after the batch's jobs were released, while newer jobs queue up.
public final class GroupCommitQueue<Job: Sendable>: Sendable {

    /// At most this many jobs share one transaction.
    public static var maxBatch: Int { 256 }

    private struct State {
        var jobs: [Job] = []
        /// A drain is queued or running on `writer`.
        var active = false
        /// Set by `close()`: new jobs are refused.
        var closed = false
    }

    /// `close()` waits on it for the writer to go idle.
    private let state = ConditionLock(State())
    /// The writer's one thread; it exits when the queue is released.
    private let writer = WorkerThreads(count: 1)
    private let run: @Sendable ([Job]) -> () -> Void

    /// `run` receives each batch, in queue order, on the writer's thread, and returns what completes
    /// its jobs; that must not hold on to the jobs (a blocking caller's body must not outlive its call).
    public init(run: @escaping @Sendable ([Job]) -> () -> Void) {
        self.run = run
    }

    /// Queues `job`; false when the queue is closed (the job was not taken).
    public func enqueue(_ job: Job) -> Bool {
        let start = state.withLock { state -> Bool? in
            if state.closed { return nil }
            state.jobs.append(job)
            if state.active { return false }
            state.active = true
            return true
        }
        guard let start else { return false }
        if start { writer.run { [self] in drain() } }
        return true
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
        state.withLock { $0.closed = true }
        _ = state.wait(until: { !$0.active }) { _ in }
    }
}

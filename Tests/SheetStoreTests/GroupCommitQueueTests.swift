import Concurrency
import Foundation
import SQLiteStore
import SheetStore
import Testing

/// The queue's loop-turn mode (`enqueue(_:atTurnEnd:)`): a turn's jobs share one batch, run on the
/// loop's own thread when the turn ends.
@Suite struct GroupCommitQueueTurnTests {
    private struct Batch: Sendable {
        var jobs: [Int]
        var thread: UInt
    }

    private static func recordingQueue() -> (GroupCommitQueue<Int>, Locked<[Batch]>) {
        let batches = Locked<[Batch]>([])
        let queue = GroupCommitQueue<Int> { jobs in
            batches.withLock { $0.append(Batch(jobs: jobs, thread: UInt(pthread_self()))) }
            return {}
        }
        return (queue, batches)
    }

    private static func waitFor(_ count: Int, _ batches: Locked<[Batch]>) -> [Batch] {
        for _ in 0..<5_000 where batches.withLock({ $0.count }) < count { usleep(1_000) }
        return batches.withLock { $0 }
    }

    /// Inside a turn nothing runs until the turn ends; then its jobs run as one batch, in order, on
    /// the turn's thread. Outside a turn the same call runs the job on the writer's thread.
    @Test func aTurnsJobsRunAsOneBatchOnItsThreadWhenItEnds() {
        let (queue, batches) = Self.recordingQueue()
        let loopThread = UInt(pthread_self())
        LoopTurn.run {
            for job in 0..<5 { #expect(queue.enqueue(job, atTurnEnd: true)) }
            usleep(20_000)
            #expect(batches.withLock { $0.isEmpty })
        }
        var seen = batches.withLock { $0 }
        #expect(seen.map(\.jobs) == [[0, 1, 2, 3, 4]])
        #expect(seen.first?.thread == loopThread)

        #expect(queue.enqueue(9, atTurnEnd: true))
        seen = Self.waitFor(2, batches)
        #expect(seen.count == 2)
        #expect(seen.last?.jobs == [9])
        #expect(seen.last?.thread != loopThread)
    }

    /// A job queued without `atTurnEnd` (its caller waits for it on this thread) runs on the writer's
    /// thread during the turn.
    @Test func aWaitedForJobRunsDuringTheTurn() {
        let (queue, batches) = Self.recordingQueue()
        LoopTurn.run {
            #expect(queue.enqueue(1))
            let seen = Self.waitFor(1, batches)
            #expect(seen.map(\.jobs) == [[1]])
        }
        #expect(batches.withLock { $0 }.count == 1)
    }

    /// `close` inside a turn runs the jobs deferred to its end (that turn's end would come too late:
    /// the queue no longer runs anything once closed and idle).
    @Test func closeRunsTheJobsDeferredToATurn() {
        let (queue, batches) = Self.recordingQueue()
        LoopTurn.run {
            #expect(queue.enqueue(7, atTurnEnd: true))
            queue.close()
            #expect(batches.withLock { $0 }.map(\.jobs) == [[7]])
            #expect(!queue.enqueue(8, atTurnEnd: true))
        }
        #expect(batches.withLock { $0 }.map(\.jobs) == [[7]])
    }
}

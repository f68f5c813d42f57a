import Concurrency
import Foundation
import Testing

@Suite struct ConditionLockTests {
    /// A waiter sleeps until another thread makes its condition true, then sees that value.
    @Test func waiterWakesWhenTheConditionBecomesTrue() {
        let lock = ConditionLock(0)
        let seen = Locked<Int?>(nil)
        let thread = Thread {
            let value = lock.wait(until: { $0 >= 3 }) { $0 }
            seen.withLock { $0 = value }
        }
        thread.start()
        for _ in 0..<3 {
            usleep(2_000)
            lock.withLock(wake: .all) { $0 += 1 }
        }
        var spins = 0
        while seen.withLock({ $0 }) == nil && spins < 2_000 {
            usleep(1_000)
            spins += 1
        }
        #expect(seen.withLock { $0 } == 3)
    }

    /// A wait whose condition never holds returns nil after its timeout, without running its body.
    @Test func waitTimesOut() {
        let lock = ConditionLock(false)
        let start = ContinuousClock.now
        let result: Int? = lock.wait(until: { $0 }, timeout: .milliseconds(30)) { _ in 1 }
        #expect(result == nil)
        #expect(ContinuousClock.now - start >= .milliseconds(30))
    }

    /// A condition already true runs the body at once and may change the value.
    @Test func conditionAlreadyTrueRunsAtOnce() {
        let lock = ConditionLock([1, 2])
        let popped = lock.wait(until: { !$0.isEmpty }, timeout: .zero) { $0.removeLast() }
        #expect(popped == 2)
        #expect(lock.withLock { $0 } == [1])
    }
}

@Suite struct TimerHeapTests {
    /// Due timers come out earliest first, ties in scheduling order; later ones stay.
    @Test func dueTimersComeOutInDeadlineOrder() {
        var heap = TimerHeap<String>()
        _ = heap.schedule(at: 30, "c")
        _ = heap.schedule(at: 10, "a")
        _ = heap.schedule(at: 20, "b1")
        _ = heap.schedule(at: 20, "b2")
        _ = heap.schedule(at: 99, "later")
        #expect(heap.nextDeadline() == 10)
        #expect(heap.popDue(now: 30).map(\.action) == ["a", "b1", "b2", "c"])
        #expect(heap.count == 1)
        #expect(heap.nextDeadline() == 99)
        #expect(heap.popDue(now: 98).isEmpty)
    }

    /// A cancelled timer never comes out; cancelling twice, or after it ran, is false.
    @Test func cancelledTimersDoNotRun() {
        var heap = TimerHeap<String>()
        let a = heap.schedule(at: 10, "a")
        let b = heap.schedule(at: 20, "b")
        let first = heap.cancel(a)
        let second = heap.cancel(a)
        #expect(first)
        #expect(!second)
        #expect(heap.nextDeadline() == 20)
        #expect(heap.popDue(now: 100).map(\.action) == ["b"])
        let afterRun = heap.cancel(b)
        #expect(!afterRun)
        #expect(heap.count == 0)
    }

    /// A repeating timer keeps its phase: runs at its deadline plus whole periods, skipping the
    /// periods missed while late instead of running them in a burst, until cancelled.
    @Test func repeatingTimerKeepsItsPhase() {
        var heap = TimerHeap<String>()
        let t = heap.schedule(at: 5, every: 10, "beat")
        #expect(heap.popDue(now: 5).count == 1)
        #expect(heap.nextDeadline() == 15)
        #expect(heap.popDue(now: 14).isEmpty)
        #expect(heap.popDue(now: 47).count == 1)  // late: 15 ran, 25, 35 and 45 are skipped
        #expect(heap.nextDeadline() == 55)
        let cancelled = heap.cancel(t)
        #expect(cancelled)
        #expect(heap.popDue(now: 1_000).isEmpty)
    }

    /// Timers sharing a period get first deadlines spread evenly over it.
    @Test func spreadDividesThePeriod() {
        #expect(TimerThread.spread(0, of: 4, over: .seconds(20)) == .zero)
        #expect(TimerThread.spread(1, of: 4, over: .seconds(20)) == .seconds(5))
        #expect(TimerThread.spread(7, of: 4, over: .seconds(20)) == .seconds(15))
        #expect(TimerThread.spread(3, of: 1, over: .seconds(20)) == .zero)
    }
}

@Suite struct TimerThreadTests {
    /// One-shot timers run once, in deadline order, on the timer thread; a cancelled one never does.
    @Test func timersRunInOrderAndCancelledOnesDoNot() {
        let timers = TimerThread()
        defer { timers.stop() }
        let ran = Locked<[String]>([])
        timers.schedule(after: .milliseconds(40)) { ran.withLock { $0.append("late") } }
        timers.schedule(after: .milliseconds(10)) { ran.withLock { $0.append("early") } }
        let cancelled = timers.schedule(after: .milliseconds(20)) { ran.withLock { $0.append("cancelled") } }
        #expect(timers.cancel(cancelled))
        var spins = 0
        while ran.withLock({ $0.count }) < 2 && spins < 2_000 {
            usleep(1_000)
            spins += 1
        }
        usleep(30_000)
        #expect(ran.withLock { $0 } == ["early", "late"])
        #expect(timers.pending == 0)
    }

    /// A timer scheduled earlier than the one the thread sleeps for runs at its own deadline.
    @Test func earlierTimerWakesTheThread() {
        let timers = TimerThread()
        defer { timers.stop() }
        let ran = Locked<Bool>(false)
        timers.schedule(after: .seconds(30)) {}
        usleep(5_000)  // the thread now sleeps for the 30 s timer
        let start = ContinuousClock.now
        timers.schedule(after: .milliseconds(5)) { ran.withLock { $0 = true } }
        while !ran.withLock({ $0 }) && ContinuousClock.now - start < .seconds(5) { usleep(1_000) }
        #expect(ran.withLock { $0 })
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    /// A repeating timer runs again and again until cancelled.
    @Test func repeatingTimerRunsUntilCancelled() {
        let timers = TimerThread()
        defer { timers.stop() }
        let runs = Locked(0)
        let token = timers.scheduleRepeating(every: .milliseconds(5), firstAfter: .zero) { runs.withLock { $0 += 1 } }
        var spins = 0
        while runs.withLock({ $0 }) < 3 && spins < 2_000 {
            usleep(1_000)
            spins += 1
        }
        #expect(runs.withLock { $0 } >= 3)
        #expect(timers.cancel(token))
        usleep(10_000)
        let after = runs.withLock { $0 }
        usleep(30_000)
        #expect(runs.withLock { $0 } == after)
    }
}

@Suite struct LatchTests {
    /// The waiter gets the value another thread opened the latch with; a later open changes nothing.
    @Test func waiterGetsTheFirstValue() {
        let latch = Latch<Int>()
        let thread = Thread {
            usleep(2_000)
            latch.open(with: 1)
            latch.open(with: 2)
        }
        thread.start()
        #expect(latch.wait() == 1)
        #expect(latch.wait() == 1)
    }
}

@Suite struct ThreadNameTests {
    /// Worker threads carry their pool's name (what `ps -L` and the thread map show), cut to the 15
    /// bytes Linux keeps; the background pool's are named "background".
    @Test func workerThreadsCarryTheirName() {
        let pooled = Latch<String>()
        let background = Latch<String>()
        let pool = WorkerThreads(count: 1, name: "a-very-long-pool-name")
        pool.run { pooled.open(with: currentThreadName()) }
        WorkerThreads.background.run { background.open(with: currentThreadName()) }
        #expect(pooled.wait() == "a-very-long-poo")
        #expect(background.wait() == "background")
        pool.shutDown()
    }
}

import Foundation
import Synchronization
import Testing

@testable import SheetService

/// The change feed's rechecks run on a fixed set of threads: a burst of rechecks that block (on a
/// database read) neither grows the thread count nor, through it, the reader connections (one per
/// thread) and file descriptors of the process.
@Suite struct ChangeFeedTests {
    final class ThreadSet: Sendable {
        let ids = Mutex<Set<UInt>>([])
    }

    final class SlowWatcher: DecisionWatcher {
        let userId: String
        let threads: ThreadSet
        let done: DispatchGroup

        init(userId: String, threads: ThreadSet, done: DispatchGroup) {
            self.userId = userId
            self.threads = threads
            self.done = done
        }

        func recheck() {
            let me = UInt(pthread_self())
            threads.ids.withLock { _ = $0.insert(me) }
            usleep(20_000)  // a slow read
            done.leave()
        }
    }

    /// 200 blocking rechecks, scheduled at once, run on at most `recheckThreads` distinct threads.
    @Test func blockingRechecksRunOnAFixedNumberOfThreads() {
        let feed = ChangeFeed()
        let threads = ThreadSet()
        let done = DispatchGroup()
        let watchers = (0..<200).map { SlowWatcher(userId: "u\($0)", threads: threads, done: done) }
        for watcher in watchers {
            feed.add(watcher)
            done.enter()
        }
        feed.catalogChanged()
        #expect(done.wait(timeout: .now() + 30) == .success)
        let used = threads.ids.withLock { $0.count }
        #expect(used >= 1 && used <= ChangeFeed.recheckThreads, "\(used) threads")
    }
}

import Concurrency
import Foundation
import Testing

@Suite struct LoopTurnTests {
    private final class Owner {}

    /// Outside a turn nothing is deferred: `atEnd` says so and never runs the action.
    @Test func outsideATurnNothingIsRegistered() {
        let ran = Locked(0)
        #expect(!LoopTurn.isOpen)
        #expect(!LoopTurn.atEnd(of: Owner()) { ran.withLock { $0 += 1 } })
        LoopTurn.run {}
        #expect(ran.withLock { $0 } == 0)
    }

    /// Inside a turn the action runs once the turn's body returned, once per owner however often the
    /// owner asked, in the order the owners first asked; the turn is closed while they run.
    @Test func actionsRunAfterTheBodyOncePerOwner() {
        let log = Locked<[String]>([])
        let first = Owner(), second = Owner()
        LoopTurn.run {
            #expect(LoopTurn.isOpen)
            for _ in 0..<3 {
                #expect(LoopTurn.atEnd(of: first) { log.withLock { $0.append("first open=\(LoopTurn.isOpen)") } })
            }
            #expect(LoopTurn.atEnd(of: second) { log.withLock { $0.append("second") } })
            log.withLock { $0.append("body") }
        }
        #expect(log.withLock { $0 } == ["body", "first open=false", "second"])
        // The next turn starts empty.
        LoopTurn.run {}
        #expect(log.withLock { $0 }.count == 3)
    }

    /// A turn belongs to its thread: another thread is not inside it.
    @Test func aTurnIsPerThread() {
        let otherSawOpen = Locked<Bool?>(nil)
        LoopTurn.run {
            let thread = Thread { otherSawOpen.withLock { $0 = LoopTurn.isOpen } }
            thread.start()
            while otherSawOpen.withLock({ $0 }) == nil { usleep(1_000) }
        }
        #expect(otherSawOpen.withLock { $0 } == false)
    }
}

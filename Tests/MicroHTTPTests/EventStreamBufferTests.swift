import Testing

@testable import MicroHTTP

/// What an event stream holds for a reader that reads, but slower than events come: only what MHD has
/// not taken, never more than its cap, and never more than the server's budget for all streams.
@Suite struct EventStreamBufferTests {
    /// Reads `max` bytes the way MHD's reader callback does; the count handed over.
    private func read(_ stream: EventStream, max: Int) -> Int {
        var buffer = [CChar](repeating: 0, count: max)
        return buffer.withUnsafeMutableBufferPointer { stream.read(into: $0.baseAddress!, max: max) }
    }

    /// A reader that takes most of each event but never quite catches up: the stream keeps what it has
    /// not taken, not every byte already sent, and is cut once that passes its cap.
    @Test func aSlowButReadingClientHoldsOnlyItsBacklog() {
        let budget = StreamBufferBudget(limit: 64 * 1024 * 1024)
        let stream = EventStream(maxPendingBytes: 256 * 1024, registry: nil, monitor: nil, budget: budget)
        let event = [UInt8](repeating: 0x61, count: 4096)
        var sentEvents = 0
        var largestHeld = 0
        while stream.send(event) {
            sentEvents += 1
            // Reads 4 000 of every 4 096 bytes: the backlog grows by 96 bytes an event.
            _ = read(stream, max: 4000)
            largestHeld = max(largestHeld, stream.heldBytes)
            #expect(budget.usedBytes == stream.bufferedBytes)
            if sentEvents > 100_000 { break }
        }
        #expect(sentEvents < 100_000, "the stream was never cut")
        // 256 KiB of backlog at 96 bytes an event: cut after about 2 700 events, about 11 MB sent.
        #expect(sentEvents > 2000)
        #expect(largestHeld <= 256 * 1024, "held \(largestHeld) bytes")
        #expect(!stream.isOpen)
        // A cut stream gives everything back.
        #expect(budget.usedBytes == 0)
    }

    /// The budget of all streams together: a stream whose next bytes would go over it is cut, and the
    /// bytes it held go back, so other streams can buffer again.
    @Test func theServerBudgetCutsTheStreamThatWouldGoOver() {
        let budget = StreamBufferBudget(limit: 100_000)
        let first = EventStream(maxPendingBytes: 256 * 1024, registry: nil, monitor: nil, budget: budget)
        let second = EventStream(maxPendingBytes: 256 * 1024, registry: nil, monitor: nil, budget: budget)
        let event = [UInt8](repeating: 0x62, count: 30_000)
        #expect(first.send(event))
        #expect(first.send(event))
        #expect(second.send(event))
        #expect(budget.usedBytes == 90_000)
        #expect(!second.send(event), "over the budget")
        #expect(!second.isOpen)
        #expect(budget.usedBytes == 60_000)
        #expect(budget.refusedStreams == 1)
        // What the reader takes goes back to the budget.
        #expect(read(first, max: 50_000) == 50_000)
        #expect(budget.usedBytes == 10_000)
        #expect(first.send(event))
        #expect(budget.usedBytes == 40_000)
    }

    /// A cut stream's reader ends the body with an error, and notes that MHD's warning about it is expected.
    @Test func aCutStreamsReaderNotesTheExpectedClose() {
        let stream = EventStream(maxPendingBytes: 1024, registry: nil, monitor: nil)
        #expect(!stream.send([UInt8](repeating: 0, count: 2048)))
        _ = read(stream, max: 100)
        #expect(ExpectedConnectionClose.take(for: ExpectedConnectionClose.daemonMessage + ".") == .readerTooSlow)
        // Taken once: another message on this thread is not excused.
        #expect(ExpectedConnectionClose.take(for: ExpectedConnectionClose.daemonMessage) == nil)
    }
}

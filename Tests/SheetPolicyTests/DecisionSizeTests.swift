import SheetPolicy
import SheetWire
import Testing

/// A decision's size is bounded by the catalog's caps: the per-screen cap (100 sheets), the stack
/// depth (32) and the trace's line cap keep every decision, and every stream event, well under a
/// stream's 256 KiB buffer.
@Suite struct DecisionSizeTests {
    /// The largest decision the default limits allow: 100 card sheets with cards on one screen (ids of
    /// 128 characters, every one yielding to the stack) under a stack 32 deep of 128-character ids.
    @Test func theLargestDecisionFitsAStreamsBufferTwice() {
        func id(_ prefix: String, _ i: Int) -> String {
            let head = "\(prefix)\(i)-"
            return head + String(repeating: "x", count: 128 - head.count)
        }
        var sheets: [SheetDefinition] = []
        var containers: [ContainerKey: ContainerCount] = [:]
        for i in 0..<100 {
            let container = id("container", i)
            sheets.append(
                SheetDefinition(id: id("card", i), kind: .cards, title: String(repeating: "T", count: 128), screen: "home", containerId: container))
            containers[ContainerKey(containerId: container)] = ContainerCount(count: 5)
        }
        var stack = [StackEntry(sheetId: id("card", 0), mode: .push)]
        for i in 1..<32 {
            sheets.append(
                SheetDefinition(
                    id: id("nested", i), kind: .informational, size: .large, title: String(repeating: "N", count: 128), screen: "elsewhere"))
            stack.append(StackEntry(sheetId: id("nested", i), mode: .push))
        }
        let decision = SheetPolicy.decide(
            catalog: Catalog(sheets), state: UserState(containers: containers, stack: stack),
            context: ClientContext(screen: "home", platform: .ios), now: Timestamp(secondsSince1970: 1_800_000_000))
        #expect(decision.present)
        #expect(decision.stack.count == 32)
        #expect(decision.yielded.count == 99)
        #expect(decision.trace.count <= Decision.maximumTraceLines)
        let bytes = decision.jsonBytes().count
        #expect(bytes < 128 * 1024, "\(bytes) bytes")
    }

    /// A trace longer than the cap keeps its first lines and says how many more there were.
    @Test func longTracesAreCut() {
        let lines = (0..<300).map { "line \($0)" }
        let decision = Decision(present: false, reason: .noCards, stack: [], yielded: [], trace: lines)
        #expect(decision.trace.count == Decision.maximumTraceLines)
        #expect(decision.trace[0] == "line 0")
        #expect(decision.trace.last == "trace: \(300 - Decision.maximumTraceLines + 1) more lines not shown")
        let short = Decision(present: false, reason: .noCards, stack: [], yielded: [], trace: ["a", "b"])
        #expect(short.trace == ["a", "b"])
    }
}

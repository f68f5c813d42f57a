import Testing

@testable import MicroHTTP

/// The request lifecycle, one fact at a time, without a socket.
@Suite struct RequestStateMachineTests {
    func machine(maxBody: Int = 10, maxQuery: Int = 4) -> RequestStateMachine {
        RequestStateMachine(maxBodyBytes: maxBody, maxQueryArguments: maxQuery)
    }

    /// An acceptable head waits for the body; the end of the body dispatches; a complete answer is sent.
    @Test func acceptableRequestIsDispatchedThenSent() {
        var m = machine()
        guard case .continue = m.headReceived(.acceptable) else { Issue.record("head"); return }
        #expect(m.state == .receivingBody)
        guard case .appendBody = m.bodyReceived(count: 4) else { Issue.record("body"); return }
        guard case .dispatch = m.calledWithoutData() else { Issue.record("dispatch"); return }
        #expect(m.state == .dispatching)
        guard case .send = m.handlerReturned(deferred: false) else { Issue.record("send"); return }
        #expect(m.state == .responded)
    }

    /// Malformed framing is refused at once with a 400 that closes the connection.
    @Test func malformedHeadIsRejectedAndCloses() {
        var m = machine()
        guard case .reject(let problem, let close) = m.headReceived(.malformed(detail: "folded")) else {
            Issue.record("expected a rejection"); return
        }
        #expect(problem.status == 400)
        #expect(problem.detail == "folded")
        #expect(close)
        #expect(m.state == .responded)
    }

    /// Too many query arguments are a 400 naming the limit, on a connection that stays open.
    @Test func tooManyQueryArgumentsNameTheLimit() {
        var m = machine(maxQuery: 4)
        guard case .reject(let problem, let close) = m.headReceived(.tooManyQueryArguments(count: 9)) else {
            Issue.record("expected a rejection"); return
        }
        #expect(problem.status == 400)
        #expect(problem.detail.contains("at most 4"))
        #expect(!close)
    }

    /// An announced oversize body is a 413 before any byte of it is read.
    @Test func announcedOversizeBodyIs413() {
        var m = machine()
        guard case .reject(let problem, _) = m.headReceived(.announcedBodyTooLarge) else { Issue.record("reject"); return }
        #expect(problem.status == 413)
    }

    /// A head that leaves too little connection memory for the answer is a 431 that closes.
    @Test func headOverTheMemoryBudgetIs431AndCloses() {
        var m = machine()
        guard case .reject(let problem, let close) = m.headReceived(.headTooLarge(memory: 10240, reserve: 1024)) else {
            Issue.record("reject")
            return
        }
        #expect(problem.status == 431)
        #expect(problem.slug == "header-too-large")
        #expect(problem.detail.contains("10240"))
        #expect(close)
        #expect(m.state == .responded)
    }

    /// A body growing over the cap drops what was kept, is discarded to its end, then answered 413.
    @Test func bodyOverTheCapIsDiscardedThen413() {
        var m = machine(maxBody: 10)
        _ = m.headReceived(.acceptable)
        guard case .appendBody = m.bodyReceived(count: 8) else { Issue.record("append"); return }
        guard case .discardBody = m.bodyReceived(count: 8) else { Issue.record("discard"); return }
        #expect(m.state == .discardingBody)
        guard case .continue = m.bodyReceived(count: 100) else { Issue.record("continue"); return }
        guard case .reject(let problem, _) = m.calledWithoutData() else { Issue.record("413"); return }
        #expect(problem.status == 413)
    }

    /// A body that goes on far past the cap aborts the connection.
    @Test func endlessBodyAborts() {
        var m = machine(maxBody: 10)
        _ = m.headReceived(.acceptable)
        _ = m.bodyReceived(count: 11)
        guard case .abort = m.bodyReceived(count: m.discardLimit) else { Issue.record("abort"); return }
    }

    /// A deferred answer parks; a spurious call while parked waits; the resume after settling sends.
    @Test func deferredAnswerParksThenResumes() {
        var m = machine()
        _ = m.headReceived(.acceptable)
        _ = m.calledWithoutData()
        guard case .suspend = m.handlerReturned(deferred: true) else { Issue.record("suspend"); return }
        #expect(m.state == .parked)
        guard case .resume = m.calledWithoutData() else { Issue.record("resume"); return }
        guard case .continue = m.resumed(settled: false) else { Issue.record("spurious"); return }
        #expect(m.state == .parked)
        guard case .send = m.resumed(settled: true) else { Issue.record("send"); return }
        #expect(m.state == .responded)
    }

    /// A stream answer moves to `streaming`, where MHD's later calls do nothing.
    @Test func streamAnswerStaysStreaming() {
        var m = machine()
        _ = m.headReceived(.acceptable)
        _ = m.calledWithoutData()
        guard case .send = m.handlerReturned(deferred: false) else { Issue.record("send"); return }
        m.streamQueued()
        #expect(m.state == .streaming)
        guard case .continue = m.calledWithoutData() else { Issue.record("call while streaming"); return }
        #expect(m.state == .streaming)
    }

    /// Calls after the answer do nothing.
    @Test func callsAfterTheAnswerDoNothing() {
        var m = machine()
        _ = m.headReceived(.malformed(detail: "x"))
        guard case .continue = m.calledWithoutData() else { Issue.record("after"); return }
        guard case .continue = m.bodyReceived(count: 3) else { Issue.record("body after"); return }
        guard case .continue = m.headReceived(.acceptable) else { Issue.record("head after"); return }
        #expect(m.state == .responded)
    }
}

/// Problem types are defined once.
@Suite struct ProblemTypeTests {
    /// Every type has one slug, one status and one title, and the factories use them.
    @Test func everyTypeHasOneTitle() {
        var titles: [String: String] = [:]
        for type in ProblemType.all {
            #expect(titles[type.slug] == nil, "\(type.slug) defined twice")
            titles[type.slug] = type.title
        }
        #expect(Problem.notFound("x").title == ProblemType.notFound.title)
        #expect(Problem.badRequest("x").title == ProblemType.badRequest.title)
        #expect(Problem.methodNotAllowed("x", allow: "GET").title == ProblemType.methodNotAllowed.title)
        #expect(Problem.payloadTooLarge(limit: 1).title == ProblemType.payloadTooLarge.title)
        #expect(Problem.internalError().title == ProblemType.internalError.title)
        #expect(Problem.unavailable("x").title == ProblemType.unavailable.title)
    }
}

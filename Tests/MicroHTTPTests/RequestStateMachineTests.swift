import Testing

@testable import MicroHTTP

/// The request lifecycle, one fact at a time, without a socket.
@Suite struct RequestStateMachineTests {
    func machine(maxBody: Int = 10, maxQuery: Int = 4) -> RequestStateMachine {
        RequestStateMachine(maxBodyBytes: maxBody, maxQueryArguments: maxQuery)
    }

    let labels = RequestStateMachine.Labels(template: "/x", slot: HTTPMetrics().unmatched, requestId: "r-1")

    func bytes(_ count: Int) -> [UInt8] { Array(repeating: 7, count: count) }

    func promise() -> ResponsePromise { ResponsePromise(template: "/x", requestId: "r-1", registry: ParkedRequests()) }

    /// An acceptable head waits for the body; the end of the body dispatches; a complete answer is sent.
    @Test func acceptableRequestIsDispatchedThenSent() {
        var m = machine()
        guard case .continue = m.headReceived(.acceptable) else { Issue.record("head"); return }
        #expect(m.phase == .receivingBody)
        guard case .continue = bytes(4).withUnsafeBytes({ m.bodyReceived($0) }) else { Issue.record("body"); return }
        guard case .continue = [UInt8]([1, 2]).withUnsafeBytes({ m.bodyReceived($0) }) else { Issue.record("body"); return }
        guard case .dispatch(let body) = m.calledWithoutData() else { Issue.record("dispatch"); return }
        #expect(body == bytes(4) + [1, 2])
        #expect(m.phase == .dispatching)
        guard case .send(let response, let sentLabels) = m.handlerAnswered(.empty(204), labels) else { Issue.record("send"); return }
        #expect(response.status == 204)
        #expect(sentLabels.requestId == "r-1")
        #expect(m.phase == .responded)
        #expect(m.answeredRequestId == "r-1")
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
        #expect(m.phase == .rejecting)
        #expect(m.answeredRequestId == nil)
        guard case .send(let response, _) = m.rejectionLabeled(problem.response, labels) else { Issue.record("send"); return }
        #expect(response.status == 400)
        #expect(m.phase == .responded)
        #expect(m.answeredRequestId == "r-1")
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
        #expect(m.phase == .rejecting)
    }

    /// A body growing over the cap drops what was kept, is discarded to its end, then answered 413.
    @Test func bodyOverTheCapIsDiscardedThen413() {
        var m = machine(maxBody: 10)
        guard case .continue = m.headReceived(.acceptable) else { Issue.record("head"); return }
        guard case .continue = bytes(8).withUnsafeBytes({ m.bodyReceived($0) }) else { Issue.record("append"); return }
        #expect(m.phase == .receivingBody)
        guard case .continue = bytes(8).withUnsafeBytes({ m.bodyReceived($0) }) else { Issue.record("discard"); return }
        #expect(m.phase == .discardingBody)
        guard case .continue = bytes(100).withUnsafeBytes({ m.bodyReceived($0) }) else { Issue.record("continue"); return }
        guard case .reject(let problem, let close) = m.calledWithoutData() else { Issue.record("413"); return }
        #expect(problem.status == 413)
        #expect(!close)
    }

    /// A body that goes on far past the cap aborts the connection.
    @Test func endlessBodyAborts() {
        var m = machine(maxBody: 10)
        guard case .continue = m.headReceived(.acceptable) else { Issue.record("head"); return }
        guard case .continue = bytes(11).withUnsafeBytes({ m.bodyReceived($0) }) else { Issue.record("discard"); return }
        guard case .abort(let seen) = bytes(m.discardLimit).withUnsafeBytes({ m.bodyReceived($0) }) else {
            Issue.record("abort")
            return
        }
        #expect(seen == 11 + m.discardLimit)
    }

    /// A deferred answer parks with its promise; a spurious call while parked waits; the resume after
    /// settling sends, labeled as the handler's answer.
    @Test func deferredAnswerParksThenResumes() {
        var m = machine()
        guard case .continue = m.headReceived(.acceptable) else { Issue.record("head"); return }
        guard case .dispatch = m.calledWithoutData() else { Issue.record("dispatch"); return }
        let p = promise()
        guard case .park(let parked) = m.handlerDeferred(p, labels) else { Issue.record("park"); return }
        #expect(parked === p)
        #expect(m.phase == .parked)
        guard case .checkSettled(let checked) = m.calledWithoutData() else { Issue.record("resume"); return }
        #expect(checked === p)
        guard case .continue = m.promiseChecked(nil) else { Issue.record("spurious"); return }
        #expect(m.phase == .parked)
        guard case .send(let response, let sentLabels) = m.promiseChecked(.empty(201)) else { Issue.record("send"); return }
        #expect(response.status == 201)
        #expect(sentLabels.template == "/x")
        #expect(m.phase == .responded)
    }

    /// A stream answer is queued as a stream, then `streaming`, where MHD's later calls do nothing;
    /// completion hands the stream back to be told.
    @Test func streamAnswerStaysStreaming() {
        var m = machine()
        guard case .continue = m.headReceived(.acceptable) else { Issue.record("head"); return }
        guard case .dispatch = m.calledWithoutData() else { Issue.record("dispatch"); return }
        let answer = HTTPResponse.stream(headers: [], maxPendingBytes: 64) { _ in }
        guard case .stream = m.handlerAnswered(answer, labels) else { Issue.record("stream"); return }
        let stream = EventStream(maxPendingBytes: 64, registry: nil, monitor: nil)
        m.streamQueued(stream)
        #expect(m.phase == .streaming)
        guard case .continue = m.calledWithoutData() else { Issue.record("call while streaming"); return }
        #expect(m.phase == .streaming)
        #expect(m.answeredRequestId == "r-1")
        #expect(m.completed() === stream)
    }

    /// A machine that did not stream has nothing to tell at completion.
    @Test func completionWithoutStreamTellsNothing() {
        var m = machine()
        guard case .continue = m.headReceived(.acceptable) else { Issue.record("head"); return }
        #expect(m.completed() == nil)
    }

    /// Calls after the answer do nothing.
    @Test func callsAfterTheAnswerDoNothing() {
        var m = machine()
        guard case .reject(let problem, _) = m.headReceived(.malformed(detail: "x")) else { Issue.record("reject"); return }
        guard case .send = m.rejectionLabeled(problem.response, labels) else { Issue.record("send"); return }
        guard case .continue = m.calledWithoutData() else { Issue.record("after"); return }
        guard case .continue = bytes(3).withUnsafeBytes({ m.bodyReceived($0) }) else { Issue.record("body after"); return }
        guard case .continue = m.headReceived(.acceptable) else { Issue.record("head after"); return }
        guard case .continue = m.handlerAnswered(.empty(200), labels) else { Issue.record("answer after"); return }
        guard case .continue = m.rejectionLabeled(problem.response, labels) else { Issue.record("second rejection"); return }
        #expect(m.phase == .responded)
    }

    // MARK: - Answers past libmicrohttpd (stalled bodies, answers that did not fit)

    /// A request waiting for the body its head announced is watched once; one without a body never.
    @Test func onlyAnAnnouncedBodyIsWatchedAndOnlyOnce() {
        var without = machine()
        _ = without.headReceived(.acceptable)
        let watch1 = without.startStallWatch()
        #expect(!watch1)
        var with = machine()
        _ = with.headReceived(.acceptable, announcesBody: true)
        #expect(with.announcesBody)
        let watch2 = with.startStallWatch()
        #expect(watch2)
        let watch3 = with.startStallWatch()
        #expect(!watch3)
        guard case .dispatch = with.calledWithoutData() else { Issue.record("dispatch"); return }
        var late = machine()
        _ = late.headReceived(.acceptable, announcesBody: true)
        _ = late.calledWithoutData()
        let watch4 = late.startStallWatch()
        #expect(!watch4, "no longer waiting for a body")
    }

    /// Two looks in a row without a call, with bytes unread, make a stalled body: a 431 on the socket,
    /// which is shut down; the machine then ignores every further call.
    @Test func aBodyWithoutProgressOverTwoLooksIsAnswered431OnTheSocket() {
        var m = machine()
        _ = m.headReceived(.acceptable, announcesBody: true)
        let watch5 = m.startStallWatch()
        #expect(watch5)
        guard case .continue = m.stallChecked(bytesUnread: true) else { Issue.record("first strike answers"); return }
        guard case .answerOnSocket(let problem, let requestId, let reason) = m.stallChecked(bytesUnread: true) else {
            Issue.record("expected the stalled answer")
            return
        }
        #expect(problem.status == 431)
        #expect(problem.slug == "header-too-large")
        #expect(problem.detail.contains("10240"))
        #expect(requestId == nil)
        #expect(reason == .bodyStalled)
        #expect(m.phase == .answeredOnSocket)
        #expect(!m.awaitsBody)
        guard case .continue = m.calledWithoutData() else { Issue.record("no dispatch after the 431"); return }
        guard case .continue = m.stallChecked(bytesUnread: true) else { Issue.record("answered twice"); return }
        #expect(m.completed() == nil)
        #expect(m.phase == .finished)
    }

    /// Progress (a call) or an empty socket between looks resets the count: a slow body is no stall.
    @Test func progressOrNothingUnreadIsNoStall() {
        var m = machine()
        _ = m.headReceived(.acceptable, announcesBody: true)
        let watch6 = m.startStallWatch()
        #expect(watch6)
        for _ in 0..<5 {
            guard case .continue = m.stallChecked(bytesUnread: true) else { Issue.record("stalled despite progress"); return }
            guard case .continue = bytes(1).withUnsafeBytes({ m.bodyReceived($0) }) else { Issue.record("body"); return }
        }
        for _ in 0..<5 {
            guard case .continue = m.stallChecked(bytesUnread: false) else { Issue.record("stalled with nothing unread"); return }
        }
        guard case .dispatch(let body) = m.calledWithoutData() else { Issue.record("dispatch"); return }
        #expect(body == bytes(5))
        guard case .continue = m.stallChecked(bytesUnread: true) else { Issue.record("looked after the body ended"); return }
    }

    /// A body being discarded (over the cap) can stall too.
    @Test func aDiscardedBodyCanStall() {
        var m = machine(maxBody: 2)
        _ = m.headReceived(.acceptable, announcesBody: true)
        _ = bytes(5).withUnsafeBytes { m.bodyReceived($0) }
        #expect(m.phase == .discardingBody)
        let watch7 = m.startStallWatch()
        #expect(watch7)
        _ = m.stallChecked(bytesUnread: true)
        guard case .answerOnSocket(_, _, .bodyStalled) = m.stallChecked(bytesUnread: true) else { Issue.record("stall"); return }
    }

    /// An answer MHD could not send is replaced by a 431 under the answer's request id, without
    /// shutting the socket down (MHD closes it); only once, and only after an answer was queued.
    @Test func anAnswerNotSentBecomesA431UnderItsRequestId() {
        var early = machine()
        _ = early.headReceived(.acceptable)
        guard case .continue = early.answerNotSent() else { Issue.record("nothing was queued yet"); return }
        #expect(early.phase == .receivingBody)

        var m = machine(maxBody: 10)
        _ = m.headReceived(.acceptable)
        _ = m.calledWithoutData()
        _ = m.handlerAnswered(.empty(200), labels)
        guard case .answerOnSocket(let problem, let requestId, let reason) = m.answerNotSent() else {
            Issue.record("expected the 431")
            return
        }
        #expect(problem.status == 431)
        #expect(requestId == "r-1")
        #expect(reason == .answerDidNotFit)
        #expect(m.answeredRequestId == "r-1")
        guard case .continue = m.answerNotSent() else { Issue.record("answered twice"); return }
        #expect(m.completed() == nil)
    }

    /// A stream whose answer MHD could not send still hands its stream back at completion.
    @Test func aStreamNotSentIsStillToldOfTheCompletion() {
        var m = machine()
        _ = m.headReceived(.acceptable)
        _ = m.calledWithoutData()
        _ = m.handlerAnswered(.stream(headers: [], maxPendingBytes: 64) { _ in }, labels)
        let stream = EventStream(maxPendingBytes: 64, registry: nil, monitor: nil)
        m.streamQueued(stream)
        guard case .answerOnSocket(_, "r-1", .answerDidNotFit) = m.answerNotSent() else { Issue.record("431"); return }
        #expect(m.completed() === stream)
        #expect(m.phase == .finished)
    }

    /// Every call counts as progress, whatever the state.
    @Test func callsAreCounted() {
        var m = machine()
        _ = m.headReceived(.acceptable, announcesBody: true)
        _ = bytes(2).withUnsafeBytes { m.bodyReceived($0) }
        _ = m.calledWithoutData()
        _ = m.calledWithoutData()
        #expect(m.calls == 4)
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

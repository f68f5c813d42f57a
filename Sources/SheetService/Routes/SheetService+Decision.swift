import Concurrency
import Crypto
import JSONKit
import MicroHTTP
import SheetPolicy
import SheetStore
import SheetWire
import Synchronization

/// The decision, the support view of a user's state, and erasing it.
extension SheetService {
    /// `GET /v1/users/{userId}/decision`: from the service's decision source (`DecisionSource`, one
    /// path for every backend); with `Prefer: wait` and a matching `If-None-Match`, a long-poll.
    func decision(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorizeUser(request)
        let context = try DecisionQuery.context(from: request)
        let condition = request.header("If-None-Match")
        guard let wait = PreferWait.seconds(request.header("Prefer")) else {
            return try decisionSource.respond(userId: userId, context: context, condition: condition, in: self)
        }
        let answer = try currentAnswer(userId: userId, context: context).answer
        if let condition, EntityTag.matches(condition, answer.etag) {
            return try longPoll(userId: userId, context: context, answer: answer, waitSeconds: wait)
        }
        return Self.decisionResponse(answer)
    }

    /// The 200 answer, or the 304 when `condition` (If-None-Match) matches its tag.
    static func decisionResponse(_ answer: DecisionCache.Answer, condition: String?) -> HTTPResponse {
        if let condition, EntityTag.matches(condition, answer.etag) { return notModified(answer) }
        return decisionResponse(answer)
    }

    /// The decision for this user and context, exact (see `DecisionSource.currentAnswer`).
    func currentAnswer(userId: String, context: ClientContext) throws(Problem) -> DecisionCache.Fresh {
        try decisionSource.currentAnswer(userId: userId, context: context, in: self)
    }

    /// The decision's JSON for this catalog, state and context at the service's clock, with its next
    /// time boundary (both store paths compute it here).
    /// A catalog without experiments takes no experiment work at all (no assigner, no hashing).
    func decide(userId: String, catalog: Catalog, state: UserState, context: ClientContext) -> (body: [UInt8], validUntil: Timestamp?) {
        let now = clock()
        guard catalog.hasExperiments else {
            let decision = SheetPolicy.decide(catalog: catalog, state: state, context: context, now: now)
            return (decision.jsonBytes(), decision.validUntil)
        }
        let assigner = ExperimentAssigner(userId: userId, hashPrefix: { SHA256.bigEndianPrefix(of: $0) })
        let decision = SheetPolicy.decide(catalog: catalog, state: state, context: context, now: now, experiments: assigner)
        if !decision.exposures.isEmpty { experimentRecorder.expose(userId: userId, decision.exposures, at: now, store: store) }
        return (decision.jsonBytes(), decision.validUntil)
    }

    /// Interns and caches a computed decision (until its time boundary) and returns it.
    func remember(
        userId: String, context: ClientContext, catalogVersion: Int, epoch: Int, storeVersion: Int64?,
        decision: (body: [UInt8], validUntil: Timestamp?)
    ) -> DecisionCache.Fresh {
        let answer = decisions.answer(userId: userId, body: decision.body, etag: Self.entityTag)
        decisions.insert(
            userId: userId, context: context, catalogVersion: catalogVersion, epoch: epoch, storeVersion: storeVersion,
            answer: answer, validUntil: decision.validUntil)
        return DecisionCache.Fresh(answer: answer, validUntil: decision.validUntil)
    }

    /// Strong validator over the exact bytes: an event that leaves the decision unchanged leaves the tag.
    /// The first 16 bytes of the body's SHA-256, in hex, quoted.
    static func entityTag(_ body: [UInt8]) -> String { SHA256.quotedHexPrefix(of: body, length: 16) }

    /// The 200 answer of the decision route.
    static func decisionResponse(_ answer: DecisionCache.Answer, extraHeaders: [(String, String)] = []) -> HTTPResponse {
        // One header array (not `.json(headers:)`, which concatenates two): this is the hottest route.
        var headers = [("Content-Type", "application/json"), ("ETag", answer.etag), ("Cache-Control", "no-cache")]
        if !extraHeaders.isEmpty { headers += extraHeaders }
        return HTTPResponse(status: 200, headers: headers, body: answer.body)
    }

    /// The 304 answer of the decision route (its Content-Length is the 200's, never 0).
    static func notModified(_ answer: DecisionCache.Answer, extraHeaders: [(String, String)] = []) -> HTTPResponse {
        .notModified(headers: [("ETag", answer.etag), ("Cache-Control", "no-cache")] + extraHeaders, representation: answer.body)
    }

    /// Holds the request until the decision differs from the one the client holds or `waitSeconds` pass,
    /// or its client goes away. A user has at most `longPolls.maxPerUser` waiting (429 beyond).
    private func longPoll(
        userId: String, context: ClientContext, answer held: DecisionCache.Answer, waitSeconds: Int
    ) throws(Problem)
        -> HTTPResponse
    {
        do {
            try longPolls.reserve(userId)
        } catch {
            throw Problems.tooManyRequests(
                "user '\(userId)' already has \(longPolls.maxPerUser) long-polls waiting (Prefer: wait); let one answer first",
                retryAfterSeconds: 5)
        }
        return .deferred { [self] promise in
            let poll = LongPoll(
                userId: userId, context: context, held: held, waitSeconds: waitSeconds, promise: promise,
                answer: { [self] in try? currentAnswer(userId: $0, context: $1) },
                done: { [self] in
                    feed.remove($0)
                    longPolls.remove($0)
                }, clock: clock, wake: { [feed] in feed.schedule($0) })
            guard longPolls.add(poll) else {
                longPolls.release(userId)
                return poll.expire()
            }
            promise.onPeerClosed { [weak poll] in poll?.clientClosed() }
            feed.add(poll)
            // A change committed between the answer above and the registration: look once more.
            feed.schedule(poll)
        }
    }

    func userState(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorizeUser(request)
        let state = try storage { () throws(StoreError) in try store.userState(userId: userId) }
        var w = JSONWriter()
        w.object { o in
            o.member("userId", userId)
            o.arrayMember("containers") { items in
                for key in state.containers.keys.sorted() {
                    let value = state.containers[key]!
                    items.object { c in
                        c.member("containerId", key.containerId)
                        c.member("filter", key.filter)
                        c.member("count", value.count)
                        c.member("seq", value.seq)
                    }
                }
            }
            o.arrayMember("latches") { items in
                for sheetId in state.latches.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                    items.object { l in
                        l.member("sheetId", sheetId)
                        l.member("count", state.latches[sheetId]!)
                    }
                }
            }
            o.arrayMember("stack") { items in
                for entry in state.stack {
                    items.object { e in
                        e.member("sheetId", entry.sheetId)
                        e.member("mode", entry.mode.rawValue)
                    }
                }
            }
            o.arrayMember("contentHeights") { items in
                for key in state.contentHeights.keys.sorted() {
                    items.object { h in
                        h.member("sheetId", key.sheetId)
                        h.member("platform", key.platform.rawValue)
                        h.member("height", state.contentHeights[key]!)
                    }
                }
            }
            Self.writeCampaignFacts(state.campaign, to: &o)
        }
        return .json(200, w.bytes)
    }

    func deleteUser(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorizeUser(request)
        defer {
            decisions.freshness.userStateWritten(userId)
            feed.userChanged(userId)
        }
        try storage { () throws(StoreError) in try store.deleteUser(userId: userId) }
        return .empty(204)
    }
}

import MicroHTTP
import SheetPolicy

/// `GET /v1/users/{userId}/decision` (and `/v1/me/decision`): the hottest route. From the decision source (`DecisionSource`,
/// one path for every backend); with `Prefer: wait` and a matching `If-None-Match`, a long-poll;
/// with `Prefer: return=minimal`, the body without `sheet` and `trace` (`DecisionResponse`).
struct DecisionController: RouteController {
    let authorization: RequestAuthorization
    let engine: DecisionEngine
    let longPolls: LongPolls
    let feed: ChangeFeed

    func register(on router: Router) {
        router.addUserRoute(.GET, "/decision") { [self] in try decision($0) }
    }

    func decision(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let context = try DecisionQuery.context(from: request)
        let condition = request.header("If-None-Match")
        let prefer = request.header("Prefer")
        let form = DecisionForm(prefer: prefer)
        guard let wait = PreferWait.seconds(prefer) else {
            return try engine.respond(userId: userId, clientContext: context, condition: condition, form: form)
        }
        let answer = engine.answer(try engine.currentAnswer(userId: userId, context: context).answer, as: form)
        if let condition, EntityTag.matchesEitherEncoding(condition, answer.etag) {
            return try longPoll(userId: userId, context: context, answer: answer, form: form, waitSeconds: wait)
        }
        return DecisionResponse.ok(answer, form: form)
    }

    /// Holds the request until the decision differs from the one the client holds or `waitSeconds` pass,
    /// or its client goes away. A user has at most `longPolls.maxPerUser` waiting (429 beyond).
    private func longPoll(
        userId: String, context: ClientContext, answer held: DecisionCache.Answer, form: DecisionForm, waitSeconds: Int
    ) throws(Problem) -> HTTPResponse {
        do {
            try longPolls.reserve(userId)
        } catch {
            throw Problems.tooManyRequests(
                "user '\(userId)' already has \(longPolls.maxPerUser) long-polls waiting (Prefer: wait); let one answer first",
                retryAfterSeconds: 5)
        }
        let engine = self.engine, feed = self.feed, longPolls = self.longPolls
        return .deferred { promise in
            let poll = LongPoll(
                userId: userId, context: context, held: held, form: form, waitSeconds: waitSeconds, promise: promise,
                answer: { userId, context in
                    (try? engine.currentAnswer(userId: userId, context: context)).map {
                        DecisionCache.Fresh(answer: engine.answer($0.answer, as: form), validUntil: $0.validUntil)
                    }
                },
                done: {
                    feed.remove($0)
                    longPolls.remove($0)
                }, clock: engine.clock, wake: { feed.schedule($0) })
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
}

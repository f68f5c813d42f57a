import MicroHTTP
import SheetPolicy

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `GET /v1/users/{userId}/decision/stream` (and `/v1/me/decision/stream`): the decision as Server-Sent Events, pushed when it changes.
struct StreamsController: RouteController {
    let authorization: RequestAuthorization
    let engine: DecisionEngine
    let streams: DecisionStreams
    let feed: ChangeFeed
    let draining: Draining

    func register(on router: Router) {
        router.addUserRoute(.GET, "/decision/stream") { [self] in try decisionStream($0) }
    }

    func decisionStream(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorization.authorizeUser(request)
        let context = try DecisionQuery.context(from: request)
        // Verified just above: nil only for the admin token, which does not expire.
        let tokenValidUntil =
            (try? authorization.tokens.validUntil(authorization: request.header("Authorization"), now: Int64(time(nil)))) ?? nil
        if draining.isDraining {
            throw Problems.unavailable("sheetd is shutting down; reconnect to another instance")
        }
        do {
            try streams.reserve(userId)
        } catch .processFull {
            throw Problems.unavailable("this instance holds its maximum of \(streams.maxStreams) streams; retry shortly")
        } catch {
            throw Problems.tooManyRequests(
                "user '\(userId)' already has \(streams.maxStreamsPerUser) open decision streams; close one first", retryAfterSeconds: 5)
        }
        let fresh: DecisionCache.Fresh
        do {
            fresh = try engine.currentAnswer(userId: userId, context: context)
        } catch {
            streams.release(userId)
            throw error
        }
        let headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")]
        if request.method == .HEAD {
            streams.release(userId)
            return .empty(200, headers: headers)
        }
        let answer = fresh.answer
        // A reconnecting client that already has this decision (from an event, or a GET in either
        // encoding) gets no first event.
        let upToDate =
            request.header("Last-Event-ID").map { EntityTag.matchesEitherEncoding($0, answer.etag) || "\"\($0)\"" == answer.etag } ?? false
        let engine = self.engine, streams = self.streams, feed = self.feed
        return .stream(headers: headers, maxPendingBytes: DecisionStreams.maxPendingBytes) { body in
            let stream = DecisionStream(
                userId: userId, context: context, body: body, lastETag: answer.etag,
                answer: { try? engine.currentAnswer(userId: $0, context: $1) }, clock: engine.clock,
                wake: { feed.schedule($0) })
            var first = Array("retry: \(DecisionStreams.retryMillis)\n\n".utf8)
            if !upToDate { first += DecisionStream.event(answer) }
            body.send(first)
            guard streams.open(stream) else { return body.finish(with: DecisionStreams.shutdownEvent) }
            feed.add(stream)
            body.onClose { _ in
                stream.boundary.cancel()
                feed.remove(stream)
                streams.close(stream)
            }
            if let tokenValidUntil { stream.endWhenTokenExpires(validUntil: tokenValidUntil, now: { Timestamp.now().millisecondsSince1970 }) }
            // A decision that can change by time alone is rechecked at its next boundary.
            stream.armBoundary(fresh.validUntil)
            // A change committed between the answer above and the registration: look once more.
            feed.schedule(stream)
        }
    }
}

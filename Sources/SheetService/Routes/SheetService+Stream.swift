import MicroHTTP
import SheetPolicy
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `GET /v1/users/{userId}/decision/stream`: the decision as Server-Sent Events, pushed when it changes.
extension SheetService {
    func decisionStream(_ request: HTTPRequest) throws(Problem) -> HTTPResponse {
        let userId = try authorizeUser(request)
        let context = try DecisionQuery.context(from: request)
        // Verified just above: nil only for the admin token, which does not expire.
        let tokenValidUntil = (try? tokens.validUntil(authorization: request.header("Authorization"), now: Int64(time(nil)))) ?? nil
        if draining.load(ordering: .relaxed) {
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
            fresh = try currentAnswer(userId: userId, context: context)
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
        // A reconnecting client that already has this decision gets no first event.
        let upToDate = request.header("Last-Event-ID").map { EntityTag.matches($0, answer.etag) || "\"\($0)\"" == answer.etag } ?? false
        return .stream(headers: headers, maxPendingBytes: DecisionStreams.maxPendingBytes) { [self] body in
            let stream = DecisionStream(
                userId: userId, context: context, body: body, lastETag: answer.etag,
                answer: { [self] in try? currentAnswer(userId: $0, context: $1) }, clock: clock,
                wake: { [feed] in feed.schedule($0) })
            var first = Array("retry: \(DecisionStreams.retryMillis)\n\n".utf8)
            if !upToDate { first += DecisionStream.event(answer) }
            body.send(first)
            guard streams.open(stream) else { return body.finish(with: DecisionStreams.shutdownEvent) }
            feed.add(stream)
            body.onClose { [self] _ in
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

import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension SheetdUserClient {
    /// The decision for `context`, live: the current one first, then each new one as it changes.
    ///
    /// Follows `GET .../decision/stream` (Server-Sent Events). The connection is re-opened whenever it
    /// ends: after the server's `event: shutdown` (a restart or a drain, so the next instance takes
    /// over) at once; after `event: token-expired` at once, with a token from
    /// ``SheetdTokenProvider/refreshToken(rejecting:)``; after a failure the ``RetryPolicy`` retries (408, 429, 500, 502, 503, 504, a
    /// lost connection) with capped exponential backoff and jitter up to
    /// ``SheetdConfiguration/maxReconnectDelay``, honouring `Retry-After` up to
    /// ``RetryPolicy/maxRetryAfter``. Each reconnection sends `Last-Event-ID` (the ETag of the decision
    /// last delivered), so an up-to-date client gets nothing until a change. A 401 asks the token
    /// provider for a fresh token once before it ends the sequence. Where streams are refused (404,
    /// 405, 406 or 501 for the stream route, or a proxy answering it with something other than
    /// `text/event-stream`) or ``SheetdConfiguration/liveUpdates`` is `.longPoll`, it long-polls
    /// `GET .../decision` with `If-None-Match` and `Prefer: wait=N` instead, at most one answer per
    /// ``SheetdConfiguration/longPollMinimumInterval``. Every delivered decision
    /// also refreshes the cache ``decision(for:)`` revalidates with.
    ///
    /// The sequence ends only when the task following it is cancelled, or with a ``SheetdError`` that
    /// retrying cannot fix (a 401 after a refreshed token, a 403, a 400 naming a bad context parameter).
    public func decisions(for context: SheetContext) -> AsyncThrowingStream<SheetDecision, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task { await self.follow(context, continuation) }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    private enum StreamEnd { case shutdown, closed, tokenExpired }

    /// The statuses of a stream route that is not there (or not streaming): long-poll instead.
    private static let streamRefusals: Set<Int> = [404, 405, 406, 501]

    private func follow(_ context: SheetContext, _ continuation: AsyncThrowingStream<SheetDecision, any Error>.Continuation) async {
        var last = cache.withLock { $0.value(for: context) }
        if let last { continuation.yield(last.decision) }
        var longPoll = configuration.liveUpdates == .longPoll
        var backoff = configuration.retry
        backoff.maxDelay = configuration.maxReconnectDelay
        var failures = 0
        var retryHint = 2.0
        var refreshedBearer: String?  // the token a 401 was answered with, for the next connection only
        var refreshed = false  // one refresh per run of 401s: a connection that opens resets it
        while !Task.isCancelled {
            var bearer = ""
            do {
                if longPoll {
                    let started = ProcessInfo.processInfo.systemUptime
                    if let changed = try await longPollOnce(context, etag: last?.etag) {
                        last = changed
                        continuation.yield(changed.decision)
                    }
                    failures = 0
                    // A server (or a proxy) answering at once, again and again, is not asked faster than this.
                    let rest = configuration.longPollMinimumInterval - (ProcessInfo.processInfo.systemUptime - started)
                    if rest > 0 { try? await HTTPCore.pause(rest) }
                    continue
                }
                var parser = ServerSentEventParser()
                let override = refreshedBearer
                refreshedBearer = nil
                let connected = {
                    failures = 0
                    refreshed = false
                }
                let end = try await streamOnce(
                    context, lastEventId: last?.etag, bearer: override, used: &bearer, parser: &parser, connected: connected
                ) { entry in
                    if entry.etag != last?.etag { continuation.yield(entry.decision) }
                    last = entry
                }
                if let ms = parser.retryMilliseconds { retryHint = Double(ms) / 1000 }
                switch end {
                case .tokenExpired:
                    // The server ended the stream when its token expired: reconnect at once with a
                    // refreshed one (a provider that throws ends the sequence with its error).
                    refreshedBearer = try await core.freshToken(rejecting: bearer)
                case .shutdown:
                    // "Reconnect (to another instance)": at once, spread a little.
                    try await HTTPCore.pause(Double.random(in: 0..<0.25))
                case .closed:
                    try await HTTPCore.pause(min(retryHint, configuration.maxReconnectDelay))
                }
            } catch is CancellationError {
                break
            } catch let error as SheetdError where error.kind == .server && error.status == 401 && !refreshed && !bearer.isEmpty {
                refreshed = true
                do {
                    let fresh = try await core.freshToken(rejecting: bearer)
                    guard fresh != bearer else { throw error }  // the same token would be rejected again
                    refreshedBearer = fresh
                } catch is CancellationError {
                    break
                } catch {
                    continuation.finish(throwing: error)
                    return
                }
            } catch let error as SheetdError where error.kind == .server && Self.streamRefusals.contains(error.status ?? 0) {
                longPoll = true
            } catch let error as SheetdError where backoff.retries(error) {
                failures += 1
                do {
                    try await HTTPCore.pause(backoff.delay(beforeRetry: failures, retryAfter: error.retryAfter, unit: Double.random(in: 0..<1)))
                } catch {
                    break
                }
            } catch {
                continuation.finish(throwing: error)
                return
            }
        }
        continuation.finish()
    }

    /// One long-poll: the new decision, or nil when it did not change within the wait.
    private func longPollOnce(_ context: SheetContext, etag: String?) async throws -> CachedDecision? {
        let wait = configuration.longPollWait
        var headers: [String: String] = [:]
        if let etag {
            headers["If-None-Match"] = etag
            headers["Prefer"] = "wait=\(wait)"
        }
        let answer = try await core.send(
            "GET", userPath + "/decision", query: context.queryItems, headers: headers, timeout: Double(wait) + configuration.requestTimeout)
        if answer.status == 304 { return nil }
        let decision = try HTTPCore.decode(Decision.self, answer)
        let entry = CachedDecision(etag: answer.header("ETag") ?? "", decision: decision)
        if !entry.etag.isEmpty { remember(entry, for: context) }
        return entry
    }

    /// One stream connection, until the server ends it. `deliver` gets each decision event.
    /// `bearer` overrides the provider's token; `used` is set to the token sent (a 401 names it).
    private func streamOnce(
        _ context: SheetContext, lastEventId: String?, bearer: String?, used: inout String, parser: inout ServerSentEventParser,
        connected: () -> Void, deliver: (CachedDecision) -> Void
    ) async throws -> StreamEnd {
        var headers = ["Accept": "text/event-stream"]
        if let lastEventId { headers["Last-Event-ID"] = lastEventId }
        // The idle timeout is a dead-peer detector: heartbeats arrive every 15 s by default.
        let (request, token) = try await core.makeRequest(
            "GET", userPath + "/decision/stream", query: context.queryItems, body: nil, headers: headers, timeout: 75, bearer: bearer)
        used = token
        let connection = StreamingConnection(
            request, configuration: configuration.makeSessionConfiguration(requestTimeout: request.timeoutInterval),
            appDelegate: configuration.session?.delegate)
        defer { connection.cancel() }
        var status = 0
        var responseHeaders: [String: String] = [:]
        var errorBody = Data()
        do {
            for try await chunk in connection.chunks {
                switch chunk {
                case .response(let code, let fields):
                    status = code
                    responseHeaders = fields
                    core.report(method: "GET", target: request.url?.path ?? "", attempt: 1, status: code, headers: fields)
                    if code == 200 {
                        guard fields["content-type"]?.hasPrefix("text/event-stream") == true else {
                            throw SheetdError(
                                kind: .server, status: 406, message: "the stream answered \(fields["content-type"] ?? "no content type")")
                        }
                        connected()
                    }
                case .bytes(let data):
                    guard status == 200 else {
                        errorBody.append(data)
                        continue
                    }
                    for event in parser.feed(data) {
                        switch event.event {
                        case "decision":
                            let decision: Decision
                            do { decision = try JSONDecoder().decode(Decision.self, from: Data(event.data.utf8)) } catch {
                                throw SheetdError(kind: .invalidResponse, status: 200, message: "a streamed decision could not be read: \(error)")
                            }
                            let entry = CachedDecision(etag: event.id ?? "", decision: decision)
                            if !entry.etag.isEmpty { remember(entry, for: context) }
                            deliver(entry)
                        case "shutdown":
                            return .shutdown
                        case "token-expired":
                            return .tokenExpired
                        default:
                            continue  // an event type a newer server added
                        }
                    }
                }
            }
        } catch let error as SheetdError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            try Task.checkCancellation()
            // A stream that was open and got cut (a lost network, a proxy's idle timeout) ends as
            // streams end: reconnect. Linux reports the cut as URLError.unknown, which the policy does
            // not retry for a request that never got an answer.
            if status == 200 { return .closed }
            throw SheetdError(kind: .transport, message: "decision stream: \(error.localizedDescription)", urlError: error as? URLError)
        }
        if status != 200 {
            if status == 0 { throw SheetdError(kind: .transport, message: "decision stream: no answer") }
            throw HTTPCore.error(status: status, body: errorBody, headers: responseHeaders)
        }
        return .closed
    }
}

/// One streaming GET over URLSession's delegate callbacks (`URLSession.bytes(for:)` is not in
/// swift-corelibs-foundation): the response, then body chunks as they arrive, as an async sequence.
final class StreamingConnection: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    // @unchecked Sendable: the stored properties are immutable; the continuation is thread-safe.
    enum Chunk: Sendable {
        case response(status: Int, headers: [String: String])
        case bytes(Data)
    }

    let chunks: AsyncThrowingStream<Chunk, any Error>
    private let continuation: AsyncThrowingStream<Chunk, any Error>.Continuation
    private let session: LockedBox<URLSession?> = LockedBox(nil)

    /// The app's session delegate (``SheetdConfiguration/session``): it answers this connection's
    /// authentication challenges too (certificate pinning), as it does for the client's other requests.
    private let appDelegate: (any URLSessionDelegate)?

    /// Opens `request` on a new session of `configuration` (the client's copy: a stream has no end,
    /// so no resource timeout).
    init(_ request: URLRequest, configuration: URLSessionConfiguration, appDelegate: (any URLSessionDelegate)? = nil) {
        (chunks, continuation) = AsyncThrowingStream.makeStream(of: Chunk.self)
        self.appDelegate = appDelegate
        super.init()
        configuration.timeoutIntervalForResource = .infinity
        let session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
        self.session.withLock { $0 = session }
        session.dataTask(with: request).resume()
    }

    /// Ends the connection (and breaks the session's reference cycle with its delegate).
    func cancel() {
        session.withLock {
            $0?.invalidateAndCancel()
            $0 = nil
        }
        continuation.finish()
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        if let http = response as? HTTPURLResponse {
            continuation.yield(.response(status: http.statusCode, headers: HTTPCore.headers(of: http)))
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        continuation.yield(.bytes(data))
    }

    #if !canImport(FoundationNetworking)
    /// A challenge (a server trust to pin, a client certificate) goes to the app's session delegate:
    /// its task-level method, else its session-level one, else the system's default handling.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        if let taskDelegate = appDelegate as? any URLSessionTaskDelegate,
            taskDelegate.urlSession?(session, task: task, didReceive: challenge, completionHandler: completionHandler) != nil
        {
            return
        }
        if appDelegate?.urlSession?(session, didReceive: challenge, completionHandler: completionHandler) != nil { return }
        completionHandler(.performDefaultHandling, nil)
    }
    #endif

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let error { continuation.finish(throwing: error) } else { continuation.finish() }
    }
}

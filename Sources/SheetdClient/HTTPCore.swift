package import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request machinery both clients share: URLs, the bearer token, retries, problem+json errors.
/// `package`: the operator client (the SheetdAdmin module) uses it too; apps do not see it.
package struct HTTPCore: Sendable {
    let baseURL: URL
    let tokens: TokenRefresher
    let provider: any SheetdTokenProvider
    package let configuration: SheetdConfiguration
    let session: URLSession

    package init(baseURL: URL, tokens provider: any SheetdTokenProvider, configuration: SheetdConfiguration) {
        self.baseURL = baseURL
        self.provider = provider
        self.tokens = TokenRefresher(provider)
        self.configuration = configuration
        // Each request sets its own timeout (a long-poll's is longer); the session's must not cut it first.
        session =
            configuration.session
            ?? URLSession(configuration: configuration.makeSessionConfiguration(requestTimeout: max(configuration.requestTimeout, 60) + 70))
    }

    /// One answer: status, body and the headers looked up case-insensitively.
    package struct Answer: Sendable {
        package var status: Int
        package var body: Data
        package var headers: [String: String]
        package var attempts: Int
        package func header(_ name: String) -> String? { headers[name.lowercased()] }
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// The URL of `path` (segments already escaped) with `query`.
    func url(_ path: String, query: [URLQueryItem] = []) -> URL {
        var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false)!
        let basePath = components.path.hasSuffix("/") ? String(components.path.dropLast()) : components.path
        components.percentEncodedPath = basePath + path
        components.queryItems = query.isEmpty ? nil : query
        return components.url!
    }

    /// Escapes one path segment (ids are letters, digits and `._:@-`, so this is a safety net).
    package static func segment(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "._:@-~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// Sends a request, retrying what the retry policy retries (with its backoff and `Retry-After`),
    /// and a 401 once with a refreshed token. A 2xx or 304 is returned; any other status throws a
    /// ``SheetdError`` carrying the problem.
    package func send(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: Data? = nil, headers: [String: String] = [:],
        timeout: Double? = nil
    ) async throws -> Answer {
        let policy = configuration.retry
        var attempt = 0, retries = 0
        var bearer: String?
        var refreshed = false
        while true {
            attempt += 1
            let request = try await makeRequest(method, path, query: query, body: body, headers: headers, timeout: timeout, bearer: bearer)
            let error: SheetdError
            do {
                let answer = try await exchange(request.request, method: method, attempt: attempt)
                if (200..<300).contains(answer.status) || answer.status == 304 { return answer }
                error = Self.error(status: answer.status, body: answer.body, headers: answer.headers)
            } catch let failure as SheetdError where failure.kind == .transport {
                error = failure
            }
            if error.status == 401, !refreshed {
                // Not a retry of the policy: the same request, authenticated anew (once).
                refreshed = true
                bearer = try await freshToken(rejecting: request.bearer)
                if bearer != request.bearer { continue }
            }
            guard policy.retries(error), retries + 1 < policy.maxAttempts else { throw error }
            retries += 1
            try await Self.pause(policy.delay(beforeRetry: retries, retryAfter: error.retryAfter, unit: Double.random(in: 0..<1)))
        }
    }

    /// Sleeps `seconds` (cancellation ends it with a CancellationError).
    static func pause(_ seconds: Double) async throws {
        try await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
    }

    /// A token from the provider after the server rejected `rejected` (see ``TokenRefresher``).
    func freshToken(rejecting rejected: String) async throws -> String {
        do { return try await tokens.fresh(rejecting: rejected) } catch is CancellationError { throw CancellationError() } catch {
            throw SheetdError(kind: .token, message: "the token provider's refresh threw: \(error)", underlying: error)
        }
    }

    /// A request with the bearer token (`bearer`, or the provider's), the client's headers, then the
    /// app's request adapter. Returns the token it carries, to name it when a 401 rejects it.
    func makeRequest(
        _ method: String, _ path: String, query: [URLQueryItem], body: Data?, headers: [String: String],
        timeout: Double?, bearer: String? = nil
    ) async throws -> (request: URLRequest, bearer: String) {
        var request = URLRequest(url: url(path, query: query))
        request.httpMethod = method
        request.timeoutInterval = timeout ?? configuration.requestTimeout
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let token: String
        if let bearer {
            token = bearer
        } else {
            do { token = try await provider.token() } catch is CancellationError { throw CancellationError() } catch {
                throw SheetdError(kind: .token, message: "the token provider threw: \(error)", underlying: error)
            }
        }
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let adapter = configuration.requestAdapter {
            do { request = try await adapter(request) } catch is CancellationError { throw CancellationError() } catch {
                throw SheetdError(kind: .invalidRequest, message: "the request adapter threw: \(error)", underlying: error)
            }
        }
        return (request, token)
    }

    /// One exchange: the answer whatever its status; a transport failure throws (with its URLError).
    private func exchange(_ request: URLRequest, method: String, attempt: Int) async throws -> Answer {
        let target = Self.target(of: request) ?? ""
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            try Task.checkCancellation()
            configuration.onExchange?(.init(method: method, target: target, attempt: attempt, status: nil, headers: [:]))
            throw SheetdError(kind: .transport, message: "\(method) \(target): \(error.localizedDescription)", urlError: error as? URLError)
        }
        guard let http = response as? HTTPURLResponse else {
            throw SheetdError(kind: .invalidResponse, message: "\(method) \(target): not an HTTP response")
        }
        let answer = Answer(status: http.statusCode, body: data, headers: Self.headers(of: http), attempts: attempt)
        report(method: method, target: target, attempt: attempt, status: answer.status, headers: answer.headers)
        return answer
    }

    /// Tells ``SheetdConfiguration/onExchange`` about an answer, with the headers that matter to clients.
    func report(method: String, target: String, attempt: Int, status: Int, headers: [String: String]) {
        configuration.onExchange?(
            .init(
                method: method, target: target, attempt: attempt, status: status,
                headers: headers.filter { ["etag", "idempotent-replayed", "retry-after", "preference-applied"].contains($0.key) }))
    }

    /// The path and query of a request, for reports.
    static func target(of request: URLRequest) -> String? {
        guard let url = request.url else { return nil }
        return url.query.map { url.path + "?" + $0 } ?? url.path
    }

    /// The response's headers with lower-cased names.
    static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields { headers["\(name)".lowercased()] = "\(value)" }
        return headers
    }

    /// The typed error of an error status: the problem+json when the body is one.
    static func error(status: Int, body: Data, headers: [String: String]) -> SheetdError {
        let problem = try? JSONDecoder().decode(Problem.self, from: body)
        let retryAfter = headers["retry-after"].flatMap { RetryAfter.seconds($0) }
        let message = problem?.detail ?? "HTTP \(status): \(String(decoding: body.prefix(200), as: UTF8.self))"
        return SheetdError(kind: .server, status: status, problem: problem, retryAfter: retryAfter, message: message)
    }

    /// Decodes an answer's body, or throws an `invalidResponse` error naming the model.
    package static func decode<T: Decodable>(_ type: T.Type, _ answer: Answer) throws -> T {
        do { return try JSONDecoder().decode(type, from: answer.body) } catch {
            throw SheetdError(kind: .invalidResponse, status: answer.status, message: "the \(T.self) could not be read: \(error)")
        }
    }

    package static func encode<T: Encodable>(_ value: T) throws -> Data {
        do { return try encoder.encode(value) } catch {
            throw SheetdError(kind: .invalidResponse, message: "the \(T.self) could not be encoded: \(error)")
        }
    }
}

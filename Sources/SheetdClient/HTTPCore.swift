import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request machinery both clients share: URLs, the bearer token, retries, problem+json errors.
struct HTTPCore: Sendable {
    let baseURL: URL
    let token: @Sendable () async throws -> String
    let configuration: SheetdConfiguration
    let session: URLSession

    init(baseURL: URL, token: @escaping @Sendable () async throws -> String, configuration: SheetdConfiguration) {
        self.baseURL = baseURL
        self.token = token
        self.configuration = configuration
        let sessionConfiguration = URLSessionConfiguration.ephemeral
        // Each request sets its own timeout (a long-poll's is longer); the session's must not cut it first.
        sessionConfiguration.timeoutIntervalForRequest = max(configuration.requestTimeout, 60) + 70
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        session = URLSession(configuration: sessionConfiguration)
    }

    /// One answer: status, body and the headers looked up case-insensitively.
    struct Answer: Sendable {
        var status: Int
        var body: Data
        var headers: [String: String]
        var attempts: Int
        func header(_ name: String) -> String? { headers[name.lowercased()] }
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
    static func segment(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "._:@-~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }

    /// Sends a request, retrying transport failures, 503 and 429 per the retry policy. A 2xx or 304 is
    /// returned; any other status throws a ``SheetdError`` carrying the problem.
    func send(
        _ method: String, _ path: String, query: [URLQueryItem] = [], body: Data? = nil, headers: [String: String] = [:],
        timeout: Double? = nil
    ) async throws -> Answer {
        let policy = configuration.retry
        var attempt = 0
        while true {
            attempt += 1
            do {
                return try await sendOnce(method, path, query: query, body: body, headers: headers, timeout: timeout, attempt: attempt)
            } catch let error as SheetdError where error.isRetryable && attempt < policy.maxAttempts {
                let seconds = policy.delay(beforeRetry: attempt, retryAfter: error.retryAfter, unit: Double.random(in: 0..<1))
                try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
            }
        }
    }

    func makeRequest(
        _ method: String, _ path: String, query: [URLQueryItem], body: Data?, headers: [String: String],
        timeout: Double?
    ) async throws -> URLRequest {
        var request = URLRequest(url: url(path, query: query))
        request.httpMethod = method
        request.timeoutInterval = timeout ?? configuration.requestTimeout
        request.cachePolicy = .reloadIgnoringLocalCacheData
        let bearer: String
        do { bearer = try await token() } catch is CancellationError { throw CancellationError() } catch {
            throw SheetdError(kind: .token, message: "the token closure threw: \(error)")
        }
        request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    private func sendOnce(
        _ method: String, _ path: String, query: [URLQueryItem], body: Data?, headers: [String: String], timeout: Double?,
        attempt: Int
    ) async throws -> Answer {
        let request = try await makeRequest(method, path, query: query, body: body, headers: headers, timeout: timeout)
        let target = Self.target(of: request) ?? path
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            try Task.checkCancellation()
            configuration.onExchange?(.init(method: method, target: target, attempt: attempt, status: nil, headers: [:]))
            throw SheetdError(kind: .transport, message: "\(method) \(target): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw SheetdError(kind: .invalidResponse, message: "\(method) \(target): not an HTTP response")
        }
        let answer = Answer(status: http.statusCode, body: data, headers: Self.headers(of: http), attempts: attempt)
        configuration.onExchange?(
            .init(
                method: method, target: target, attempt: attempt, status: answer.status,
                headers: answer.headers.filter { ["etag", "idempotent-replayed", "retry-after", "preference-applied"].contains($0.key) }))
        if (200..<300).contains(answer.status) || answer.status == 304 { return answer }
        throw Self.error(status: answer.status, body: data, headers: answer.headers)
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
        let retryAfter = headers["retry-after"].flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }
        let message = problem?.detail ?? "HTTP \(status): \(String(decoding: body.prefix(200), as: UTF8.self))"
        return SheetdError(kind: .server, status: status, problem: problem, retryAfter: retryAfter, message: message)
    }

    /// Decodes an answer's body, or throws an `invalidResponse` error naming the model.
    static func decode<T: Decodable>(_ type: T.Type, _ answer: Answer) throws -> T {
        do { return try JSONDecoder().decode(type, from: answer.body) } catch {
            throw SheetdError(kind: .invalidResponse, status: answer.status, message: "the \(T.self) could not be read: \(error)")
        }
    }

    static func encode<T: Encodable>(_ value: T) throws -> Data {
        do { return try encoder.encode(value) } catch {
            throw SheetdError(kind: .invalidResponse, message: "the \(T.self) could not be encoded: \(error)")
        }
    }
}

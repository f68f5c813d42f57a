import Observability

/// Routing and running a handler, the dispatch step of the request lifecycle (`ServerCore.handle`,
/// over MHD's connection or a test's fake one). Every outcome is a response, a refusal, or a deferred
/// response to start.
struct Responder: Sendable {
    let table: RouteTable

    /// What dispatching one request produced.
    enum Outcome {
        /// Answer with this problem; `template`/`slot` label log and metrics (nil: unmatched).
        case refused(Problem, template: String?, slot: RouteMetrics?)
        /// The handler's response (never `deferred`), checked.
        case answered(HTTPResponse, RouteTable.Target)
        /// The handler answered later: start it with a promise.
        case deferred(@Sendable (ResponsePromise) -> Void, RouteTable.Target, requestId: String)
    }

    /// Resolves `path` and runs the matched handler on the request `makeRequest` builds.
    func respond(
        method: HTTPMethod?, path: UnsafeBufferPointer<UInt8>,
        makeRequest: (RouteTable.Target, HTTPMethod, [String]) -> HTTPRequest
    ) -> Outcome {
        switch table.resolve(method: method, path: path) {
        case .refused(let problem, let template, let slot):
            return .refused(problem, template: template, slot: slot)
        case .matched(let target, let method, let values):
            let request = makeRequest(target, method, values)
            let response = Responder.run(target, request)
            if case .deferred(let start) = response.content {
                return .deferred(start, target, requestId: request.requestId)
            }
            return .answered(response, target)
        }
    }

    /// Runs the handler: a thrown `Problem` is its response, any other error a logged 500 problem, and a
    /// status outside 100…599 a logged 500 too. Invalidates the request afterwards.
    static func run(_ target: RouteTable.Target, _ request: HTTPRequest) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try target.handler(request)
        } catch {
            request.isValid = false
            return Responder.response(for: error, template: target.template, requestId: request.requestId)
        }
        request.isValid = false
        return response.isDeferred ? response : checked(response, template: target.template)
    }

    /// The response for an error a handler threw (or a deferred handler failed with).
    static func response(for error: any Error, template: String, requestId: String) -> HTTPResponse {
        if let problem = error as? Problem { return problem.response }
        Log.write(
            .error, "handler failed",
            [
                ("route", .string(template)), ("request_id", .string(requestId)),
                ("error", .string(String(describing: error))),
            ])
        return Problem.internalError().response
    }

    /// `response`, or a logged 500 when its status is outside 100…599 or it is still `deferred`.
    static func checked(_ response: HTTPResponse, template: String) -> HTTPResponse {
        if response.isDeferred {
            Log.write(.error, "a deferred response was settled with another deferred response", [("route", .string(template))])
            return Problem.internalError().response
        }
        if !(100...599).contains(response.status) {
            Log.write(
                .error, "handler returned an invalid status",
                [
                    ("route", .string(template)),
                    ("status", .int(response.status)),
                ])
            return Problem.internalError().response
        }
        return response
    }
}

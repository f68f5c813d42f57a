import Foundation
import Synchronization
import TestSupport

@testable import MicroHTTP

struct PlainError: Error {}

/// The routes every live test uses.
func makeTestRouter() -> Router {
    let router = Router()
    router.add(.GET, "/healthz") { _ in .text(200, "ok\n", contentType: "text/plain; charset=utf-8") }
    router.add(.GET, "/v1/users/{userId}/containers/{containerId}/count") { req in
        let body =
            #"{"user":"\#(req.pathParameter("userId") ?? "?")","container":"\#(req.pathParameter("containerId") ?? "?")","template":"\#(req.routeTemplate)"}"#
        return .json(200, Array(body.utf8))
    }
    router.add(.DELETE, "/v1/users/{userId}/containers/{containerId}/count") { _ in .empty(204) }
    router.add(.GET, "/v1/users/me/profile") { _ in .json(200, Array(#"{"me":true}"#.utf8)) }
    router.add(.GET, "/v1/users/{userId}/profile") { req in .json(200, Array(#"{"user":"\#(req.pathParameter("userId")!)"}"#.utf8)) }
    router.add(.POST, "/v1/echo") { req in
        HTTPResponse(
            status: 200, headers: [("Content-Type", "application/octet-stream"), ("X-Body-Length", String(req.body.count))],
            body: req.body)
    }
    router.add(.GET, "/v1/boom") { _ in throw PlainError() }
    router.add(.GET, "/v1/invalid") { _ in
        throw Problem(
            status: 422, slug: "validation-failed", title: "Validation failed", detail: "Two fields are wrong.",
            invalidParams: [(name: "count", reason: "must be ≥ 0"), (name: "sheet", reason: "unknown \"x\"")],
            headers: [("X-Extra", "1")])
    }
    router.add(.GET, "/v1/query") { req in
        let names = req.queryNames().joined(separator: ",")
        let a = req.query("a") ?? "<nil>"
        let b = req.query("b") ?? "<nil>"
        let z = req.query("z") ?? "<nil>"
        return .text(200, "a=\(a)|b=\(b)|z=\(z)|names=\(names)", contentType: "text/plain")
    }
    router.add(.GET, "/v1/query/raw") { req in
        // Every item as decoded bytes, shown as "name=value" (value bytes in hex) plus the raw path.
        var items: [String] = []
        req.forEachQueryItem { n, v in
            items.append(n.utf8String + "=" + v.copiedBytes.map { String($0, radix: 16) }.joined(separator: " "))
        }
        return .text(200, req.path + "|" + items.joined(separator: "|"), contentType: "text/plain")
    }
    router.add(.GET, "/v1/headers") { req in
        var bytes: [UInt8]?
        req.withHeaderBytes("X-CUSTOM-THING") { bytes = $0?.copiedBytes }
        let viaBytes = bytes.map { String(decoding: $0, as: UTF8.self) } ?? "<nil>"
        return .text(200, (req.header("x-custom-thing") ?? "<nil>") + "|" + viaBytes, contentType: "text/plain")
    }
    router.add(.GET, "/v1/big/{n}") { req in
        // A body of n bytes (the shared, zero-copy path from 512 bytes on), same for every request.
        let n = Int(req.pathParameter("n")!) ?? 0
        return HTTPResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: bigBody(n))
    }
    router.add(.GET, "/v1/slow") { _ in
        usleep(400_000)
        return .text(200, "slow done", contentType: "text/plain")
    }
    router.add(.GET, "/") { _ in .text(200, "root", contentType: "text/plain") }
    return router
}

/// Deterministic test bodies, one array per size shared by every response (as decision answers are).
func bigBody(_ n: Int) -> [UInt8] {
    bigBodies.withLock { cache in
        if let b = cache[n] { return b }
        let b = (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        cache[n] = b
        return b
    }
}
private let bigBodies = Mutex<[Int: [UInt8]]>([:])

/// A started server on port 0 with the test routes; the caller stops it.
func startTestServer(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    router: Router = makeTestRouter(), metrics: HTTPMetrics = HTTPMetrics()
) throws -> HTTPServer {
    var config = HTTPServerConfiguration()
    config.port = 0
    config.threads = 2
    config.accessLog = false
    configure(&config)
    let server = HTTPServer(configuration: config, router: router, metrics: metrics)
    try server.start()
    return server
}

/// Starts a server on port 0 with the test routes, runs `body`, stops it.
func withServer<T>(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    router: Router = makeTestRouter(),
    _ body: (HTTPServer, HTTPMetrics) throws -> T
) throws -> T {
    let metrics = HTTPMetrics()
    let server = try startTestServer(configure, router: router, metrics: metrics)
    defer { server.stop(drainTimeout: .seconds(2)) }
    return try body(server, metrics)
}

/// Decodes a JSON object body.
func jsonObject(_ bytes: [UInt8]) throws -> [String: Any] {
    guard let o = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
        throw ClientError(description: "not a JSON object")
    }
    return o
}

import Synchronization

/// A handler runs synchronously on an MHD worker thread, possibly concurrently with itself.
/// A thrown `Problem` becomes its response; any other error is logged and answered with a 500 problem.
/// Work that waits (a group commit) returns `HTTPResponse.deferred` and settles its promise later.
public typealias HTTPHandler = @Sendable (HTTPRequest) throws -> HTTPResponse

/// Method + path-template routing. Templates are `/`-separated literal segments and `{name}`
/// parameters, e.g. `/v1/users/{userId}/containers/{containerId}/count`. Register everything before
/// `HTTPServer.start()`; the server compiles the routes into an immutable byte-level trie at start.
public final class Router: Sendable {
    struct Entry: Sendable {
        let method: HTTPMethod
        let template: String
        let segments: [TemplateSegment]
        let handler: HTTPHandler
    }

    enum TemplateSegment: Sendable, Equatable {
        case literal([UInt8])
        case parameter(String)
    }

    private let state = Mutex<(entries: [Entry], frozen: Bool)>(([], false))

    public init() {}

    /// Registers a handler. A malformed template, a duplicate (method, template) or a call after the
    /// server started is a programming error and stops the process with a message.
    public func add(_ method: HTTPMethod, _ template: String, _ handler: @escaping HTTPHandler) {
        let segments: [TemplateSegment]
        do {
            segments = try Router.parse(template)
        } catch {
            preconditionFailure("Router.add(\(method), \(template)): \(error.reason)")
        }
        state.withLock { s in
            precondition(!s.frozen, "Router.add(\(method), \(template)) after the server started")
            let clash = s.entries.first { e in
                e.method == method && e.segments.map(\.shape) == segments.map(\.shape)
            }
            precondition(clash == nil, "Router.add(\(method), \(template)) conflicts with \(clash?.template ?? "")")
            s.entries.append(Entry(method: method, template: template, segments: segments, handler: handler))
        }
    }

    /// Every registered (method, template), in registration order (HEAD is implied for GET routes and
    /// not listed).
    public var routes: [(method: HTTPMethod, template: String)] {
        state.withLock { s in s.entries.map { (method: $0.method, template: $0.template) } }
    }

    /// The entries registered so far, without freezing (socket-free tests).
    var entries: [Entry] { state.withLock { $0.entries } }

    /// Freezes the router and hands out its entries (called by `HTTPServer.start`).
    func freeze() -> [Entry] {
        state.withLock { s in
            s.frozen = true
            return s.entries
        }
    }

    struct TemplateError: Error { let reason: String }

    static func parse(_ template: String) throws(TemplateError) -> [TemplateSegment] {
        let bytes = Array(template.utf8)
        guard bytes.first == UInt8(ascii: "/") else { throw TemplateError(reason: "must start with /") }
        var result: [TemplateSegment] = []
        var names: Set<String> = []
        for part in bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            if part.first == UInt8(ascii: "{") {
                guard part.count > 2, part.last == UInt8(ascii: "}") else { throw TemplateError(reason: "bad parameter segment") }
                let name = part.dropFirst().dropLast()
                guard name.allSatisfy(isNameByte) else { throw TemplateError(reason: "parameter names are [A-Za-z0-9_]") }
                let n = String(decoding: name, as: UTF8.self)
                guard names.insert(n).inserted else { throw TemplateError(reason: "duplicate parameter \(n)") }
                result.append(.parameter(n))
            } else {
                guard part.allSatisfy(isLiteralByte) else { throw TemplateError(reason: "literal segments are unreserved characters") }
                // Only the root template "/" has an (the) empty segment.
                if part.isEmpty && bytes.count > 1 { throw TemplateError(reason: "empty segment") }
                result.append(.literal(Array(part)))
            }
        }
        return result
    }
}

extension Router.TemplateSegment {
    /// Parameter names do not distinguish routes.
    var shape: [UInt8]? {
        switch self {
        case .literal(let b): b
        case .parameter: nil
        }
    }
}

private func isNameByte(_ b: UInt8) -> Bool {
    (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == UInt8(ascii: "_")
}

private func isLiteralByte(_ b: UInt8) -> Bool {
    isNameByte(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: ".") || b == UInt8(ascii: "~")
}

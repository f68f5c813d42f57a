#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The compiled, immutable routing trie. Matching walks the raw path bytes MHD hands over (no String,
/// no split): literal children are compared with a length check and byte loop, a parameter child
/// takes any non-empty segment. Literal matches are preferred, with backtracking to the parameter.
final class RouteTable: Sendable {
    /// What a (method, template) pair resolves to.
    final class Target: Sendable {
        let method: HTTPMethod
        let template: String
        let parameterNames: [String]
        let handler: HTTPHandler
        let metrics: RouteMetrics

        init(method: HTTPMethod, template: String, parameterNames: [String], handler: @escaping HTTPHandler, metrics: RouteMetrics) {
            self.method = method
            self.template = template
            self.parameterNames = parameterNames
            self.handler = handler
            self.metrics = metrics
        }
    }

    final class Node: Sendable {
        let literals: [(bytes: [UInt8], node: Node)]
        let parameter: Node?
        /// Indexed by `HTTPMethod.ordinal`; HEAD falls back to GET.
        let targets: [Target?]
        /// The template that ends here (nil: no route ends at this node).
        let template: String?
        /// Precomputed `Allow` header value for 405s.
        let allow: String
        /// The metrics slot for requests to this path with a wrong method.
        let metrics: RouteMetrics?

        init(literals: [(bytes: [UInt8], node: Node)], parameter: Node?, targets: [Target?], template: String?,
             allow: String, metrics: RouteMetrics?) {
            self.literals = literals
            self.parameter = parameter
            self.targets = targets
            self.template = template
            self.allow = allow
            self.metrics = metrics
        }
    }

    let root: Node

    init(entries: [Router.Entry], metrics: HTTPMetrics) {
        root = RouteTable.build(entries.map { ($0, $0.segments[...]) }, metrics: metrics)
    }

    private static func build(_ items: [(Router.Entry, ArraySlice<Router.TemplateSegment>)], metrics: HTTPMetrics) -> Node {
        var ending: [Router.Entry] = []
        var literalGroups: [([UInt8], [(Router.Entry, ArraySlice<Router.TemplateSegment>)])] = []
        var parameterGroup: [(Router.Entry, ArraySlice<Router.TemplateSegment>)] = []
        for (entry, rest) in items {
            guard let first = rest.first else {
                ending.append(entry)
                continue
            }
            switch first {
            case .literal(let bytes):
                if let i = literalGroups.firstIndex(where: { $0.0 == bytes }) {
                    literalGroups[i].1.append((entry, rest.dropFirst()))
                } else {
                    literalGroups.append((bytes, [(entry, rest.dropFirst())]))
                }
            case .parameter:
                parameterGroup.append((entry, rest.dropFirst()))
            }
        }
        var targets = [Target?](repeating: nil, count: HTTPMethod.allCases.count)
        for e in ending {
            let names = e.segments.compactMap { seg -> String? in
                if case .parameter(let n) = seg { return n }
                return nil
            }
            targets[e.method.ordinal] = Target(method: e.method, template: e.template, parameterNames: names,
                                               handler: e.handler, metrics: metrics.slot(for: e.template))
        }
        var allowed = HTTPMethod.allCases.filter { targets[$0.ordinal] != nil }
        if targets[HTTPMethod.GET.ordinal] != nil && targets[HTTPMethod.HEAD.ordinal] == nil {
            allowed.insert(.HEAD, at: 1)
        }
        let template = ending.first?.template
        return Node(
            literals: literalGroups.map { (bytes: $0.0, node: build($0.1, metrics: metrics)) },
            parameter: parameterGroup.isEmpty ? nil : build(parameterGroup, metrics: metrics),
            targets: targets,
            template: template,
            allow: allowed.map(\.rawValue).joined(separator: ", "),
            metrics: template.map { metrics.slot(for: $0) })
    }

    /// The outcome of routing one request.
    enum Resolution {
        /// Answer with this problem; `template`/`slot` label log and metrics (nil: unmatched).
        case refused(Problem, template: String?, slot: RouteMetrics?)
        case matched(Target, method: HTTPMethod, values: [String])
    }

    /// Validates the raw path, matches it, picks the method (HEAD falls back to GET) and decodes the
    /// parameters. `method` is nil for a method token outside `HTTPMethod` (405 on a known path).
    func resolve(method: HTTPMethod?, path: UnsafeBufferPointer<UInt8>) -> Resolution {
        if let problem = validatePath(path) {
            let detail = switch problem {
            case .invalidEscape: "The path contains an invalid percent escape."
            case .dotSegment: "The path contains a dot segment."
            case .notAbsolute: "The request target is not an absolute path."
            }
            return .refused(problem == .notAbsolute ? .notFound(detail) : .badRequest(detail), template: nil, slot: nil)
        }
        var captures: [Range<Int>] = []
        guard let node = match(path, captures: &captures) else {
            return .refused(.notFound("No resource at this path."), template: nil, slot: nil)
        }
        var target: Target?
        if let method {
            target = node.targets[method.ordinal]
            if target == nil && method == .HEAD { target = node.targets[HTTPMethod.GET.ordinal] }
        }
        guard let target, let method else {
            return .refused(.methodNotAllowed("The method is not allowed for this resource.", allow: node.allow),
                            template: node.template, slot: node.metrics)
        }
        var values: [String] = []
        if !captures.isEmpty {
            values.reserveCapacity(captures.count)
            for r in captures {
                guard let v = decodePathSegment(path, r) else {
                    return .refused(.badRequest("A path segment decodes to an invalid value."), template: target.template,
                                    slot: target.metrics)
                }
                values.append(v)
            }
        }
        return .matched(target, method: method, values: values)
    }

    /// The node whose template matches `path` (a validated path starting with "/"), with the byte
    /// ranges of the parameter segments in order.
    func match(_ path: UnsafeBufferPointer<UInt8>, captures: inout [Range<Int>]) -> Node? {
        guard path.count > 0 else { return nil }
        return RouteTable.match(root, path, 1, &captures)
    }

    private static func match(_ node: Node, _ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ captures: inout [Range<Int>]) -> Node? {
        var end = start
        while end < p.count && p[end] != UInt8(ascii: "/") { end += 1 }
        let length = end - start
        let isLast = end == p.count
        for (lit, child) in node.literals where lit.count == length {
            var equal = true
            var i = 0
            while i < length {
                if lit[i] != p[start + i] { equal = false; break }
                i += 1
            }
            if !equal { continue }
            if isLast {
                if child.template != nil { return child }
            } else if let found = match(child, p, end + 1, &captures) {
                return found
            }
        }
        if let child = node.parameter, length > 0 {
            captures.append(start..<end)
            if isLast {
                if child.template != nil { return child }
            } else if let found = match(child, p, end + 1, &captures) {
                return found
            }
            captures.removeLast()
        }
        return nil
    }
}

/// Why a raw path was refused before routing.
enum PathProblem {
    case invalidEscape, dotSegment, notAbsolute
}

/// One pass over the raw path: absolute, every `%` followed by two hex digits, no `.`/`..` segments
/// (raw or encoded).
func validatePath(_ p: UnsafeBufferPointer<UInt8>) -> PathProblem? {
    guard p.first == UInt8(ascii: "/") else { return .notAbsolute }
    var i = 0
    var segmentStart = 1
    while i <= p.count {
        if i == p.count || p[i] == UInt8(ascii: "/") {
            if i > 0 && isDotSegment(p, segmentStart..<i) { return .dotSegment }
            segmentStart = i + 1
        } else if p[i] == UInt8(ascii: "%") {
            guard i + 2 < p.count, hexValue(p[i + 1]) != nil, hexValue(p[i + 2]) != nil else { return .invalidEscape }
            i += 2
        }
        i += 1
    }
    return nil
}

private func isDotSegment(_ p: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
    // "." and "..", also percent-encoded (%2e / %2E).
    var dots = 0
    var i = r.lowerBound
    while i < r.upperBound {
        if p[i] == UInt8(ascii: ".") {
            i += 1
        } else if p[i] == UInt8(ascii: "%"), i + 2 < r.upperBound,  // escapes in r are validated already
                  p[i + 1] == UInt8(ascii: "2"), p[i + 2] | 0x20 == UInt8(ascii: "e") {
            i += 3
        } else {
            return false
        }
        dots += 1
        if dots > 2 { return false }
    }
    return dots == 1 || dots == 2
}

@inline(__always) func hexValue(_ b: UInt8) -> UInt8? {
    switch b {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
    default: nil
    }
}

/// Decodes one path segment (`%XX` only; `+` stays `+`). Nil when the result contains `/` or NUL or
/// is not valid UTF-8. Escapes are already validated by `validatePath`.
func decodePathSegment(_ p: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> String? {
    var hasEscape = false
    for i in r where p[i] == UInt8(ascii: "%") { hasEscape = true; break }
    if !hasEscape {
        let segment = UnsafeBufferPointer(rebasing: p[r])
        // ASCII needs no validation (and `String(validating:)` is generic, with a metadata lookup per call).
        if segment.allSatisfy({ $0 < 0x80 }) { return String(decoding: segment, as: UTF8.self) }
        return String(validating: segment, as: UTF8.self)
    }
    var out: [UInt8] = []
    out.reserveCapacity(r.count)
    var i = r.lowerBound
    while i < r.upperBound {
        if p[i] == UInt8(ascii: "%"), i + 2 < r.upperBound, let h = hexValue(p[i + 1]), let l = hexValue(p[i + 2]) {
            let b = h << 4 | l
            if b == UInt8(ascii: "/") || b == 0 { return nil }
            out.append(b)
            i += 3
        } else {
            out.append(p[i])
            i += 1
        }
    }
    return String(validating: out, as: UTF8.self)
}

/// Decodes a query name or value: `+` is a space, `%XX` a byte; malformed escapes are kept literally
/// and invalid UTF-8 is repaired with U+FFFD.
func decodeQueryComponent(_ p: UnsafePointer<CChar>) -> String {
    withDecodedQueryComponent(cString: p) { String(decoding: $0, as: UTF8.self) }
}

/// The same for a byte buffer.
func decodeQueryComponent(_ buf: UnsafeBufferPointer<UInt8>) -> String {
    withDecodedQueryComponent(buf) { String(decoding: $0, as: UTF8.self) }
}

/// Calls `body` with the decoded bytes of a NUL-terminated query component.
func withDecodedQueryComponent<R>(cString p: UnsafePointer<CChar>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    let raw = UnsafeRawPointer(p).assumingMemoryBound(to: UInt8.self)
    return withDecodedQueryComponent(UnsafeBufferPointer(start: raw, count: strlen(p)), body)
}

/// Calls `body` with the decoded bytes of a query component (`+` is a space, `%XX` a byte, malformed
/// escapes kept literally): the input itself when there is nothing to decode, else a temporary copy.
/// The bytes are not UTF-8-checked; `String(decoding:as:)` repairs them.
func withDecodedQueryComponent<R>(_ buf: UnsafeBufferPointer<UInt8>, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    let n = buf.count
    if !buf.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) { return body(buf) }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: n) { out in
        var i = 0, o = 0
        while i < n {
            let b = buf[i]
            if b == UInt8(ascii: "+") {
                out[o] = UInt8(ascii: " ")
                i += 1
            } else if b == UInt8(ascii: "%"), i + 2 < n, let h = hexValue(buf[i + 1]), let l = hexValue(buf[i + 2]) {
                out[o] = h << 4 | l
                i += 3
            } else {
                out[o] = b
                i += 1
            }
            o += 1
        }
        return body(UnsafeBufferPointer(rebasing: out[..<o]))
    }
}

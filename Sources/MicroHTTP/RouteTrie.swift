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

        init(
            literals: [(bytes: [UInt8], node: Node)], parameter: Node?, targets: [Target?], template: String?,
            allow: String, metrics: RouteMetrics?
        ) {
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
            targets[e.method.ordinal] = Target(
                method: e.method, template: e.template, parameterNames: names,
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

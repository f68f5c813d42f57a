/// Resolution: from a raw path and method to a target (or the problem that refuses it).
extension RouteTable {
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
            let detail =
                switch problem {
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
            return .refused(
                .methodNotAllowed("The method is not allowed for this resource.", allow: node.allow),
                template: node.template, slot: node.metrics)
        }
        var values: [String] = []
        if !captures.isEmpty {
            values.reserveCapacity(captures.count)
            for r in captures {
                guard let v = decodePathSegment(path, r) else {
                    return .refused(
                        .badRequest("A path segment decodes to an invalid value."), template: target.template,
                        slot: target.metrics)
                }
                values.append(v)
            }
        }
        return .matched(target, method: method, values: values)
    }
}

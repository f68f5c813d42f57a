import MicroHTTP
import Observability
import SheetStore

extension StateLimitExceeded {
    /// 409 `limit-exceeded`: the event conflicts with what the user already stores. The limit's name
    /// and maximum are extension members, so a client can tell which one without parsing `detail`.
    var problem: Problem {
        var problem = ProblemType.limitExceeded.problem(description)
        problem.extensionMembers = [("limit", .string(limit.rawValue)), ("maximum", .int(maximum))]
        return problem
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Raises the soft RLIMIT_NOFILE to the hard limit (capped at 1,048,576 when the hard limit is
/// unlimited). With the common soft limit of 1024, MHD hits EMFILE, suspends accept() and every client
/// hangs, health checks included. Returns (before, after) soft limits.
private let rlimInfinity = rlim_t.max  // RLIM_INFINITY is (rlim_t)-1, which Swift cannot import

func raiseOpenFileLimit() -> (before: Int, after: Int) {
    var rl = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &rl) == 0 else { return (1024, 1024) }
    let before = rl.rlim_cur == rlimInfinity ? Int.max : Int(rl.rlim_cur)
    let target: rlim_t = rl.rlim_max == rlimInfinity ? 1_048_576 : rl.rlim_max
    if rl.rlim_cur != rlimInfinity && rl.rlim_cur < target {
        var raised = rl
        raised.rlim_cur = target
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 {
            return (before, Int(target))
        }
    }
    return (before, before)
}

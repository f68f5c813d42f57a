public import SheetPolicy

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Timestamp {
    /// The wall clock (`CLOCK_REALTIME`): campaign rules are about calendar time, not uptime.
    @Sendable public static func now() -> Timestamp {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Timestamp(millisecondsSince1970: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }
}

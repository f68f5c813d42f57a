// The logger and the monotonic clock are in Observability; modules that import MicroHTTP see them
// without importing it themselves (handlers log, and time their work, through them).
@_exported public import Observability

import FoundationEssentials
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SheetService

// Start-up only: everything else lives in SheetService.
exit(SheetdCommand.run(
    arguments: Array(CommandLine.arguments.dropFirst()),
    environment: ProcessInfo.processInfo.environment,
    openAPIDocument: embeddedOpenAPIDocument))

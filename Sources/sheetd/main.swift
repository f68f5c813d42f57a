import FoundationEssentials
import SheetService

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Start-up only: everything else lives in SheetService.
exit(
    SheetdCommand.run(
        arguments: Array(CommandLine.arguments.dropFirst()),
        environment: ProcessInfo.processInfo.environment,
        openAPIDocument: embeddedOpenAPIDocument))

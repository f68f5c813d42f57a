import FoundationEssentials

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// The command line (SheetdCommand) runs; the service itself lives in the SheetService library.
exit(
    SheetdCommand.run(
        arguments: Array(CommandLine.arguments.dropFirst()),
        environment: ProcessInfo.processInfo.environment,
        openAPIDocument: embeddedOpenAPIDocument))

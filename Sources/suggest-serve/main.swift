import CSystem
import SuggestCLI

// The server's executable: the whole command line, with `serve` run in this process (`suggest serve` replaces
// itself with this program). It gathers the process's surroundings as `suggest` does and hands them over.
let io = CommandIO(
    standardOutput: FileDescriptorOutput(descriptor: 1),
    standardError: FileDescriptorOutput(descriptor: 2, autoFlush: true),
    standardInput: ByteSource(descriptor: 0), environment: ServeOptions.environment(), serve: ServeOptions.serve)
exit(SuggestCommandLine.run(Array(CommandLine.arguments.dropFirst()), io: io))

import CSystem
import SuggestCLI

// The executable only gathers the process's surroundings and hands them to the library, which tests call directly.
// Only the variables suggest reads: every process start pays for what it copies.
func processEnvironment() -> [String: String] {
    var environment: [String: String] = [:]
    for name in CommandIO.environmentVariables {
        if let value = getenv(name) { environment[name] = String(cString: value) }
    }
    return environment
}

// A closed pipe (`suggest export | head`) should end the process quietly, not kill it with a signal.
system_ignore_signal(SIGPIPE)
let io = CommandIO(
    standardOutput: FileDescriptorOutput(descriptor: 1),
    standardError: FileDescriptorOutput(descriptor: 2, autoFlush: true),
    standardInput: ByteSource(descriptor: 0), environment: processEnvironment())
exit(SuggestCommandLine.run(Array(CommandLine.arguments.dropFirst()), io: io))

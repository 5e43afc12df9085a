import SuggestCLI

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

// The executable only gathers the process's surroundings and hands them to the library, which tests call directly.
func processEnvironment() -> [String: String] {
    var environment: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
        let pair = String(cString: pointer)
        if let equals = pair.firstIndex(of: "=") {
            environment[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        }
        entry += 1
    }
    return environment
}

// A closed pipe (`suggest export | head`) should end the process quietly, not kill it with a signal.
signal(SIGPIPE, SIG_IGN)
let io = CommandIO(
    standardOutput: FileDescriptorOutput(descriptor: 1),
    standardError: FileDescriptorOutput(descriptor: 2, autoFlush: true),
    standardInput: ByteSource(descriptor: 0), environment: processEnvironment())
exit(SuggestCommandLine.run(Array(CommandLine.arguments.dropFirst()), io: io))

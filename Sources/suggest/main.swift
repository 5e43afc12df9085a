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
        // Split at the first "=" in bytes: NAME=VALUE needs no grapheme segmentation, which a search of the
        // String by Character would do for every variable of every process start.
        let pair = UnsafeRawBufferPointer(start: pointer, count: strlen(pointer))
        if let equals = pair.firstIndex(of: UInt8(ascii: "=")) {
            environment[String(decoding: pair[..<equals], as: UTF8.self)] =
                String(decoding: pair[(equals + 1)...], as: UTF8.self)
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

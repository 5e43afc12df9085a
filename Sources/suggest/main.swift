import CSystem
import SuggestCLI

// The executable only gathers the process's surroundings and hands them to the library, which tests call directly.
// Arguments and variables go as the bytes the process received: the library refuses any that is not UTF-8, where
// `CommandLine.arguments` and `String(cString:)` would have repaired it into another string.
func rawArguments() -> [[UInt8]] {
    var arguments: [[UInt8]] = []
    for index in 1..<Int(CommandLine.argc) {
        guard let argument = CommandLine.unsafeArgv[index] else { continue }
        arguments.append(
            Array(UnsafeBufferPointer(start: argument, count: strlen(argument))).map { UInt8(bitPattern: $0) })
    }
    return arguments
}

// Only the variables suggest reads, as `NAME=VALUE` entries: every process start pays for what it copies (and a
// dictionary of another type than the library's own costs a conformance look-up at start).
func rawEnvironment() -> [[UInt8]] {
    var environment: [[UInt8]] = []
    for name in CommandIO.environmentVariables {
        if let value = getenv(name) {
            environment.append(
                Array((name + "=").utf8)
                    + UnsafeBufferPointer(start: value, count: strlen(value)).map { UInt8(bitPattern: $0) })
        }
    }
    return environment
}

// A static executable's runtime finds its arguments through /proc/self/maps: without it (a sandbox that hides it)
// it gives none at all, not even the program's name, and the loop above would trap.
if CommandLine.argc < 1 {
    let message = Array("suggest: this process's arguments cannot be read (is /proc mounted and readable?)\n".utf8)
    _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

// `suggest serve` holds SIGHUP from its first moment, through the exec of the server, until the server's watcher
// takes it (a reload sent right after a start ended the process).
if CommandLine.argc > 1, let first = CommandLine.unsafeArgv[1], strcmp(first, "serve") == 0 {
    ProcessStart.holdHangUps()
}
ProcessStart.settle()
let io = CommandIO(
    standardOutput: FileDescriptorOutput(descriptor: 1),
    standardError: FileDescriptorOutput(descriptor: 2, autoFlush: true),
    standardInput: ByteSource(descriptor: 0), environment: [:], standardErrorIsTerminal: isatty(2) == 1)
exit(SuggestCommandLine.run(rawArguments: rawArguments(), rawEnvironment: rawEnvironment(), io: io))

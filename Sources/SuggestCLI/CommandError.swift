/// How a command fails: the contract's exit codes with a one-line message for standard error.
public enum CommandError: Error, Equatable, CustomStringConvertible {
    /// Bad usage or invalid input: exit 64.
    case usage(String)
    /// The command could not do its work (a store that cannot be opened): exit 1.
    case failure(String)
    /// An import stopped by a signal (Ctrl-C, SIGTERM) before its commit, having recorded nothing: exit 128 plus
    /// the signal's number, as the shell reports a process the signal ended.
    case interrupted(signal: Int32)

    /// The exit code the command line ends with: `ExitCode.usage` or `ExitCode.failure`.
    public var exitCode: Int32 {
        switch self {
        case .usage: return ExitCode.usage
        case .failure: return ExitCode.failure
        case .interrupted(let signal): return 128 + signal
        }
    }

    /// The message, without the `suggest COMMAND:` the command line puts before it.
    public var description: String {
        switch self {
        case .usage(let message), .failure(let message): return message
        case .interrupted: return "interrupted; nothing was imported (an import is all or nothing)"
        }
    }
}

/// The contract's exit codes.
public enum ExitCode {
    /// 0: the command did what was asked.
    public static let success: Int32 = 0
    /// 1: it could not (a store that cannot be opened, output that cannot be written).
    public static let failure: Int32 = 1
    /// 64 (`EX_USAGE`): bad usage or invalid input; nothing was changed.
    public static let usage: Int32 = 64
}

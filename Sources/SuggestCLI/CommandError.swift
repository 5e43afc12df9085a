/// How a command fails: the contract's exit codes with a one-line message for standard error.
public enum CommandError: Error, Equatable, CustomStringConvertible {
    /// Bad usage or invalid input: exit 64.
    case usage(String)
    /// The command could not do its work (a store that cannot be opened): exit 1.
    case failure(String)

    public var exitCode: Int32 {
        switch self {
        case .usage: return ExitCode.usage
        case .failure: return ExitCode.failure
        }
    }

    public var description: String {
        switch self {
        case .usage(let message), .failure(let message): return message
        }
    }
}

/// The contract's exit codes.
public enum ExitCode {
    public static let success: Int32 = 0
    public static let failure: Int32 = 1
    public static let usage: Int32 = 64
}

import CSystem

/// A file that could not be opened, read or written, with the system's reason.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path as the caller gave it (`-` or `standard output` for the standard streams).
    public var path: String
    /// What was being done: `open`, `read`, `write`.
    public var operation: String
    /// The system's message (`No such file or directory`).
    public var reason: String
    /// The `errno` the call failed with; 0 for a failure of the contents (a line too long).
    public var errorNumber: Int32

    init(path: String, operation: String, reason: String, errorNumber: Int32 = 0) {
        self.path = path
        self.operation = operation
        self.reason = reason
        self.errorNumber = errorNumber
    }

    /// Whether the path (or standard input) is a directory: the user's mistake, not the system's failure.
    public var isDirectory: Bool { errorNumber == EISDIR }

    /// `cannot read PATH: REASON`.
    public var description: String { "cannot \(operation) \(path): \(reason)" }
}

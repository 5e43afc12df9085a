/// A file that could not be opened, read or written, with the system's reason.
public struct FileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The path as the caller gave it (`-` or `standard output` for the standard streams).
    public var path: String
    /// What was being done: `open`, `read`, `write`.
    public var operation: String
    /// The system's message (`No such file or directory`).
    public var reason: String

    init(path: String, operation: String, reason: String) {
        self.path = path
        self.operation = operation
        self.reason = reason
    }

    /// `cannot read PATH: REASON`.
    public var description: String { "cannot \(operation) \(path): \(reason)" }
}

import CSystem

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

    /// The error for the current `errno`.
    static func current(path: String, operation: String) -> FileError {
        let code = system_errno()
        let reason = strerror(code).map { String(cString: $0) } ?? "error \(code)"
        return FileError(path: path, operation: operation, reason: reason)
    }

    /// `cannot read PATH: REASON`.
    public var description: String { "cannot \(operation) \(path): \(reason)" }
}

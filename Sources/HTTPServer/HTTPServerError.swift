/// Why the server (or the signal watcher) could not do what was asked: one line that says what is wrong and what to
/// do about it.
public struct HTTPServerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, in one line, with what to do.
    public var message: String

    /// An error with its message.
    /// - Parameter message: one line that says what is wrong and what to do.
    init(_ message: String) { self.message = message }

    /// The message.
    public var description: String { message }
}

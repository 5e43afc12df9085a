import CSystem

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

    /// The C library's words for an `errno` value, which the messages about a failed system call end with.
    static func describe(_ code: Int32) -> String {
        strerror(code).map { String(cString: $0) } ?? "error \(code)"
    }

    /// `describe(_:)` of the calling thread's `errno` now.
    static func describeLast() -> String { describe(system_errno()) }
}

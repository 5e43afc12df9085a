/// Input that breaks the donation contract: which field, what is wrong and, in a file, which line.
///
/// The message is written for the person at the terminal: it names the field by its JSON path
/// (`intent.recipients[0].personHandle.type`) and says what would be accepted.
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSON path of the offending field, or `nil` when the problem is the document itself.
    public var field: String?
    /// What is wrong and what would be accepted, without the field or the line (`description` adds them).
    public var message: String
    /// The 1-based line in a JSON Lines file, when the input came from one.
    public var line: Int?

    /// - Parameters:
    ///   - field: the JSON path of the offending field, `nil` for the document as a whole.
    ///   - message: one line: what is wrong and what would be accepted.
    ///   - line: the 1-based line of a JSON Lines file, `nil` outside one (a reader adds it with `at(line:)`).
    public init(field: String?, message: String, line: Int? = nil) {
        self.field = field
        self.message = message
        self.line = line
    }

    public var description: String {
        var text = line.map { "line \($0): " } ?? ""
        if let field { text += "\(field): " }
        return text + message
    }

    /// The same error located at `line` of a file.
    public func at(line: Int) -> InputError {
        var copy = self
        copy.line = line
        return copy
    }
}

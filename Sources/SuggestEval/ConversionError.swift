/// A line of a public message history that the converter cannot read: which source, which line, what is wrong.
public struct ConversionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file (or `text`) the line came from.
    public var source: String
    /// The line's number, 1-based.
    public var line: Int
    /// What is wrong with it, starting in lower case.
    public var message: String

    init(source: String, line: Int, message: String) {
        self.source = source
        self.line = line
        self.message = message
    }

    /// `source, line N: message`.
    public var description: String { "\(source), line \(line): \(message)" }
}

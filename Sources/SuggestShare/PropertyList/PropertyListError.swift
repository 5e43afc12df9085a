/// Why bytes are not a property list, and where: a line and column in XML, a byte offset in a binary plist.
public struct PropertyListError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the input the problem was found.
    public enum Position: Sendable, Equatable, CustomStringConvertible {
        /// A 1-based line and column (columns count characters, a tab counts as one) in an XML plist.
        case line(Int, column: Int)
        /// A 0-based byte offset into a binary plist.
        case byte(Int)

        /// `line 3, column 12` or `byte 40`.
        public var description: String {
            switch self {
            case .line(let line, let column): return "line \(line), column \(column)"
            case .byte(let offset): return "byte \(offset)"
            }
        }
    }

    /// Where the problem is.
    public var position: Position
    /// What is wrong, in a phrase that starts in lower case ("expected '</string>' ...").
    public var message: String

    init(position: Position, message: String) {
        self.position = position
        self.message = message
    }

    /// The position, then the message: `line 3, column 12: expected ...`.
    public var description: String { "\(position): \(message)" }
}

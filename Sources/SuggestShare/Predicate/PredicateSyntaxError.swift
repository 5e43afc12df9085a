/// Why an activation-rule predicate does not parse, and where: a character offset into the rule text.
///
/// `description` is one line for a terminal ("character 57 (line 3, column 12): expected ')' ..."); `excerpt`
/// shows the offending line of the rule with a caret under the place, for a fuller report.
public struct PredicateSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The 0-based offset of the problem in the rule, counted in characters (Unicode scalars).
    public var offset: Int
    /// What is wrong, starting in lower case ("expected ')' to close SUBQUERY, found '=='").
    public var message: String
    /// The whole rule text, as written in the property list.
    public var rule: String

    init(offset: Int, message: String, rule: String) {
        self.offset = offset
        self.message = message
        self.rule = rule
    }

    /// A place in the rule text as an editor shows it.
    public struct Location: Sendable, Hashable {
        /// 1-based.
        public var line: Int
        /// 1-based, in characters (Unicode scalars); a tab counts as one.
        public var column: Int
    }

    /// The line and column of `offset` within the rule (rules are often written over several lines).
    /// - Complexity: O(n) in the length of the rule up to `offset`.
    public var location: Location {
        var line = 1
        var column = 1
        for (position, scalar) in rule.unicodeScalars.enumerated() {
            if position >= offset { break }
            if scalar == "\n" {
                line += 1
                column = 1
            } else {
                column += 1
            }
        }
        return Location(line: line, column: column)
    }

    /// The error in one line: the character, its line and column when the rule has several lines, and the message.
    public var description: String {
        let line = location.line
        let column = location.column
        let place = line == 1 ? "character \(offset + 1)" : "character \(offset + 1) (line \(line), column \(column))"
        return "the predicate does not parse at \(place): \(message)"
    }

    /// The rule line that holds the problem and, under it, a caret at the offending character.
    ///
    /// Tabs before the caret are kept as tabs so that the caret lines up in a terminal.
    public var excerpt: String {
        let scalars = Array(rule.unicodeScalars)
        let target = min(max(offset, 0), scalars.count)
        var start = target
        while start > 0, scalars[start - 1] != "\n" { start -= 1 }
        var end = target
        while end < scalars.count, scalars[end] != "\n" { end += 1 }
        var line = String.UnicodeScalarView()
        line.append(contentsOf: scalars[start..<end])
        var caret = ""
        for scalar in scalars[start..<target] { caret += scalar == "\t" ? "\t" : " " }
        return String(line) + "\n" + caret + "^"
    }
}

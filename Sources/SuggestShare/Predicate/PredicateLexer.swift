/// Splits an activation-rule predicate into tokens; keywords are case-insensitive.
///
/// Strings take single or double quotes with backslash escapes (`\"`, `\'`, `\\`, `\n`, `\t`, `\r`). Numbers are
/// integers with an optional minus sign. `=` is read as `==`, `<>` as `!=`, `=<` as `<=` and `=>` as `>=`, as
/// NSPredicate does.
struct PredicateLexer {
    private let scalars: [Unicode.Scalar]
    private let rule: String
    private var index = 0

    init(_ rule: String) {
        self.rule = rule
        self.scalars = Array(rule.unicodeScalars)
    }

    /// All tokens of the rule, ending with `.end`.
    /// - Throws: `PredicateSyntaxError` at the first character that cannot start a token.
    /// - Complexity: O(n) in the length of the rule.
    static func tokens(of rule: String) throws(PredicateSyntaxError) -> [PredicateToken] {
        var lexer = PredicateLexer(rule)
        var tokens: [PredicateToken] = []
        while true {
            var token = try lexer.next()
            token.length = lexer.index - token.offset
            tokens.append(token)
            if token.kind == .end { return tokens }
        }
    }

    private func error(_ message: String, at offset: Int) -> PredicateSyntaxError {
        PredicateSyntaxError(offset: offset, message: message, rule: rule)
    }

    private func scalar(at position: Int) -> Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    private static func isIdentifierStart(_ scalar: Unicode.Scalar) -> Bool {
        (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || scalar == "_"
    }

    private static func isIdentifierPart(_ scalar: Unicode.Scalar) -> Bool {
        isIdentifierStart(scalar) || isDigit(scalar)
    }

    private static func isDigit(_ scalar: Unicode.Scalar) -> Bool { scalar >= "0" && scalar <= "9" }

    private mutating func next() throws(PredicateSyntaxError) -> PredicateToken {
        while let current = scalar(at: index), current == " " || current == "\t" || current == "\n" || current == "\r" {
            index += 1
        }
        let start = index
        guard let current = scalar(at: index) else { return PredicateToken(kind: .end, offset: start) }

        func token(_ kind: PredicateToken.Kind, length: Int) -> PredicateToken {
            index += length
            return PredicateToken(kind: kind, offset: start)
        }
        let following = scalar(at: index + 1)
        switch current {
        case "(": return token(.symbol(.leftParenthesis), length: 1)
        case ")": return token(.symbol(.rightParenthesis), length: 1)
        case ",": return token(.symbol(.comma), length: 1)
        case ".": return token(.symbol(.dot), length: 1)
        case "[": return token(.symbol(.leftBracket), length: 1)
        case "]": return token(.symbol(.rightBracket), length: 1)
        case "=":
            if following == "=" { return token(.symbol(.equal), length: 2) }
            if following == "<" { return token(.symbol(.lessOrEqual), length: 2) }
            if following == ">" { return token(.symbol(.greaterOrEqual), length: 2) }
            return token(.symbol(.equal), length: 1)
        case "!":
            if following == "=" { return token(.symbol(.notEqual), length: 2) }
            return token(.symbol(.not), length: 1)
        case "<":
            if following == "=" { return token(.symbol(.lessOrEqual), length: 2) }
            if following == ">" { return token(.symbol(.notEqual), length: 2) }
            return token(.symbol(.less), length: 1)
        case ">":
            if following == "=" { return token(.symbol(.greaterOrEqual), length: 2) }
            return token(.symbol(.greater), length: 1)
        case "&":
            guard following == "&" else { throw error("'&' must be doubled: write && (or AND)", at: start) }
            return token(.symbol(.and), length: 2)
        case "|":
            guard following == "|" else { throw error("'|' must be doubled: write || (or OR)", at: start) }
            return token(.symbol(.or), length: 2)
        case "\"", "'":
            return PredicateToken(kind: .string(try readString(quote: current)), offset: start)
        case "$":
            index += 1
            guard let first = scalar(at: index), Self.isIdentifierStart(first) else {
                throw error("'$' must be followed by a variable name, as in $attachment", at: start)
            }
            return PredicateToken(kind: .variable(readIdentifier()), offset: start)
        case "@":
            index += 1
            guard let first = scalar(at: index), Self.isIdentifierStart(first) else {
                throw error("'@' must be followed by an operator name, as in @count", at: start)
            }
            return PredicateToken(kind: .atKeyword(readIdentifier()), offset: start)
        case "-" where following.map(Self.isDigit) == true:
            index += 1
            return PredicateToken(kind: .integer(try readInteger(negative: true, start: start)), offset: start)
        default:
            if Self.isDigit(current) {
                return PredicateToken(kind: .integer(try readInteger(negative: false, start: start)), offset: start)
            }
            if Self.isIdentifierStart(current) { return try readWord(start: start) }
            if current == "{" {
                // The lexer meets the brace before the parser looks at the IN or BETWEEN in front of it: named here.
                throw error(
                    "unexpected character '{': aggregates, such as IN {1, 2} and BETWEEN {1, 2} take, are not "
                        + "supported in activation rules", at: start)
            }
            throw error("unexpected character '\(current.escaped(asASCII: true))'", at: start)
        }
    }

    private mutating func readIdentifier() -> String {
        var name = String.UnicodeScalarView()
        while let current = scalar(at: index), Self.isIdentifierPart(current) {
            name.append(current)
            index += 1
        }
        return String(name)
    }

    /// An identifier or keyword; `UTI-CONFORMS-TO` and `UTI-EQUALS` contain hyphens and are matched whole.
    private mutating func readWord(start: Int) throws(PredicateSyntaxError) -> PredicateToken {
        let word = readIdentifier()
        let upper = word.uppercased()
        if upper == "UTI", scalar(at: index) == "-" {
            for keyword in [PredicateToken.Keyword.utiConformsTo, .utiEquals] {
                let tail = Array(keyword.rawValue.unicodeScalars.dropFirst(3))
                let end = index + tail.count
                if end <= scalars.count,
                    String(String.UnicodeScalarView(scalars[index..<end])).uppercased()
                        == String(
                            String.UnicodeScalarView(tail)),
                    scalar(at: end).map(Self.isIdentifierPart) != true
                {
                    index = end
                    return PredicateToken(kind: .keyword(keyword), offset: start)
                }
            }
            throw error("unknown operator; did you mean UTI-CONFORMS-TO or UTI-EQUALS?", at: start)
        }
        if let keyword = PredicateToken.Keyword(rawValue: upper), keyword != .utiConformsTo, keyword != .utiEquals {
            return PredicateToken(kind: .keyword(keyword), offset: start)
        }
        return PredicateToken(kind: .identifier(word), offset: start)
    }

    private mutating func readInteger(negative: Bool, start: Int) throws(PredicateSyntaxError) -> Int {
        var value = 0
        while let current = scalar(at: index), Self.isDigit(current) {
            let digit = Int(current.value - 48)
            let (shifted, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) =
                negative
                ? shifted.subtractingReportingOverflow(digit)
                : shifted.addingReportingOverflow(digit)
            guard !overflow1, !overflow2 else { throw error("the number is too large", at: start) }
            value = sum
            index += 1
        }
        if scalar(at: index) == ".", let after = scalar(at: index + 1), Self.isDigit(after) {
            throw error("only whole numbers are supported in activation rules", at: start)
        }
        if let after = scalar(at: index), Self.isIdentifierStart(after) {
            throw error("a number must not run into a name; put a space or an operator between them", at: index)
        }
        return value
    }

    private mutating func readString(quote: Unicode.Scalar) throws(PredicateSyntaxError) -> String {
        let start = index
        index += 1
        var text = String.UnicodeScalarView()
        while let current = scalar(at: index) {
            index += 1
            if current == quote { return String(text) }
            if current == "\\" {
                guard let escaped = scalar(at: index) else { break }
                index += 1
                switch escaped {
                case "\\", "\"", "'": text.append(escaped)
                case "n": text.append("\n")
                case "t": text.append("\t")
                case "r": text.append("\r")
                default:
                    throw error("unknown escape '\\\(escaped.escaped(asASCII: true))' in a string", at: index - 2)
                }
            } else {
                text.append(current)
            }
        }
        throw error("unterminated string (no closing \(quote))", at: start)
    }
}

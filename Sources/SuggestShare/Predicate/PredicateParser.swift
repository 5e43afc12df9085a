/// Recursive-descent parser for activation-rule predicates (the grammar in share-flow.md §2).
///
/// ```
/// or         = and { ("OR" | "||") and } ;
/// and        = not { ("AND" | "&&") not } ;
/// not        = ("NOT" | "!") not | "(" or ")" | TRUEPREDICATE | FALSEPREDICATE | comparison ;
/// comparison = [ "ANY" | "SOME" | "ALL" | "NONE" ] operand op operand ;
/// operand    = subquery { component } | keypath | integer | string | YES | NO | NIL ;
/// subquery   = "SUBQUERY" "(" operand "," var "," or ")" ;
/// keypath    = ( ident | var | SELF ) { component } ;
/// component  = "." ( ident | "@count" ) | "[" ( integer | FIRST | LAST | SIZE ) "]" ;
/// ```
/// Nesting (parentheses, NOT, SUBQUERY) deeper than `maximumDepth` is refused, so hostile rules cannot exhaust
/// the stack.
struct PredicateParser {
    static let maximumDepth = 64

    private let tokens: [PredicateToken]
    private let rule: String
    private var position = 0
    private var depth = 0
    /// Variables bound by the enclosing SUBQUERYs, innermost last.
    private var scope: [String] = []

    private init(tokens: [PredicateToken], rule: String) {
        self.tokens = tokens
        self.rule = rule
    }

    static func parse(_ rule: String) throws(PredicateSyntaxError) -> ActivationPredicate.Node {
        var parser = PredicateParser(tokens: try PredicateLexer.tokens(of: rule), rule: rule)
        if parser.current.kind == .end {
            throw parser.error("the rule is empty; write TRUEPREDICATE or a predicate")
        }
        let node = try parser.parseOr()
        guard parser.current.kind == .end else {
            throw parser.error("expected AND, OR or the end of the rule, found \(parser.current.display)")
        }
        return node
    }

    // MARK: - Tokens

    private var current: PredicateToken { tokens[min(position, tokens.count - 1)] }

    /// The offset just past the previous token, for the end of a node's range.
    private var previousEnd: Int {
        guard position > 0 else { return 0 }
        let token = tokens[position - 1]
        return token.offset + token.length
    }

    private mutating func advance() { if position < tokens.count - 1 { position += 1 } }

    private func error(_ message: String, at offset: Int? = nil) -> PredicateSyntaxError {
        PredicateSyntaxError(offset: offset ?? current.offset, message: message, rule: rule)
    }

    private func isKeyword(_ keyword: PredicateToken.Keyword) -> Bool { current.kind == .keyword(keyword) }

    private func isSymbol(_ symbol: PredicateToken.Symbol) -> Bool { current.kind == .symbol(symbol) }

    private mutating func expect(_ symbol: PredicateToken.Symbol, _ context: String) throws(PredicateSyntaxError) {
        guard isSymbol(symbol) else {
            throw error("expected '\(symbol.rawValue)' \(context), found \(current.display)")
        }
        advance()
    }

    private mutating func nest() throws(PredicateSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("the predicate nests deeper than \(Self.maximumDepth) levels")
        }
    }

    // MARK: - Predicates

    private mutating func parseOr() throws(PredicateSyntaxError) -> ActivationPredicate.Node {
        let start = current.offset
        var operands = [try parseAnd()]
        while isKeyword(.or) || isSymbol(.or) {
            advance()
            operands.append(try parseAnd())
        }
        return operands.count == 1 ? operands[0] : .or(operands, range: start..<previousEnd)
    }

    private mutating func parseAnd() throws(PredicateSyntaxError) -> ActivationPredicate.Node {
        let start = current.offset
        var operands = [try parseNot()]
        while isKeyword(.and) || isSymbol(.and) {
            advance()
            operands.append(try parseNot())
        }
        return operands.count == 1 ? operands[0] : .and(operands, range: start..<previousEnd)
    }

    private mutating func parseNot() throws(PredicateSyntaxError) -> ActivationPredicate.Node {
        let start = current.offset
        if isKeyword(.not) || isSymbol(.not) {
            advance()
            try nest()
            defer { depth -= 1 }
            let operand = try parseNot()
            return .not(operand, range: start..<previousEnd)
        }
        if isKeyword(.truePredicate) || isKeyword(.falsePredicate) {
            let value = isKeyword(.truePredicate)
            advance()
            return .constant(value)
        }
        // A parenthesis always opens a predicate: activation rules do not parenthesize operands.
        if isSymbol(.leftParenthesis) {
            advance()
            try nest()
            defer { depth -= 1 }
            let inner = try parseOr()
            try expect(.rightParenthesis, "to close the parenthesis opened at character \(start + 1)")
            return inner
        }
        return .comparison(try parseComparison())
    }

    private mutating func parseComparison() throws(PredicateSyntaxError) -> ActivationPredicate.Comparison {
        let start = current.offset
        var modifier = ActivationPredicate.Modifier.direct
        switch current.kind {
        case .keyword(.any), .keyword(.some): modifier = .any
        case .keyword(.all): modifier = .all
        case .keyword(.none): modifier = .none
        default: break
        }
        if modifier != .direct { advance() }
        let lhs = try parseOperand()
        let op: ActivationPredicate.Operator
        switch current.kind {
        case .symbol(.equal): op = .equal
        case .symbol(.notEqual): op = .notEqual
        case .symbol(.less): op = .less
        case .symbol(.lessOrEqual): op = .lessOrEqual
        case .symbol(.greater): op = .greater
        case .symbol(.greaterOrEqual): op = .greaterOrEqual
        case .keyword(.utiConformsTo): op = .conformsTo
        case .keyword(.utiEquals): op = .equalsType
        case .keyword(let keyword)
        where [.in, .contains, .beginsWith, .endsWith, .like, .matches, .between].contains(keyword):
            throw error(
                "the operator \(keyword.rawValue) is not supported in activation rules; use ==, !=, <, <=, "
                    + ">, >=, UTI-CONFORMS-TO or UTI-EQUALS")
        default:
            throw error(
                "expected a comparison operator (==, !=, <, <=, >, >=, UTI-CONFORMS-TO, UTI-EQUALS), "
                    + "found \(current.display)")
        }
        advance()
        let rhs = try parseOperand()
        return ActivationPredicate.Comparison(
            modifier: modifier, lhs: lhs, op: op, rhs: rhs, range: start..<previousEnd)
    }

    // MARK: - Operands

    private mutating func parseOperand() throws(PredicateSyntaxError) -> ActivationPredicate.Expression {
        let token = current
        switch token.kind {
        case .integer(let value):
            advance()
            return .integer(value)
        case .string(let text):
            advance()
            return .string(text)
        case .keyword(.yes), .keyword(.true):
            advance()
            return .bool(true)
        case .keyword(.no), .keyword(.false):
            advance()
            return .bool(false)
        case .keyword(.nil), .keyword(.null):
            advance()
            return .null
        case .keyword(.subquery):
            let subquery = try parseSubquery()
            return .subquery(subquery, path: try parseComponents())
        case .keyword(.self):
            advance()
            return .keyPath(.init(root: .evaluatedObject, components: try parseComponents()))
        case .identifier(let name):
            advance()
            return .keyPath(.init(root: .key(name), components: try parseComponents()))
        case .variable(let name):
            guard scope.contains(name) else {
                let bound =
                    scope.isEmpty
                    ? "no variables are bound here"
                    : "bound here: "
                        + scope.map { "$" + $0 }.joined(separator: ", ")
                throw error("$\(name) is not bound by an enclosing SUBQUERY (\(bound))")
            }
            advance()
            return .keyPath(.init(root: .variable(name), components: try parseComponents()))
        case .keyword(.any), .keyword(.some), .keyword(.all), .keyword(.none):
            throw error("\(token.display) must come first in a comparison, before the left operand")
        case .keyword(.first), .keyword(.last), .keyword(.size), .keyword(.function), .keyword(.ternary):
            throw error("\(token.display) is not supported in activation rules")
        case .atKeyword(let name):
            throw error("'@\(name)' must follow a key path, as in attachments.@count")
        case .end:
            throw error("the rule ends where an operand (a key path, number or string) was expected")
        default:
            throw error("expected an operand (a key path, number, string or SUBQUERY), found \(token.display)")
        }
    }

    /// `{ "." ( ident | "@count" ) | "[" ( integer | FIRST | LAST | SIZE ) "]" }`
    private mutating func parseComponents() throws(PredicateSyntaxError) -> [ActivationPredicate.KeyPath.Component] {
        var components: [ActivationPredicate.KeyPath.Component] = []
        while isSymbol(.dot) || isSymbol(.leftBracket) {
            if isSymbol(.leftBracket) {
                components.append(try parseSubscript())
                continue
            }
            advance()
            switch current.kind {
            case .identifier(let name):
                components.append(.key(name))
            case .atKeyword(let name):
                guard name.lowercased() == "count" else {
                    throw error("'@\(name)' is not supported; activation rules use only @count")
                }
                components.append(.count)
            case .keyword(let keyword):
                // Keys that read like keywords (`size`, `first`) are written as keys after a dot.
                components.append(.key(keyword.rawValue.lowercased()))
            default:
                throw error("expected a key or @count after '.', found \(current.display)")
            }
            advance()
        }
        return components
    }

    /// `"[" ( integer | FIRST | LAST | SIZE ) "]"`, as in `extensionItems[0].attachments` (a rule apps ship).
    private mutating func parseSubscript() throws(PredicateSyntaxError) -> ActivationPredicate.KeyPath.Component {
        let start = current.offset
        advance()
        let component: ActivationPredicate.KeyPath.Component
        switch current.kind {
        case .integer(let position) where position >= 0: component = .index(position)
        case .keyword(.first): component = .first
        case .keyword(.last): component = .last
        case .keyword(.size): component = .size
        default:
            throw error("expected a position from 0, FIRST, LAST or SIZE after '[', found \(current.display)")
        }
        advance()
        try expect(.rightBracket, "to close the '[' at character \(start + 1)")
        return component
    }

    private mutating func parseSubquery() throws(PredicateSyntaxError) -> ActivationPredicate.Subquery {
        let start = current.offset
        advance()
        try expect(.leftParenthesis, "after SUBQUERY")
        try nest()
        defer { depth -= 1 }
        let collection = try parseOperand()
        try expect(.comma, "after the SUBQUERY's collection")
        guard case .variable(let variable) = current.kind else {
            throw error("expected the SUBQUERY's variable (such as $attachment), found \(current.display)")
        }
        advance()
        try expect(.comma, "after the SUBQUERY's variable")
        scope.append(variable)
        let predicate = try parseOr()
        scope.removeLast()
        try expect(.rightParenthesis, "to close the SUBQUERY opened at character \(start + 1)")
        return ActivationPredicate.Subquery(
            collection: collection, variable: variable, predicate: predicate, range: start..<previousEnd)
    }
}

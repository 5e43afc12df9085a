/// One lexical token of an activation-rule predicate, with the character offset where it starts.
struct PredicateToken: Equatable {
    enum Kind: Equatable {
        /// A key name such as `extensionItems` or `registeredTypeIdentifiers`.
        case identifier(String)
        /// `$name`.
        case variable(String)
        /// `@count` and other `@` operators (only `@count` is accepted by the parser).
        case atKeyword(String)
        case integer(Int)
        case string(String)
        case keyword(Keyword)
        case symbol(Symbol)
        case end
    }

    /// Reserved words, matched case-insensitively.
    enum Keyword: String, CaseIterable {
        case truePredicate = "TRUEPREDICATE"
        case falsePredicate = "FALSEPREDICATE"
        case and = "AND"
        case or = "OR"
        case not = "NOT"
        case any = "ANY"
        case some = "SOME"
        case all = "ALL"
        case none = "NONE"
        case subquery = "SUBQUERY"
        case utiConformsTo = "UTI-CONFORMS-TO"
        case utiEquals = "UTI-EQUALS"
        case yes = "YES"
        case no = "NO"
        case `true` = "TRUE"
        case `false` = "FALSE"
        case `nil` = "NIL"
        case null = "NULL"
        case `self` = "SELF"
        // NSPredicate operators that activation rules do not use: recognized so that the error can name them.
        case `in` = "IN"
        case contains = "CONTAINS"
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case like = "LIKE"
        case matches = "MATCHES"
        case between = "BETWEEN"
        case first = "FIRST"
        case last = "LAST"
        case size = "SIZE"
        case function = "FUNCTION"
        case ternary = "TERNARY"
    }

    enum Symbol: String {
        case leftParenthesis = "("
        case rightParenthesis = ")"
        case comma = ","
        case dot = "."
        case leftBracket = "["
        case rightBracket = "]"
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case and = "&&"
        case or = "||"
        case not = "!"
    }

    var kind: Kind
    /// 0-based character offset of the token's first character in the rule.
    var offset: Int
    /// How many characters of the rule the token spans.
    var length = 0

    /// How the token reads in an error message.
    var display: String {
        switch kind {
        case .identifier(let name): return "'\(name)'"
        case .variable(let name): return "'$\(name)'"
        case .atKeyword(let name): return "'@\(name)'"
        case .integer(let value): return "'\(value)'"
        case .string(let text): return "the string \"\(text.prefix(40))\""
        case .keyword(let keyword): return keyword.rawValue
        case .symbol(let symbol): return "'\(symbol.rawValue)'"
        case .end: return "the end of the rule"
        }
    }
}

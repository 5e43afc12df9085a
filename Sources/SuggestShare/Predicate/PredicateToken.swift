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
        case truePredicate = "TRUEPREDICATE", falsePredicate = "FALSEPREDICATE"
        case and = "AND", or = "OR", not = "NOT"
        case any = "ANY", some = "SOME", all = "ALL", none = "NONE"
        case subquery = "SUBQUERY", utiConformsTo = "UTI-CONFORMS-TO", utiEquals = "UTI-EQUALS"
        case yes = "YES", no = "NO", `true` = "TRUE", `false` = "FALSE", `nil` = "NIL", null = "NULL"
        case `self` = "SELF"
        // NSPredicate operators that activation rules do not use: recognized so that the error can name them.
        case `in` = "IN", contains = "CONTAINS", beginsWith = "BEGINSWITH", endsWith = "ENDSWITH", like = "LIKE"
        case matches = "MATCHES", between = "BETWEEN", first = "FIRST", last = "LAST", size = "SIZE"
        case function = "FUNCTION", ternary = "TERNARY"
    }

    enum Symbol: String {
        case leftParenthesis = "(", rightParenthesis = ")", comma = ",", dot = "."
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
        case and = "&&", or = "||", not = "!"
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

/// The string form of an activation rule: an NSPredicate over the shared items, parsed and ready to evaluate.
///
/// The grammar is the subset of NSPredicate that activation rules use (share-flow.md §2): `TRUEPREDICATE`,
/// `FALSEPREDICATE`, `AND`/`&&`, `OR`/`||`, `NOT`/`!`, parentheses, comparisons with `==`, `!=`, `<`, `<=`, `>`,
/// `>=`, `UTI-CONFORMS-TO` and `UTI-EQUALS` under an optional `ANY`, `SOME`, `ALL` or `NONE`, key paths from a
/// key or a `$variable` with `.@count` and subscripts (`[0]`, `[FIRST]`, `[LAST]`, `[SIZE]`),
/// `SUBQUERY(collection, $variable, predicate)`, integers and quoted
/// strings. Keywords are case-insensitive. A variable must be bound by an enclosing `SUBQUERY`: a misspelt
/// `$attachement` is a syntax error, not a rule that silently never matches.
///
/// ```swift
/// let rule = try ActivationPredicate(parsing: """
///     SUBQUERY(extensionItems, $item,
///         SUBQUERY($item.attachments, $attachment,
///             ANY $attachment.registeredTypeIdentifiers UTI-CONFORMS-TO "public.url").@count == 1).@count == 1
///     """)
/// rule.evaluate(request.matchingDictionary, types: target.types)
/// ```
public struct ActivationPredicate: Sendable, Equatable, CustomStringConvertible {
    /// The rule text as written.
    public let source: String
    let root: Node

    /// Parses a predicate.
    /// - Throws: `PredicateSyntaxError` with the character offset of the first problem.
    /// - Complexity: O(n) in the length of the rule.
    public init(parsing source: String) throws(PredicateSyntaxError) {
        // The lexer holds every token of the rule before the parser reads them, about 50 bytes a character: a
        // 16 MiB rule took 780 MB to be refused at its 66th character.
        guard source.utf8.count <= Self.maximumSourceBytes else {
            throw PredicateSyntaxError(
                offset: 0,
                message: "the rule is \(source.utf8.count) bytes long; a rule may have at most \(Self.maximumSourceBytes)",
                rule: String(decoding: source.utf8.prefix(200), as: UTF8.self))
        }
        self.source = source
        self.root = try PredicateParser.parse(source)
    }

    /// The longest rule read: far more than Apple's examples (a few hundred bytes) or any real rule.
    public static let maximumSourceBytes = 64 << 10

    /// `TRUEPREDICATE`: activates for anything (Apple: for development only).
    static let alwaysTrue = ActivationPredicate(source: "TRUEPREDICATE", root: .constant(true))

    init(source: String, root: Node) {
        self.source = source
        self.root = root
    }

    /// The rule text as written.
    public var description: String { source }

    /// Two predicates are equal when they have the same structure, however they are spelt (`AND` or `&&`,
    /// white space, quotes).
    public static func == (lhs: ActivationPredicate, rhs: ActivationPredicate) -> Bool { lhs.root == rhs.root }

    // MARK: - Syntax tree

    /// A predicate: something that holds or not.
    indirect enum Node: Sendable, Equatable {
        case constant(Bool)
        case not(Node, range: Range<Int>)
        case and([Node], range: Range<Int>)
        case or([Node], range: Range<Int>)
        case comparison(Comparison)

        /// Structural equality: where the nodes are written does not matter.
        static func == (lhs: Node, rhs: Node) -> Bool {
            switch (lhs, rhs) {
            case (.constant(let a), .constant(let b)): return a == b
            case (.not(let a, _), .not(let b, _)): return a == b
            case (.and(let a, _), .and(let b, _)), (.or(let a, _), .or(let b, _)): return a == b
            case (.comparison(let a), .comparison(let b)): return a == b
            default: return false
            }
        }

        /// Where the node is written in the rule, in characters.
        var range: Range<Int> {
            switch self {
            case .constant: return 0..<0
            case .not(_, let range), .and(_, let range), .or(_, let range): return range
            case .comparison(let comparison): return comparison.range
            }
        }
    }

    /// `[ANY|ALL|NONE] lhs op rhs`.
    struct Comparison: Sendable, Equatable {
        var modifier: Modifier
        var lhs: Expression
        var op: Operator
        var rhs: Expression
        var range: Range<Int>

        static func == (lhs: Comparison, rhs: Comparison) -> Bool {
            lhs.modifier == rhs.modifier && lhs.lhs == rhs.lhs && lhs.op == rhs.op && lhs.rhs == rhs.rhs
        }
    }

    enum Modifier: Sendable, Equatable {
        /// No modifier: the operands are compared as they are.
        case direct
        /// `ANY` or `SOME`: some element of the left collection satisfies the comparison.
        case any
        /// `ALL`: every element does (true for an empty collection).
        case all
        /// `NONE`: no element does.
        case none
    }

    enum Operator: String, Sendable, Equatable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case conformsTo = "UTI-CONFORMS-TO"
        case equalsType = "UTI-EQUALS"
    }

    /// A value in a comparison.
    indirect enum Expression: Sendable, Equatable {
        case keyPath(KeyPath)
        case integer(Int)
        case string(String)
        case bool(Bool)
        case null
        /// `SUBQUERY(...)` followed by key path components, usually `.@count`.
        case subquery(Subquery, path: [KeyPath.Component])
    }

    /// `key.key.@count` or `$variable.key`, or `SELF`.
    struct KeyPath: Sendable, Equatable {
        enum Root: Sendable, Equatable {
            case key(String)
            case variable(String)
            case evaluatedObject
        }

        enum Component: Sendable, Equatable {
            case key(String)
            case count
            /// `[n]`: an array's element at a position from 0 (none past its end).
            case index(Int)
            /// `[FIRST]`, `[LAST]`: an array's first or last element (none of an empty one).
            case first, last
            /// `[SIZE]`: an array's or dictionary's count, as `@count`.
            case size
        }

        var root: Root
        var components: [Component]
    }

    /// `SUBQUERY(collection, $variable, predicate)`: the elements of the collection for which the predicate holds.
    struct Subquery: Sendable, Equatable {
        var collection: Expression
        var variable: String
        var predicate: Node
        var range: Range<Int>

        static func == (lhs: Subquery, rhs: Subquery) -> Bool {
            lhs.collection == rhs.collection && lhs.variable == rhs.variable && lhs.predicate == rhs.predicate
        }
    }
}

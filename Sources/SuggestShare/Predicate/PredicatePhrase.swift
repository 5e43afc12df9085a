/// Puts predicate syntax into English for refusal reasons.
struct PredicatePhrase {
    typealias Node = ActivationPredicate.Node
    typealias Expression = ActivationPredicate.Expression

    private let scalars: [Unicode.Scalar]

    init(source: String) { scalars = Array(source.unicodeScalars) }

    /// The rule text of `range` with its white space collapsed, in backticks.
    func quoted(_ range: Range<Int>) -> String {
        let lower = max(0, min(range.lowerBound, scalars.count))
        let upper = max(lower, min(range.upperBound, scalars.count))
        var text = ""
        var pendingSpace = false
        for scalar in scalars[lower..<upper] {
            if scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r" {
                pendingSpace = !text.isEmpty
                continue
            }
            if pendingSpace { text += " " }
            pendingSpace = false
            text.unicodeScalars.append(scalar)
        }
        if text.count > 160 { text = String(text.prefix(157)) + "..." }
        return "`\(text)`"
    }

    /// A node as it was written; a constant has no place of its own in the text (it was an empty quote), so its
    /// keyword.
    private func quoted(_ node: Node) -> String {
        if case .constant(let value) = node { return value ? "`TRUEPREDICATE`" : "`FALSEPREDICATE`" }
        return quoted(node.range)
    }

    // MARK: - Requirements at the top level

    /// A requirement on the whole request: "exactly 1 extension item whose ...".
    func requirement(_ node: Node) -> String {
        switch node {
        case .constant(let value): return value ? "nothing" : "what FALSEPREDICATE never gives"
        case .comparison(let comparison): return countPhrase(comparison, variable: nil) ?? quoted(comparison.range)
        case .and(let operands, _): return operands.map(requirement).joined(separator: " and ")
        case .or(let operands, _):
            let parts = operands.map(requirement)
            return parts.count == 2 ? "either \(parts[0]), or \(parts[1])" : "one of: " + parts.joined(separator: "; ")
        // The operand, not the node: the node's text starts with its own NOT ("needs not `NOT (...)`").
        case .not(let operand, _): return "not \(quoted(operand))"
        }
    }

    // MARK: - Counts

    private struct Noun {
        var singular: String
        var plural: String
        func form(_ count: Int) -> String { count == 1 ? singular : plural }
    }

    /// A count such as "exactly 1" and the number that decides singular or plural.
    private func quantity(_ op: ActivationPredicate.Operator, _ value: Int) -> (text: String, number: Int)? {
        switch op {
        case .equal: return value == 0 ? ("no", 0) : ("exactly \(value)", value)
        case .greaterOrEqual: return value <= 1 ? ("at least 1", 1) : ("at least \(value)", value)
        case .greater:
            guard value < Int.max else { return nil }
            return value < 1 ? ("at least 1", 1) : ("more than \(value)", value + 1)
        case .lessOrEqual: return value <= 0 ? ("no", 0) : ("at most \(value)", value)
        case .less: return value <= 1 ? ("no", 0) : ("fewer than \(value)", value)
        case .notEqual: return value == 0 ? ("at least 1", 1) : ("a number other than \(value) of", 2)
        case .conformsTo, .equalsType: return nil
        }
    }

    private func noun(for collection: Expression) -> Noun {
        // The plain nouns only for a whole collection: `extensionItems[1].attachments` is one item's attachments,
        // which "attachments" would misstate.
        if case .keyPath(let path) = collection, !path.components.contains(where: \.isSubscript),
            case .key(let last)? = path.components.last ?? rootKey(path)
        {
            switch last {
            case "extensionItems": return Noun(singular: "extension item", plural: "extension items")
            case "attachments": return Noun(singular: "attachment", plural: "attachments")
            case "registeredTypeIdentifiers": return Noun(singular: "type identifier", plural: "type identifiers")
            default: break
            }
        }
        let text: String
        switch collection {
        case .keyPath(let path): text = describe(path)
        default: text = "the collection"
        }
        return Noun(singular: "element of \(text)", plural: "elements of \(text)")
    }

    private func rootKey(_ path: ActivationPredicate.KeyPath) -> ActivationPredicate.KeyPath.Component? {
        if case .key(let name) = path.root { return .key(name) }
        return nil
    }

    private func describe(_ path: ActivationPredicate.KeyPath) -> String {
        var text: String
        switch path.root {
        case .key(let name): text = name
        case .variable(let name): text = "$" + name
        case .evaluatedObject: text = "SELF"
        }
        for component in path.components {
            switch component {
            case .key(let name): text += "." + name
            case .count: text += ".@count"
            case .index(let position): text += "[\(position)]"
            case .first: text += "[FIRST]"
            case .last: text += "[LAST]"
            case .size: text += "[SIZE]"
            }
        }
        return text
    }

    /// `SUBQUERY(c, $v, p).@count OP n`, `c.@count OP n`, or `SUBQUERY(c, $v, p).@count == c.@count`, in words.
    ///
    /// - Parameter variable: the element variable of the enclosing SUBQUERY, if any: inside it the phrase reads
    ///   "with at least 1 attachment that ..." or "whose attachments all ...".
    private func countPhrase(_ comparison: ActivationPredicate.Comparison, variable: String?) -> String? {
        guard comparison.modifier == .direct else { return nil }
        let collection: Expression
        var filter: (predicate: Node, variable: String)?
        switch comparison.lhs {
        case .subquery(let subquery, let path) where path.count == 1 && path[0].counts:
            collection = subquery.collection
            filter = (subquery.predicate, subquery.variable)
        case .keyPath(let path) where path.components.last?.counts == true:
            collection = .keyPath(.init(root: path.root, components: path.components.dropLast()))
        default:
            return nil
        }
        let noun = noun(for: collection)
        let prefix = variable == nil ? "" : "with "
        // Every element: SUBQUERY(c, $v, p).@count == c.@count
        if comparison.op == .equal, let filter, case .keyPath(let total) = comparison.rhs,
            total.components.last?.counts == true,
            Expression.keyPath(.init(root: total.root, components: total.components.dropLast())) == collection
        {
            if variable != nil {
                let verb =
                    verbPhrase(filter.predicate, variable: filter.variable)
                    .map { $0.text(plural: true) } ?? "satisfy \(quoted(filter.predicate))"
                return "whose \(noun.plural) all \(verb)"
            }
            return
                "every \(noun.singular) \(relativeClause(filter.predicate, variable: filter.variable, plural: false))"
        }
        guard case .integer(let value) = comparison.rhs, let (amount, number) = quantity(comparison.op, value) else {
            return nil
        }
        var phrase = "\(prefix)\(amount) \(noun.form(number))"
        if let filter {
            phrase += " " + relativeClause(filter.predicate, variable: filter.variable, plural: number != 1)
        }
        return phrase
    }

    /// A clause about the elements a SUBQUERY keeps: "that conforms to public.url", "whose attachments all ...".
    private func relativeClause(_ node: Node, variable: String, plural: Bool) -> String {
        if case .comparison(let comparison) = node, let phrase = countPhrase(comparison, variable: variable) {
            return phrase
        }
        if let verb = verbPhrase(node, variable: variable) { return "that " + verb.text(plural: plural) }
        if case .and(let operands, _) = node {
            return operands.map { relativeClause($0, variable: variable, plural: plural) }.joined(separator: " and ")
        }
        return "for which \(quoted(node)) holds"
    }

    // MARK: - Type tests

    /// What a type test says about an attachment: "conforms to A, B or C", "does not conform to A".
    private struct Verb {
        enum Kind: Equatable { case conforms, equals, conformsOnly }
        /// One test, or several joined by "and"/"or" that could not be merged.
        var kind: Kind?
        var negated = false
        var targets: [String] = []
        /// A phrase already put together (for AND and mixed OR), by grammatical number.
        var composed: ((Bool) -> String)?

        func text(plural: Bool) -> String {
            if let composed { return composed(plural) }
            let list =
                targets.count == 1
                ? targets[0]
                : targets.dropLast().joined(separator: ", ") + " or " + (targets.last ?? "")
            switch (kind, negated) {
            case (.conforms?, false): return (plural ? "conform" : "conforms") + " to \(list)"
            case (.conforms?, true): return (plural ? "do" : "does") + " not conform to \(list)"
            case (.equals?, false): return (plural ? "are" : "is") + " of type \(list)"
            case (.equals?, true): return (plural ? "are" : "is") + " not of type \(list)"
            case (.conformsOnly?, false): return (plural ? "have" : "has") + " only types conforming to \(list)"
            case (.conformsOnly?, true): return (plural ? "have" : "has") + " some type not conforming to \(list)"
            case (nil, _): return ""
            }
        }
    }

    private func verbPhrase(_ node: Node, variable: String) -> Verb? {
        switch node {
        case .comparison(let comparison):
            guard case .string(let target) = comparison.rhs, case .keyPath(let path) = comparison.lhs,
                readsTypes(path, variable: variable)
            else { return nil }
            switch (comparison.modifier, comparison.op) {
            case (.any, .conformsTo): return Verb(kind: .conforms, targets: [target])
            case (.none, .conformsTo): return Verb(kind: .conforms, negated: true, targets: [target])
            case (.all, .conformsTo): return Verb(kind: .conformsOnly, targets: [target])
            case (.any, .equalsType): return Verb(kind: .equals, targets: [target])
            case (.none, .equalsType): return Verb(kind: .equals, negated: true, targets: [target])
            default: return nil
            }
        case .not(let inner, _):
            guard var verb = verbPhrase(inner, variable: variable), verb.composed == nil else { return nil }
            verb.negated.toggle()
            return verb
        case .or(let operands, _):
            var verbs: [Verb] = []
            for operand in operands {
                guard let verb = verbPhrase(operand, variable: variable) else { return nil }
                verbs.append(verb)
            }
            if let first = verbs.first, !first.negated, first.composed == nil,
                verbs.allSatisfy({ $0.kind == first.kind && !$0.negated && $0.composed == nil })
            {
                return Verb(kind: first.kind, targets: verbs.flatMap(\.targets))
            }
            return Verb(composed: { plural in verbs.map { $0.text(plural: plural) }.joined(separator: " or ") })
        case .and(let operands, _):
            var verbs: [Verb] = []
            for operand in operands {
                guard let verb = verbPhrase(operand, variable: variable) else { return nil }
                verbs.append(verb)
            }
            return Verb(composed: { plural in verbs.map { $0.text(plural: plural) }.joined(separator: " and ") })
        case .constant:
            return nil
        }
    }

    /// Whether `path` reads the element's types: `$v.registeredTypeIdentifiers`, `SELF.registeredTypeIdentifiers`
    /// or a bare `registeredTypeIdentifiers` inside the SUBQUERY.
    private func readsTypes(_ path: ActivationPredicate.KeyPath, variable: String) -> Bool {
        let key = ActivationPredicate.KeyPath.Component.key("registeredTypeIdentifiers")
        switch path.root {
        case .variable(let name): return name == variable && path.components == [key]
        case .evaluatedObject: return path.components == [key]
        case .key(let name): return name == "registeredTypeIdentifiers" && path.components.isEmpty
        }
    }
}

extension ActivationPredicate.KeyPath.Component {
    /// `@count` or `[SIZE]`: the size of what comes before it.
    fileprivate var counts: Bool { self == .count || self == .size }

    /// `[n]`, `[FIRST]`, `[LAST]`: one element of what comes before it.
    fileprivate var isSubscript: Bool {
        switch self {
        case .index, .first, .last: true
        case .key, .count, .size: false
        }
    }
}

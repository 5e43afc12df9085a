import SuggestCore

/// Evaluates predicate syntax trees against property-list values, within a budget of steps.
///
/// Nested SUBQUERYs multiply their collections' sizes, so a rule of a few hundred bytes over an array of a hundred
/// numbers could run for hours (four levels: 22 s; six: days), on a server's thread, for any tenant. Each node
/// evaluated and each element visited is a step, and a comparison costs what it may look at (`cost`): a clause
/// comparing two 10 MB strings once counted one step, and 300,000 of them ran 96 s within the budget. Once
/// `Budget.steps` are spent, every node is false (a NOT or NONE too) and every value missing, so the evaluation
/// unwinds at once, and the caller reads `budget.isSpent`.
struct PredicateEvaluator {
    typealias Node = ActivationPredicate.Node
    typealias Expression = ActivationPredicate.Expression
    /// Variables bound by enclosing SUBQUERYs, innermost last.
    typealias Bindings = [(name: String, value: PropertyListValue)]

    /// The steps left to one evaluation (shared by the copies of the evaluator it makes).
    final class Budget {
        /// Far more than real rules need on real requests (two nested SUBQUERYs over a thousand attachments of two
        /// types each stay well within it), and about a tenth of a second of work.
        static let steps = 1_000_000
        private(set) var left = Budget.steps

        var isSpent: Bool { left <= 0 }

        /// Takes `count` steps; `false` once the budget is spent.
        func spend(_ count: Int = 1) -> Bool {
            left -= count
            return left > 0
        }
    }

    let types: UniformTypeTree
    let budget = Budget()

    /// Whether `node` holds; `false` once the budget is spent, whatever the node (a NOT of a spent operand too).
    func holds(_ node: Node, object: PropertyListValue?, bindings: Bindings) -> Bool {
        guard budget.spend() else { return false }
        let result = evaluate(node, object: object, bindings: bindings)
        return result && !budget.isSpent
    }

    private func evaluate(_ node: Node, object: PropertyListValue?, bindings: Bindings) -> Bool {
        switch node {
        case .constant(let value): return value
        case .not(let inner, _): return !holds(inner, object: object, bindings: bindings)
        case .and(let operands, _): return operands.allSatisfy { holds($0, object: object, bindings: bindings) }
        case .or(let operands, _): return operands.contains { holds($0, object: object, bindings: bindings) }
        case .comparison(let comparison):
            let lhs = value(comparison.lhs, object: object, bindings: bindings)
            let rhs = value(comparison.rhs, object: object, bindings: bindings)
            switch comparison.modifier {
            case .direct: return compare(lhs, comparison.op, rhs)
            case .any: return elements(lhs).contains { budget.spend() && compare($0, comparison.op, rhs) }
            case .all: return elements(lhs).allSatisfy { budget.spend() && compare($0, comparison.op, rhs) }
            case .none: return !elements(lhs).contains { budget.spend() && compare($0, comparison.op, rhs) }
            }
        }
    }

    func value(_ expression: Expression, object: PropertyListValue?, bindings: Bindings) -> PropertyListValue? {
        guard budget.spend() else { return nil }
        switch expression {
        case .integer(let number): return .integer(number)
        case .string(let text): return .string(text)
        case .bool(let flag): return .bool(flag)
        case .null: return nil
        case .keyPath(let path):
            var current: PropertyListValue?
            switch path.root {
            case .evaluatedObject: current = object
            case .variable(let name): current = bindings.last(where: { $0.name == name })?.value
            case .key(let key): current = read(key, of: object)
            }
            return follow(path.components, from: current)
        case .subquery(let subquery, let path):
            let collection = value(subquery.collection, object: object, bindings: bindings)
            let selected = elements(collection).filter { element in
                holds(subquery.predicate, object: element, bindings: bindings + [(subquery.variable, element)])
            }
            return follow(path, from: .array(selected))
        }
    }

    /// `NSNull`, as key-value coding puts it in an array for an element that lacks the key read through it
    /// (`extensionItems.contentText` of two items, one without text, is two values, the second null): no property
    /// list or share request holds a dictionary of this key, which begins with a byte 0. It compares as `nil`, and
    /// reading anything of it gives `nil`.
    static let null = PropertyListValue.dictionary(["\u{0}NSNull": .bool(true)])

    /// The value as comparisons see it: `nil` for `null`.
    static func compared(_ value: PropertyListValue?) -> PropertyListValue? { value == null ? nil : value }

    /// The elements of a collection operand: an array's elements, a dictionary's values (copied: a step each),
    /// nothing for a missing value, and the value itself otherwise.
    func elements(_ value: PropertyListValue?) -> [PropertyListValue] {
        if value == Self.null { return [] }
        switch value {
        case nil: return []
        case .array(let elements)?: return elements
        case .dictionary(let members)?: return budget.spend(members.count) ? Array(members.values) : []
        case let single?: return [single]
        }
    }

    func follow(
        _ components: [ActivationPredicate.KeyPath.Component], from start: PropertyListValue?
    ) -> PropertyListValue? {
        var current = start
        for component in components {
            switch component {
            case .key(let key): current = read(key, of: current)
            case .count, .size:
                if current == Self.null { return nil }
                switch current {
                case .array(let elements)?: current = .integer(elements.count)
                case .dictionary(let members)?: current = .integer(members.count)
                default: current = nil
                }
            case .index(let position):
                guard case .array(let elements)? = current, position < elements.count else { return nil }
                current = elements[position]
            case .first, .last:
                guard case .array(let elements)? = current, !elements.isEmpty else { return nil }
                current = component == .first ? elements[0] : elements[elements.count - 1]
            }
        }
        return current
    }

    /// Key-value coding's `value(forKey:)`: a dictionary's member, or an array of each element's member (a step
    /// each), `null` for an element that has none, so that the array keeps its count
    /// (`extensionItems.contentText.@count` of an item with text and one without is 2, as iOS counts it).
    func read(_ key: String, of value: PropertyListValue?) -> PropertyListValue? {
        if value == Self.null { return nil }
        switch value {
        case .dictionary(let members)?: return members[key]
        case .array(let elements)?:
            guard budget.spend(elements.count) else { return nil }
            return .array(elements.map { read(key, of: $0) ?? Self.null })
        default: return nil
        }
    }

    func compare(_ lhs: PropertyListValue?, _ op: ActivationPredicate.Operator, _ rhs: PropertyListValue?) -> Bool {
        let lhs = Self.compared(lhs)
        let rhs = Self.compared(rhs)
        guard budget.spend(Self.cost(lhs, limit: budget.left) + Self.cost(rhs, limit: budget.left)) else { return false }
        switch op {
        case .equal: return Self.equal(lhs, rhs)
        case .notEqual: return !Self.equal(lhs, rhs)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let order: Int
            if case .integer(let left)? = lhs, case .integer(let right)? = rhs {
                order = left < right ? -1 : left > right ? 1 : 0  // exact, even beyond 2^53
            } else if let left = Self.number(lhs), let right = Self.number(rhs) {
                order = left < right ? -1 : left > right ? 1 : 0
            } else if case .string(let left)? = lhs, case .string(let right)? = rhs {
                let (left, right) = (left.unicodeScalars, right.unicodeScalars)
                order = left.lexicographicallyPrecedes(right) ? -1 : left.elementsEqual(right) ? 0 : 1
            } else {
                return false
            }
            switch op {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            default: return order >= 0
            }
        case .conformsTo:
            guard case .string(let type)? = lhs, case .string(let ancestor)? = rhs else { return false }
            var walked = 0
            let conforms = types.conforms(type, to: ancestor, steps: &walked)
            return budget.spend(walked) && conforms
        case .equalsType:
            guard case .string(let left)? = lhs, case .string(let right)? = rhs else { return false }
            return types.equals(left, right)
        }
    }

    /// The steps a comparison of the value may take: a step per element of an array or member of a dictionary, at
    /// any depth, and per `bytesPerStep` of a string or data (a dictionary's keys too); counted only as far as
    /// `limit`, past which the budget is spent anyway.
    static func cost(_ value: PropertyListValue?, limit: Int) -> Int {
        switch value {
        case .string(let text)?: return text.utf8.count / bytesPerStep
        case .data(let bytes)?: return bytes.count / bytesPerStep
        case .array(let elements)?:
            var total = elements.count
            for element in elements where total <= limit { total += cost(element, limit: limit - total) }
            return total
        case .dictionary(let members)?:
            var total = members.count
            for (key, member) in members where total <= limit {
                total += key.utf8.count / bytesPerStep + cost(member, limit: limit - total)
            }
            return total
        default: return 0
        }
    }

    /// Bytes of a string compared in one step: about what a node's evaluation costs.
    static let bytesPerStep = 64

    static func number(_ value: PropertyListValue?) -> Double? {
        switch value {
        case .integer(let number)?: return Double(number)
        case .real(let number)?: return number
        case .bool(let flag)?: return flag ? 1 : 0
        default: return nil
        }
    }

    static func equal(_ lhs: PropertyListValue?, _ rhs: PropertyListValue?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case (.integer(let left)?, .integer(let right)?): return left == right
        // Code point by code point, as NSString's `isEqual:` compares: Swift's `==` took "é" written as one
        // character and as "e" with an accent for one string, and KELVIN SIGN for K.
        case (.string(let left)?, .string(let right)?): return left.hasSameBytes(as: right)
        // Element by element, as NSArray's and NSDictionary's `isEqual:` compare theirs (`==` of the values took
        // canonically equivalent strings inside them for one). A dictionary's keys are Swift's, compared so.
        case (.array(let left)?, .array(let right)?):
            return left.count == right.count && zip(left, right).allSatisfy { equal($0, $1) }
        case (.dictionary(let left)?, .dictionary(let right)?):
            return left.count == right.count
                && left.allSatisfy { key, value in right[key].map { equal(value, $0) } == true }
        default:
            if let left = number(lhs), let right = number(rhs) { return left == right }
            return lhs == rhs
        }
    }
}

import SuggestCore

extension ActivationPredicate {
    /// Whether the predicate holds for `object` (normally `ShareRequest.matchingDictionary`).
    ///
    /// The semantics follow NSPredicate with key-value coding:
    /// - a key path on a dictionary reads the key; on an array it reads the key of every element (missing keys
    ///   are skipped); `@count` is the number of elements of an array or dictionary;
    /// - `SUBQUERY(collection, $v, p)` is the elements of the collection for which `p` holds, with `$v` bound to the
    ///   element (a missing collection is empty; a single value is a collection of one);
    /// - `ANY`/`SOME`, `ALL` and `NONE` apply the comparison to each element of the left operand;
    /// - `==` and `!=` compare numbers by value (a Boolean is 0 or 1) and strings exactly; `<`, `<=`, `>`, `>=`
    ///   order numbers, or strings by code point; a comparison of different kinds is false (`!=` true);
    /// - `lhs UTI-CONFORMS-TO rhs` is `types.conforms(lhs, to: rhs)` and `UTI-EQUALS` is `types.equals`; an
    ///   operand that is not a string makes both false.
    /// - Parameter types: the conformance tree, with the target's own type declarations.
    /// - Complexity: O(size of the rule × size of the object) for the rules seen in practice; nested SUBQUERYs
    ///   multiply their collections' sizes, up to a budget of steps (`PredicateEvaluator.Budget`), past which the
    ///   predicate is false (`decision(for:types:)` says why); so is it for an object the evaluator may not
    ///   recurse into (`PropertyListValue.excess(budget:)`).
    public func evaluate(_ object: PropertyListValue, types: UniformTypeTree = .standard) -> Bool {
        var budget = PropertyListValue.maximumValues
        // A request's dictionary wraps each item's userInfo in two levels of its own (the items, an item).
        guard object.excess(budget: &budget, maximumDepth: PropertyListValue.maximumDepth + 2) == nil else {
            return false
        }
        return PredicateEvaluator(types: types).holds(root, object: object, bindings: [])
    }
}

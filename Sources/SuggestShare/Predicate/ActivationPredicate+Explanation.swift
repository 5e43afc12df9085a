import SuggestCore

extension ActivationPredicate {
    /// Evaluates the predicate against a request and, when it refuses, says which part refused.
    ///
    /// The reason reads "the rule needs <requirement>; got <what was shared>", for example "the rule needs
    /// exactly 1 extension item whose attachments all conform to com.adobe.pdf; got 1 attachment of
    /// public.jpeg". When the top of the rule is an AND, the requirement is the first operand that fails. The
    /// usual shapes (counts of SUBQUERYs, "all attachments" via `.@count == $item.attachments.@count`,
    /// `ANY ... UTI-CONFORMS-TO`, AND, OR, NOT) are put in words; anything else is quoted from the rule.
    /// A rule that takes more steps than an evaluation may (`PredicateEvaluator.Budget`) is undecided:
    /// `ActivationDecision.exceededBudget`.
    /// - Complexity: that of `evaluate(_:types:)`, plus O(n) in the length of the rule for the wording.
    public func decision(for request: ShareRequest, types: UniformTypeTree = .standard) -> ActivationDecision {
        // Refused before the evaluator recurses into it: the only form of rule that reads `userInfo`.
        if let problem = request.nestingProblem { return .refused(problem) }
        let object = request.matchingDictionary
        let evaluator = PredicateEvaluator(types: types)
        let holds = evaluator.holds(root, object: object, bindings: [])
        if evaluator.budget.isSpent { return .exceeding(steps: PredicateEvaluator.Budget.steps) }
        if holds { return .activated }
        if case .constant(false) = root {
            return .refused("the rule is FALSEPREDICATE, which never activates")
        }
        // A budget of its own for the search: what the first evaluation spent must not make an operand that holds
        // look failing; a search that spends it all quotes the rule whole.
        let explainer = PredicateEvaluator(types: types)
        var culprit = root
        while case .and(let operands, _) = culprit,
            let failing = operands.first(where: { !explainer.holds($0, object: object, bindings: []) })
        {
            culprit = failing
        }
        if explainer.budget.isSpent { culprit = root }
        let phrase = PredicatePhrase(source: source)
        let requirement = phrase.requirement(culprit)
        let shared = request.summary(namingItems: requirement.contains("extension item"))
        return .refused("the rule needs \(requirement); got \(shared)")
    }
}

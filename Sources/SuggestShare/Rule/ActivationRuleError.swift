/// Why an extension's `NSExtensionActivationRule` cannot be used.
public enum ActivationRuleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The Info.plist has no rule.
    case missing
    /// The rule is neither a dictionary nor a string.
    case wrongType(found: String)
    /// The dictionary has a key Apple does not document (such as `NSExtensionActivationSupportsImage`).
    case unknownKey(String, suggestion: String?)
    /// A documented key has a value of the wrong type or range.
    case invalidValue(key: String, problem: String)
    /// The string form does not parse.
    case syntax(PredicateSyntaxError)

    /// What is wrong with the rule and how to fix it, in one line.
    public var description: String {
        switch self {
        case .missing:
            return "there is no NSExtensionActivationRule under NSExtension > NSExtensionAttributes; add one "
                + "(a dictionary of NSExtensionActivationSupports... keys, or a predicate string)"
        case .wrongType(let found):
            return "NSExtensionActivationRule is \(found); it must be a dictionary or a predicate string"
        case .unknownKey(let key, let suggestion):
            let hint = suggestion.map { " (did you mean \($0)?)" } ?? ""
            let known = ActivationDictionary.Key.allCases.map { $0.rawValue.replacingPrefix() }
            return "NSExtensionActivationRule has the key \(key), which Apple does not document\(hint); use only "
                + known.joined(separator: ", ")
        case .invalidValue(let key, let problem):
            return "NSExtensionActivationRule's \(key) \(problem)"
        case .syntax(let error):
            return "NSExtensionActivationRule: \(error); fix the predicate or use the dictionary form"
        }
    }

    /// For a predicate that does not parse: the offending line of the rule with a caret under the problem.
    public var excerpt: String? {
        if case .syntax(let error) = self { return error.excerpt }
        return nil
    }
}

extension String {
    /// `NSExtensionActivationSupportsText` shortened to `...SupportsText` for lists of keys.
    fileprivate func replacingPrefix() -> String {
        hasPrefix("NSExtensionActivationSupports") ? "..." + dropFirst("NSExtensionActivation".count) : self
    }
}

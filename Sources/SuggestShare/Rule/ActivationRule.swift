import SuggestCore

/// An extension's `NSExtensionActivationRule`: the dictionary form or the predicate-string form.
public enum ActivationRule: Sendable, Equatable, CustomStringConvertible {
    /// The dictionary of `NSExtensionActivationSupports...` keys.
    case dictionary(ActivationDictionary)
    /// A predicate string, including `TRUEPREDICATE` and `FALSEPREDICATE`.
    case predicate(ActivationPredicate)

    /// The rule that accepts anything (`TRUEPREDICATE`).
    public static let acceptingAnything = ActivationRule.predicate(.alwaysTrue)

    /// Reads a rule from the value of `NSExtensionActivationRule`.
    /// - Throws: `ActivationRuleError` for a value that is neither a dictionary nor a string, an undocumented or
    ///   ill-typed dictionary key, or a predicate that does not parse (with its position).
    public init(propertyList value: PropertyListValue) throws(ActivationRuleError) {
        switch value {
        case .dictionary(let members): self = .dictionary(try ActivationDictionary(propertyList: members))
        case .string(let text):
            do {
                self = .predicate(try ActivationPredicate(parsing: text))
            } catch {
                throw .syntax(error)
            }
        default: throw .wrongType(found: value.kindName)
        }
    }

    /// Whether the rule accepts what is shared and, when it does not, which part refused.
    /// - Parameter types: the conformance tree, with the target's own type declarations.
    public func decision(for request: ShareRequest, types: UniformTypeTree = .standard) -> ActivationDecision {
        switch self {
        case .dictionary(let dictionary): return dictionary.decision(for: request, types: types)
        case .predicate(let predicate): return predicate.decision(for: request, types: types)
        }
    }

    /// The predicate as written, or what a dictionary rule accepts and how strictly.
    public var description: String {
        switch self {
        case .predicate(let predicate): return predicate.source
        case .dictionary(let dictionary):
            let mode =
                dictionary.matchesStrictly
                ? "every attachment must be supported"
                : "at least one attachment must be supported"
            return "dictionary rule accepting \(dictionary.acceptedKinds) (\(mode))"
        }
    }
}

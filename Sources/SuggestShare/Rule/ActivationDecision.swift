/// Whether a target's activation rule accepts what is shared and, when it does not, which part refused.
public struct ActivationDecision: Sendable, Hashable, CustomStringConvertible {
    /// Whether the target appears in the share sheet for this request.
    public var activated: Bool
    /// Which part of the rule refused the request, in a sentence such as "3 images exceed
    /// NSExtensionActivationSupportsImageWithMaxCount = 1"; `nil` when the rule accepts it.
    public var reason: String?
    /// Whether the rule could not be decided within the steps an evaluation may take (`reason` says so): the rule
    /// is at fault, not the shared items, and the share flow refuses it as bad input.
    public var exceededBudget: Bool

    init(activated: Bool, reason: String?, exceededBudget: Bool = false) {
        self.activated = activated
        self.reason = reason
        self.exceededBudget = exceededBudget
    }

    /// The rule accepts the request.
    public static let activated = ActivationDecision(activated: true, reason: nil)

    /// The rule refuses the request for `reason`.
    public static func refused(_ reason: String) -> ActivationDecision {
        ActivationDecision(activated: false, reason: reason)
    }

    /// Undecided: the rule took more than `steps` steps on this request.
    static func exceeding(steps: Int) -> ActivationDecision {
        ActivationDecision(
            activated: false,
            reason: "the activation rule takes more than \(steps) steps on these items (nested SUBQUERYs multiply "
                + "their collections' sizes); simplify the rule",
            exceededBudget: true)
    }

    /// `activated`, or `refused: ` and the reason.
    public var description: String { activated ? "activated" : "refused: \(reason ?? "no reason given")" }
}

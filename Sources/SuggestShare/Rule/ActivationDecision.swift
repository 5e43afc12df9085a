/// Whether a target's activation rule accepts what is shared and, when it does not, which part refused.
public struct ActivationDecision: Sendable, Hashable, CustomStringConvertible {
    /// Whether the target appears in the share sheet for this request.
    public var activated: Bool
    /// Which part of the rule refused the request, in a sentence such as "3 images exceed
    /// NSExtensionActivationSupportsImageWithMaxCount = 1"; `nil` when the rule accepts it.
    public var reason: String?

    init(activated: Bool, reason: String?) {
        self.activated = activated
        self.reason = reason
    }

    /// The rule accepts the request.
    public static let activated = ActivationDecision(activated: true, reason: nil)

    /// The rule refuses the request for `reason`.
    public static func refused(_ reason: String) -> ActivationDecision {
        ActivationDecision(activated: false, reason: reason)
    }

    /// `activated`, or `refused: ` and the reason.
    public var description: String { activated ? "activated" : "refused: \(reason ?? "no reason given")" }
}

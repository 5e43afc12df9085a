import SuggestCore

/// A share extension as the share sheet sees it: when it activates, which types it knows, and whether it takes
/// conversation suggestions.
///
/// Load one from the extension's Info.plist with `load(infoPlistAt:)`, or use `acceptingAnything` when no
/// extension is named; then ask `evaluate(_:)` whether it applies to a `ShareRequest`.
public struct ShareTarget: Sendable {
    /// `NSExtension > NSExtensionAttributes > NSExtensionActivationRule`.
    public var activationRule: ActivationRule
    /// The public conformance tree plus the target's `UTExportedTypeDeclarations` and
    /// `UTImportedTypeDeclarations`, used when the rule is evaluated.
    public var types: UniformTypeTree
    /// `NSExtension > NSExtensionAttributes > IntentsSupported`.
    public var intentsSupported: [String]
    /// The type identifiers the Info.plist declares, in file order (exported, then imported).
    public var declaredTypes: [String]
    /// `CFBundleDisplayName`, when the Info.plist has one.
    public var displayName: String?

    /// A target with this rule; the other parts default to what an Info.plist without them gives.
    public init(
        activationRule: ActivationRule, types: UniformTypeTree = .standard, intentsSupported: [String] = [],
        declaredTypes: [String] = [], displayName: String? = nil
    ) {
        self.activationRule = activationRule
        self.types = types
        self.intentsSupported = intentsSupported
        self.declaredTypes = declaredTypes
        self.displayName = displayName
    }

    /// The target when no extension is named: `TRUEPREDICATE`, the public types, and support for
    /// `INSendMessageIntent`, so that every suggestion applies.
    public static let acceptingAnything = ShareTarget(
        activationRule: .acceptingAnything, intentsSupported: ["INSendMessageIntent"])

    /// Whether the extension declares `INSendMessageIntent` in `IntentsSupported`, which is what lets the
    /// share sheet show conversation suggestions for it.
    public var supportsSendMessageIntent: Bool { intentsSupported.contains("INSendMessageIntent") }

    /// Whether the target's activation rule accepts what is shared and, when it does not, which part refused.
    /// - Complexity: that of the rule: O(attachments × types) for the dictionary form; about O(rule × request)
    ///   for predicates.
    public func evaluate(_ request: ShareRequest) -> ActivationDecision {
        activationRule.decision(for: request, types: types)
    }
}

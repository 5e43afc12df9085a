import SuggestCore
import SuggestShare

/// The checks the activation-rule fuzz target makes on one input: the bytes as a predicate string
/// (`NSExtensionActivationRule`), parsed, then evaluated against a few typical share requests with a decision
/// and its reason. Besides "never traps": a syntax error points inside the rule, and a rule parsed from its own
/// source is the same rule.
public enum ActivationPredicateHarness {
    /// Requests of every usual shape: nothing, a URL, two photos, a PDF and text, two items.
    static let requests: [ShareRequest] = [
        ShareRequest(),
        ShareRequest(items: [ExtensionItem(attachments: [Attachment(typeIdentifiers: ["public.url"])])]),
        ShareRequest(items: [
            ExtensionItem(
                attachments: [
                    Attachment(typeIdentifiers: ["public.jpeg"]), Attachment(typeIdentifiers: ["public.png"]),
                ],
                contentText: "look")
        ]),
        ShareRequest(items: [
            ExtensionItem(attachments: [Attachment(typeIdentifiers: ["com.adobe.pdf", "public.file-url"])]),
            ExtensionItem(
                attachments: [Attachment(typeIdentifiers: ["public.plain-text"])], contentText: "text",
                userInfo: ["count": .integer(2), "flag": .bool(true)]),
        ]),
    ]

    /// The problems found with `bytes`; empty when there are none.
    public static func check(_ bytes: [UInt8]) -> [String] {
        let source = String(decoding: bytes, as: UTF8.self)
        let predicate: ActivationPredicate
        do {
            predicate = try ActivationPredicate(parsing: source)
        } catch {
            let length = source.unicodeScalars.count
            guard (0...length).contains(error.offset) else {
                return ["the syntax error's offset \(error.offset) is outside the rule of \(length) scalars"]
            }
            return []
        }
        var problems: [String] = []
        if (try? ActivationPredicate(parsing: predicate.source)) != predicate {
            problems.append("the rule parsed from its own source differs")
        }
        for request in requests {
            let holds = predicate.evaluate(request.matchingDictionary)
            let decision = predicate.decision(for: request)
            if holds != (decision == .activated) {
                problems.append("evaluate says \(holds) but the decision is \(decision)")
            }
        }
        return problems
    }
}

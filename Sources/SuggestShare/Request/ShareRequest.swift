import SuggestCore

/// What a host app shares: its extension items, as a share extension's context receives them (`inputItems`).
///
/// Build one from the command line's `--attachment UTI=VALUE` strings (`init(attachmentArguments:)`) or from
/// JSON (`init(json:)`); evaluate it with `ShareTarget.evaluate(_:)`; hand `contentTypes` to the ranker.
public struct ShareRequest: Sendable, Hashable {
    /// The extension items, in the order the host gave them.
    public var items: [ExtensionItem]

    /// A request for these items; without any, a request that shares nothing.
    public init(items: [ExtensionItem] = []) { self.items = items }

    /// A request that shares nothing.
    public static let empty = ShareRequest()

    /// Why the request cannot be evaluated, or `nil`: an item's `userInfo` nested deeper than a property list may
    /// be, or the items' `userInfo` holding more values than one may (`PropertyListValue.Excess`), which only a
    /// request built in code can.
    public var nestingProblem: String? {
        var budget = PropertyListValue.maximumValues
        for (index, item) in items.enumerated() {
            switch PropertyListValue.dictionary(item.userInfo).excess(budget: &budget) {
            case nil: continue
            case .depth:
                return "the userInfo of extension item \(index + 1) is nested deeper than "
                    + "\(PropertyListValue.maximumDepth) levels, as no property list may be"
            case .values:
                return "the extension items' userInfo hold more than \(PropertyListValue.maximumValues) values, "
                    + "counted along every path (a value shared many times over counts each time)"
            }
        }
        return nil
    }

    /// Every attachment of every item, in order.
    public var attachments: [Attachment] { items.flatMap(\.attachments) }

    /// All registered types of all attachments, in order, each once (compared case-insensitively, as UTIs are).
    ///
    /// This is what the ranker's context takes (`RankingContext.contentTypes`).
    /// - Complexity: O(n) in the number of registered types.
    public var contentTypes: [String] {
        var seen: Set<ByteKey> = []
        var types: [String] = []
        for attachment in attachments {
            for type in attachment.typeIdentifiers where seen.insert(ByteKey(type.lowercased())).inserted {
                types.append(type)
            }
        }
        return types
    }
}

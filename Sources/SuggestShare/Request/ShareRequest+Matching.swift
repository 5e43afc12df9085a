extension ShareRequest {
    /// The object a predicate rule is evaluated against, as iOS builds it from the extension items:
    ///
    /// ```
    /// { extensionItems = ( { attachments = ( { registeredTypeIdentifiers = ( "public.jpeg" ); } );
    ///                        contentText = "..."; /* userInfo keys */ } ) }
    /// ```
    /// - Complexity: O(n) in the size of the request.
    public var matchingDictionary: PropertyListValue {
        let items = items.map { item -> PropertyListValue in
            var members = item.userInfo
            members["attachments"] = .array(
                item.attachments.map {
                    .dictionary(["registeredTypeIdentifiers": .array($0.typeIdentifiers.map(PropertyListValue.string))])
                })
            if let text = item.contentText { members["contentText"] = .string(text) }
            return .dictionary(members)
        }
        return .dictionary(["extensionItems": .array(items)])
    }

    /// What was shared, in the words of a refusal: "1 attachment of public.jpeg", "no extension items",
    /// "2 extension items: 1 attachment of public.url; 2 attachments of public.png and public.jpeg".
    var summary: String { summary(namingItems: false) }

    /// `summary`, saying "1 extension item with ..." for a single item when `namingItems`: a refusal of a rule
    /// that counts extension items ("needs exactly 2 extension items; got 2 attachments of ...") read as met.
    func summary(namingItems: Bool) -> String {
        switch items.count {
        case 0: return "no extension items"
        case 1:
            let described = Self.describe(items[0], single: true)
            guard namingItems, !items[0].attachments.isEmpty else { return described }
            return "1 extension item with " + described
        default:
            let parts = items.prefix(6).map { Self.describe($0, single: false) }
            let more = items.count > 6 ? "; and \(items.count - 6) more" : ""
            return "\(items.count) extension items: " + parts.joined(separator: "; ") + more
        }
    }

    private static func describe(_ item: ExtensionItem, single: Bool) -> String {
        let count = item.attachments.count
        guard count > 0 else {
            return single ? "1 extension item with no attachments" : "no attachments"
        }
        let listed = item.attachments.prefix(8).map { $0.typeIdentifiers.joined(separator: "/") }
        var list =
            listed.count == 1
            ? listed[0]
            : listed.dropLast().joined(separator: ", ") + " and " + (listed.last ?? "")
        if count > 8 { list = listed.joined(separator: ", ") + " and \(count - 8) more" }
        return "\(count) attachment\(count == 1 ? "" : "s") of \(list)"
    }
}

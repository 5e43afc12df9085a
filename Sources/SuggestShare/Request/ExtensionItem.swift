/// One shared item (Apple's `NSExtensionItem`): its attachments, its text, and any other attributes.
public struct ExtensionItem: Sendable, Hashable {
    /// The item's attachments (`attachments`, one `NSItemProvider` each), in order.
    public var attachments: [Attachment]
    /// The item's text (`attributedContentText` as a plain string), as a host such as Safari supplies it.
    public var contentText: String?
    /// Other attributes (`userInfo`), visible to predicate rules as keys of the item.
    public var userInfo: [String: PropertyListValue]

    /// An item; every part is optional, as in `NSExtensionItem`.
    public init(attachments: [Attachment] = [], contentText: String? = nil, userInfo: [String: PropertyListValue] = [:])
    {
        self.attachments = attachments
        self.contentText = contentText
        self.userInfo = userInfo
    }
}

extension ExtensionItem {
    /// What Safari shares is a web page: Foundation adds `com.apple.active-webpage` to the types of an attachment
    /// whose URL is http or https when its item's `userInfo` says `supportsJavaScript` (share-flow.md §1), and the
    /// dictionary rule's WebPage key speaks for that type: a rule of the WebPage key alone takes what Safari shares.
    /// The flag is read as Foundation reads an `NSNumber`'s `boolValue`: `true`, or a nonzero number.
    mutating func addWebPageTypes() {
        switch userInfo["supportsJavaScript"] {
        case .bool(true): break
        case .integer(let number) where number != 0: break
        case .real(let number) where number != 0 && !number.isNaN: break
        default: return
        }
        for index in attachments.indices
        where attachments[index].isWebURL && !attachments[index].typeIdentifiers.contains("com.apple.active-webpage") {
            attachments[index].typeIdentifiers.append("com.apple.active-webpage")
        }
    }
}

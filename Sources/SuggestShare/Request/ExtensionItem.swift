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

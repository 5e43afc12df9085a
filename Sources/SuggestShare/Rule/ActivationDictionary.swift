/// The dictionary form of an activation rule: which kinds of attachment an extension supports, and how many.
///
/// Every key Apple documents (share-flow.md §1) has a property; an absent key is `nil`. A count of 0 means the
/// kind is not supported, as Apple says ("use 0 or remove the key"). How the keys decide is described at
/// `decision(for:types:)`.
public struct ActivationDictionary: Sendable, Hashable {
    /// The documented keys of the dictionary form; any other key is an error.
    public enum Key: String, CaseIterable, Sendable {
        /// The key of `supportsText`.
        case supportsText = "NSExtensionActivationSupportsText"
        /// The key of `webURLMaximumCount`.
        case webURLMaximumCount = "NSExtensionActivationSupportsWebURLWithMaxCount"
        /// The key of `webPageMaximumCount`.
        case webPageMaximumCount = "NSExtensionActivationSupportsWebPageWithMaxCount"
        /// The key of `imageMaximumCount`.
        case imageMaximumCount = "NSExtensionActivationSupportsImageWithMaxCount"
        /// The key of `movieMaximumCount`.
        case movieMaximumCount = "NSExtensionActivationSupportsMovieWithMaxCount"
        /// The key of `fileMaximumCount`.
        case fileMaximumCount = "NSExtensionActivationSupportsFileWithMaxCount"
        /// The key of `attachmentsMaximumCount`.
        case attachmentsMaximumCount = "NSExtensionActivationSupportsAttachmentsWithMaxCount"
        /// The key of `attachmentsMinimumCount`.
        case attachmentsMinimumCount = "NSExtensionActivationSupportsAttachmentsWithMinCount"
        /// The key of `dictionaryVersion`.
        case dictionaryVersion = "NSExtensionActivationDictionaryVersion"
        /// The key of `usesStrictMatching`.
        case usesStrictMatching = "NSExtensionActivationUsesStrictMatching"
    }

    /// `NSExtensionActivationSupportsText`: whether text attachments are supported.
    public var supportsText: Bool?
    /// `...SupportsWebURLWithMaxCount`: the most http(s) URLs supported.
    public var webURLMaximumCount: Int?
    /// `...SupportsWebPageWithMaxCount`: the most web pages (`com.apple.active-webpage`) supported.
    public var webPageMaximumCount: Int?
    /// `...SupportsImageWithMaxCount`: the most images supported.
    public var imageMaximumCount: Int?
    /// `...SupportsMovieWithMaxCount`: the most movies supported.
    public var movieMaximumCount: Int?
    /// `...SupportsFileWithMaxCount`: the most files of any type supported.
    public var fileMaximumCount: Int?
    /// `...SupportsAttachmentsWithMaxCount`: the most attachments of any type supported.
    public var attachmentsMaximumCount: Int?
    /// `...SupportsAttachmentsWithMinCount`: the fewest attachments supported.
    public var attachmentsMinimumCount: Int?
    /// `NSExtensionActivationDictionaryVersion`: 1 or 2; absent means 1.
    public var dictionaryVersion: Int?
    /// `NSExtensionActivationUsesStrictMatching`.
    public var usesStrictMatching: Bool?

    /// A rule with these keys; each one left out is absent from the dictionary.
    public init(
        supportsText: Bool? = nil, webURLMaximumCount: Int? = nil, webPageMaximumCount: Int? = nil,
        imageMaximumCount: Int? = nil, movieMaximumCount: Int? = nil, fileMaximumCount: Int? = nil,
        attachmentsMaximumCount: Int? = nil, attachmentsMinimumCount: Int? = nil, dictionaryVersion: Int? = nil,
        usesStrictMatching: Bool? = nil
    ) {
        self.supportsText = supportsText
        self.webURLMaximumCount = webURLMaximumCount
        self.webPageMaximumCount = webPageMaximumCount
        self.imageMaximumCount = imageMaximumCount
        self.movieMaximumCount = movieMaximumCount
        self.fileMaximumCount = fileMaximumCount
        self.attachmentsMaximumCount = attachmentsMaximumCount
        self.attachmentsMinimumCount = attachmentsMinimumCount
        self.dictionaryVersion = dictionaryVersion
        self.usesStrictMatching = usesStrictMatching
    }

    /// Whether every shared attachment must be supported (version 1, or strict matching) rather than at least
    /// one (version 2): `usesStrict = UsesStrictMatching || version < 2`, as iOS computes it.
    public var matchesStrictly: Bool { usesStrictMatching == true || (dictionaryVersion ?? 1) < 2 }
}

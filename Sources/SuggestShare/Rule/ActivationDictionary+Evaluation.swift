import SuggestCore

extension ActivationDictionary {
    /// The kinds of attachment the dictionary keys speak about.
    ///
    /// Which types belong to which key is not documented; this mapping is a modelling guess (share-flow.md §1):
    /// web pages are `com.apple.active-webpage`; web URLs are `public.url` other than `public.file-url`, with an
    /// http or https scheme when the value is known; images are `public.image`, movies `public.movie`; text is
    /// `public.text`; files are `public.file-url` and any other `public.data`. Images and movies are kinds of
    /// file: when their own key is absent and the matching is not strict, the File key speaks for them.
    enum AssetKind: CaseIterable {
        case text, webURL, webPage, image, movie, file

        var key: Key {
            switch self {
            case .text: return .supportsText
            case .webURL: return .webURLMaximumCount
            case .webPage: return .webPageMaximumCount
            case .image: return .imageMaximumCount
            case .movie: return .movieMaximumCount
            case .file: return .fileMaximumCount
            }
        }

        func noun(_ count: Int) -> String {
            let one = count == 1
            switch self {
            case .text: return one ? "text attachment" : "text attachments"
            case .webURL: return one ? "web URL" : "web URLs"
            case .webPage: return one ? "web page" : "web pages"
            case .image: return one ? "image" : "images"
            case .movie: return one ? "movie" : "movies"
            case .file: return one ? "file" : "files"
            }
        }
    }

    /// The setting for a kind: `nil` when its key is absent, 0 when not supported, else the maximum count
    /// (`Int.max` for text, which has no count).
    func setting(_ kind: AssetKind) -> Int? {
        switch kind {
        case .text: return supportsText.map { $0 ? Int.max : 0 }
        case .webURL: return webURLMaximumCount
        case .webPage: return webPageMaximumCount
        case .image: return imageMaximumCount
        case .movie: return movieMaximumCount
        case .file: return fileMaximumCount
        }
    }

    /// The types that conform to each of the types the kinds are decided by, found once for a decision: a walk of
    /// the tree for each type of each attachment let a target's own declarations make a share run for hours.
    struct KindTypes {
        /// Conforming to `com.apple.active-webpage`, `public.file-url`, `public.url`, `public.image`,
        /// `public.movie`, `public.text`, `public.data`: the order `kinds(of:in:)` asks in.
        private let sets: [Set<String>]

        init(_ types: UniformTypeTree) {
            sets = types.conformingTypes(toEach: [
                "com.apple.active-webpage", "public.file-url", "public.url", "public.image", "public.movie",
                "public.text", "public.data",
            ])
        }

        /// The kinds a type can be handled as, most specific first; empty for types no kind covers (which only
        /// `...SupportsAttachmentsWithMaxCount` can accept).
        func kinds(of type: String, in attachment: Attachment) -> [AssetKind] {
            let type = type.lowercased()
            switch sets.firstIndex(where: { $0.contains(type) }) {
            case 0: return [.webPage]
            case 1: return [.file]
            case 2: return attachment.isNonWebURL ? [] : [.webURL]
            case 3: return [.image, .file]
            case 4: return [.movie, .file]
            case 5: return [.text]
            case 6: return [.file]
            default: return []
            }
        }
    }

    /// How the dictionary treats one attachment.
    enum Outcome: Equatable {
        /// Supported by the key of `kind`, or by `...SupportsAttachmentsWithMaxCount` when `kind` is `nil`.
        case accepted(AssetKind?)
        /// Refused by a key that is 0 (or `SupportsText` that is NO).
        case refused(type: String, key: Key)
        /// No key speaks for it; under strict matching, `absent` is the key of its kind that the rule lacks.
        case unhandled(type: String, absent: Key?)
    }

    /// Decides one attachment: it is accepted when any of its types is, refused when none is and some type's
    /// key is 0, and unhandled otherwise. For each type the most specific kind whose key is present decides;
    /// under strict matching, the most specific kind alone: iOS compiles a key that is absent there into a REJECT
    /// template, as it does a key of 0 (share-flow.md §1), so neither the File key nor the Attachments key speaks
    /// for an image whose own key is missing.
    func outcome(of attachment: Attachment, kinds: KindTypes) -> Outcome {
        var refusal: Outcome?
        var unhandled: Outcome?
        for type in attachment.typeIdentifiers {
            var decided: Outcome?
            var absent: Key?
            for kind in kinds.kinds(of: type, in: attachment) {
                guard let setting = setting(kind) else {
                    if matchesStrictly {
                        absent = kind.key
                        break
                    }
                    continue
                }
                decided = setting > 0 ? .accepted(kind) : .refused(type: type, key: kind.key)
                break
            }
            if decided == nil, absent == nil, let maximum = attachmentsMaximumCount {
                decided = maximum > 0 ? .accepted(nil) : .refused(type: type, key: .attachmentsMaximumCount)
            }
            if let decided {
                if case .accepted = decided { return decided }
                if refusal == nil { refusal = decided }
            } else if unhandled == nil {
                unhandled = .unhandled(type: type, absent: absent)
            }
        }
        return refusal ?? unhandled ?? .unhandled(type: "an untyped attachment", absent: nil)
    }

    /// Whether the dictionary accepts what is shared, and if not, which key refused it.
    ///
    /// The documented behaviour, then the model for what is not documented:
    /// - With version 1 (the default) or strict matching, every attachment must be supported; with version 2,
    ///   at least one must be (an image and text shared to a text-only extension: hidden under version 1, shown
    ///   under version 2).
    /// - An attachment whose kind has a key of 0 is refused under either version (iOS compiles such keys into
    ///   REJECT templates), unless another of its types is supported.
    /// - No kind may have more attachments than its maximum count; the total must be within
    ///   `...AttachmentsWithMaxCount` and `...AttachmentsWithMinCount`.
    /// - Nothing shared (no attachments) never activates a dictionary rule.
    ///
    /// The reason names the key: "public.jpeg attachments are not supported
    /// (NSExtensionActivationSupportsImageWithMaxCount is 0)", "3 images exceed
    /// NSExtensionActivationSupportsImageWithMaxCount = 1".
    /// - Complexity: O(a × t + l) for a attachments of t types each and l parent links in the type tree.
    public func decision(for request: ShareRequest, types: UniformTypeTree = .standard) -> ActivationDecision {
        let attachments = request.attachments
        guard !attachments.isEmpty else {
            return .refused("nothing is shared: a dictionary rule needs at least one attachment")
        }
        let kinds = KindTypes(types)
        let outcomes = attachments.map { outcome(of: $0, kinds: kinds) }
        for (attachment, outcome) in zip(attachments, outcomes) {
            guard case .refused(let type, let key) = outcome else { continue }
            let value = key == .supportsText ? "NO" : "0"
            return .refused(
                "\(Self.subject(type, attachment, types)) are not supported (\(key.rawValue) is \(value))")
        }
        if matchesStrictly {
            for (attachment, outcome) in zip(attachments, outcomes) {
                guard case .unhandled(let type, let absent) = outcome else { continue }
                let missing = absent.map { " (\($0.rawValue) is absent)" } ?? ""
                return .refused(
                    "\(Self.subject(type, attachment, types)) are not supported: no key of the rule accepts "
                        + "them\(missing), and \(strictnessReason) the rule must support every shared attachment")
            }
        }
        var counts: [AssetKind: Int] = [:]
        var accepted = 0
        for case .accepted(let kind) in outcomes {
            accepted += 1
            if let kind { counts[kind, default: 0] += 1 }
        }
        for kind in AssetKind.allCases {
            if let count = counts[kind], let maximum = setting(kind), count > maximum {
                return .refused("\(count) \(kind.noun(count)) exceed \(kind.key.rawValue) = \(maximum)")
            }
        }
        if let maximum = attachmentsMaximumCount, maximum > 0, attachments.count > maximum {
            return .refused(
                "\(attachments.count) attachments exceed \(Key.attachmentsMaximumCount.rawValue) = \(maximum)")
        }
        if let minimum = attachmentsMinimumCount, attachments.count < minimum {
            let count = attachments.count
            return .refused(
                "\(count) attachment\(count == 1 ? " is" : "s are") fewer than "
                    + "\(Key.attachmentsMinimumCount.rawValue) = \(minimum)")
        }
        guard accepted > 0 else {
            var labels: [String] = []
            var seen: Set<String> = []
            for (attachment, outcome) in zip(attachments, outcomes) {
                guard case .unhandled(let type, _) = outcome else { continue }
                let label = Self.label(type, attachment, types)
                if seen.insert(label).inserted { labels.append(label) }
            }
            let shared = labels.prefix(8).joined(separator: ", ")
            return .refused(
                "none of the shared attachments (\(shared)) is supported; the rule accepts \(acceptedKinds)")
        }
        return .activated
    }

    /// The value of a URL attachment that is not a web URL, which is why the WebURL key does not take it.
    private static func nonWebURL(_ type: String, _ attachment: Attachment, _ types: UniformTypeTree) -> String? {
        guard attachment.isNonWebURL, types.conforms(type, to: "public.url"),
            !types.conforms(type, to: "public.file-url"), let text = attachment.value?.text
        else { return nil }
        return String(text.prefix(60))
    }

    /// A refused attachment in a sentence: "public.jpeg attachments", or "public.url attachments that are not
    /// http(s) URLs (mailto:a@example.com)".
    static func subject(_ type: String, _ attachment: Attachment, _ types: UniformTypeTree) -> String {
        guard let url = nonWebURL(type, attachment, types) else { return "\(type) attachments" }
        return "\(type) attachments that are not http(s) URLs (\(url))"
    }

    /// A refused attachment in a list: "public.jpeg", or "public.url (not an http(s) URL: mailto:a@example.com)".
    static func label(_ type: String, _ attachment: Attachment, _ types: UniformTypeTree) -> String {
        guard let url = nonWebURL(type, attachment, types) else { return type }
        return "\(type) (not an http(s) URL: \(url))"
    }

    private var strictnessReason: String {
        if usesStrictMatching == true { return "with NSExtensionActivationUsesStrictMatching = YES" }
        if dictionaryVersion == 1 { return "with NSExtensionActivationDictionaryVersion = 1" }
        return "without NSExtensionActivationDictionaryVersion = 2"
    }

    /// "text and at most 1 web URL", for a refusal that nothing was supported.
    var acceptedKinds: String {
        var parts: [String] = []
        for kind in AssetKind.allCases {
            guard let setting = setting(kind), setting > 0 else { continue }
            parts.append(kind == .text ? "text" : "at most \(setting) \(kind.noun(setting))")
        }
        if let maximum = attachmentsMaximumCount, maximum > 0 {
            parts.append("at most \(maximum) attachment\(maximum == 1 ? "" : "s") of any type")
        }
        guard !parts.isEmpty else { return "nothing (no key is nonzero)" }
        return parts.count == 1 ? parts[0] : parts.dropLast().joined(separator: ", ") + " and " + (parts.last ?? "")
    }
}

import SuggestCore

/// One attachment of a shared item (Apple's `NSItemProvider`): the types it can be loaded as, and what it holds.
public struct Attachment: Sendable, Hashable {
    /// What the attachment holds, as far as the share flow needs to know.
    public enum Value: Sendable, Hashable {
        /// A URL, such as `https://example.com` or `mailto:a@example.com`.
        case url(String)
        /// Text, such as a selection or a note.
        case text(String)
        /// A file, by path (or `file://` URL) on this machine.
        case file(path: String)

        /// The string the value was given as.
        public var text: String {
            switch self {
            case .url(let text), .text(let text), .file(let text): return text
            }
        }
    }

    /// The uniform type identifiers the attachment can be loaded as, most specific first
    /// (`registeredTypeIdentifiers`, such as `["public.jpeg"]` or `["public.file-url", "com.adobe.pdf"]`).
    public var typeIdentifiers: [String]
    /// What the attachment holds, when known.
    public var value: Value?

    /// An attachment loadable as `typeIdentifiers` (most specific first), holding `value` when it is known.
    public init(typeIdentifiers: [String], value: Value? = nil) {
        self.typeIdentifiers = typeIdentifiers
        self.value = value
    }

    /// The value that a bare string most likely is for an attachment of type `type`: a file for
    /// `public.file-url`, a URL for other `public.url` types or a string with a `scheme://`, text for
    /// `public.text` types, and a file path for everything else (`public.jpeg=photo.jpg`).
    /// - Complexity: O(d) in the depth of the type tree, plus the length of `text`.
    static func inferredValue(_ text: String, for type: String, in types: UniformTypeTree = .standard) -> Value {
        if types.conforms(type, to: "public.file-url") { return .file(path: text) }
        if types.conforms(type, to: "public.url") { return .url(text) }
        if types.conforms(type, to: "public.text") { return .text(text) }
        if let scheme = urlScheme(of: text), text.dropFirst(scheme.count + 1).hasPrefix("//") {
            return scheme == "file" ? .file(path: text) : .url(text)
        }
        return .file(path: text)
    }

    /// The lower-cased scheme of a URL string (`https` in `https://example.com`), or `nil` when it has none.
    /// - Complexity: O(n) in the length of the scheme.
    static func urlScheme(of text: String) -> String? {
        var scheme = ""
        for (position, character) in text.unicodeScalars.enumerated() {
            if character == ":" { return position > 0 ? scheme.lowercased() : nil }
            let isLetter = (character >= "a" && character <= "z") || (character >= "A" && character <= "Z")
            let isOther =
                (character >= "0" && character <= "9") || character == "+" || character == "-"
                || character == "."
            guard isLetter || (position > 0 && isOther) else { return nil }
            scheme.unicodeScalars.append(character)
        }
        return nil
    }

    /// Whether the value is known to be a URL whose scheme is not `http` or `https`: a `mailto:` link, or
    /// `example.com` without a scheme, is a URL but not a web URL.
    var isNonWebURL: Bool {
        guard case .url = value else { return false }
        return !isWebURL
    }

    /// Whether the value is known to be a URL whose scheme is `http` or `https`.
    var isWebURL: Bool {
        guard case .url(let text) = value else { return false }
        let scheme = Attachment.urlScheme(of: text)
        return scheme == "http" || scheme == "https"
    }

    /// Why `identifier` is not a uniform type identifier, or `nil` when it is one
    /// (`UniformTypeTree.problem(withTypeIdentifier:)`: one rule for a UTI on every way in).
    public static func problem(withTypeIdentifier identifier: String) -> String? {
        UniformTypeTree.problem(withTypeIdentifier: identifier)
    }
}

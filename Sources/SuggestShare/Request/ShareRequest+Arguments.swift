import SuggestCore

extension ShareRequest {
    /// Builds a request from `--attachment UTI=VALUE` strings: one extension item holding all the attachments.
    ///
    /// Each string is split at its first `=`: `public.url=https://example.com/?a=b` is a `public.url` attachment
    /// whose value is `https://example.com/?a=b`. The value is read as a URL, text or a file path from its type
    /// (a file for `public.file-url`, a URL for other `public.url` types or a string with a `scheme://`, text for
    /// `public.text` types, a file path for anything else). With no strings at all the request shares nothing (no items),
    /// which is what a host that offers nothing sends.
    /// - Parameters:
    ///   - attachmentArguments: the `UTI=VALUE` strings, in command-line order.
    ///   - contentText: the item's text, if any.
    /// - Throws: `InputError` (field `--attachment`) for a string without `=`, or with an empty or malformed UTI.
    /// - Complexity: O(n) in the total length of the strings.
    public init(attachmentArguments: [String], contentText: String? = nil) throws(InputError) {
        var attachments: [Attachment] = []
        for argument in attachmentArguments {
            guard let equals = argument.firstIndex(of: "=") else {
                throw InputError(
                    field: "--attachment",
                    message: "\"\(argument.prefix(80))\" has no '='; write UTI=VALUE, as in "
                        + "public.url=https://example.com or public.jpeg=photo.jpg")
            }
            let type = String(argument[..<equals])
            let value = String(argument[argument.index(after: equals)...])
            guard !type.isEmpty else {
                throw InputError(
                    field: "--attachment",
                    message: "\"\(argument.prefix(80))\" has an empty type identifier before '='; write UTI=VALUE, "
                        + "as in public.url=https://example.com")
            }
            if let problem = Attachment.problem(withTypeIdentifier: type) {
                throw InputError(field: "--attachment", message: problem)
            }
            attachments.append(Attachment(typeIdentifiers: [type], value: Attachment.inferredValue(value, for: type)))
        }
        if attachments.isEmpty && contentText == nil {
            self.init()
        } else {
            self.init(items: [ExtensionItem(attachments: attachments, contentText: contentText)])
        }
    }
}

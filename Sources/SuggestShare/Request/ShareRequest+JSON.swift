import SuggestCore

extension ShareRequest {
    /// The longest share request read as JSON: 256 KiB, a hundred times a real one. Its parsed tree takes about 26
    /// times its bytes (the JSON values, then the items' property lists): a 30 MB request took 790 MB.
    public static let maximumJSONBytes = 256 << 10

    /// Reads a request from JSON text (what `suggest share --json` takes on standard input).
    /// - Throws: `InputError` for text that is not JSON (with its byte position) or does not have the shape
    ///   described at `init(json:)`.
    public init(jsonText: String) throws(InputError) {
        try self.init(json: try Self.parse(jsonText: jsonText))
    }

    /// A share request's JSON text parsed, once its size is checked.
    static func parse(jsonText: String) throws(InputError) -> JSONValue {
        guard jsonText.utf8.count <= ShareRequest.maximumJSONBytes else {
            throw InputError(
                field: nil,
                message: "the share request is \(jsonText.utf8.count) bytes, more than the \(ShareRequest.maximumJSONBytes) it may have")
        }
        do {
            return try JSONParser.parse(jsonText)
        } catch {
            throw InputError(field: nil, message: "the share request is not valid JSON: \(error)")
        }
    }

    /// Reads a request from parsed JSON of this shape:
    ///
    /// ```json
    /// {"items": [
    ///    {"contentText": "Look at this",
    ///     "attachments": [
    ///       {"typeIdentifiers": ["public.url"], "value": "https://example.com"},
    ///       {"type": "public.jpeg", "file": "photo.jpg"}],
    ///     "userInfo": {"source": "safari"}}]}
    /// ```
    /// - `items` (required, may be empty): the extension items.
    /// - `attachments` (optional): each with `typeIdentifiers` (a non-empty array of UTIs, most specific first)
    ///   or `type` (one UTI), and at most one of `value` (read as a URL, text or path from the type), `url`,
    ///   `text` or `file`.
    /// - `contentText` (optional string) and `userInfo` (optional object of strings, numbers, booleans, arrays
    ///   and objects) become keys of the item that predicate rules can test.
    ///
    /// Unknown members are ignored so that newer writers can add fields, as for donations.
    /// - Throws: `InputError` naming the offending field by its path, such as `items[0].attachments[1].type`.
    public init(json: JSONValue) throws(InputError) {
        guard case .object = json else {
            throw InputError(
                field: nil,
                message: "expected a share request object ({\"items\": [...]}), "
                    + "found \(json.kindName)")
        }
        guard let itemsValue = json["items"], itemsValue != .null else {
            throw InputError(field: "items", message: "is required: an array of extension items (it may be empty)")
        }
        guard case .array(let itemValues) = itemsValue else {
            throw InputError(
                field: "items", message: "expected an array of extension items, found \(itemsValue.kindName)")
        }
        var items: [ExtensionItem] = []
        for (index, itemValue) in itemValues.enumerated() {
            items.append(try Self.item(itemValue, path: "items[\(index)]"))
        }
        self.init(items: items)
    }

    private static func item(_ json: JSONValue, path: String) throws(InputError) -> ExtensionItem {
        guard case .object = json else {
            throw InputError(field: path, message: "expected an extension item object, found \(json.kindName)")
        }
        var item = ExtensionItem()
        if let value = json["contentText"], value != .null {
            guard case .string(let text) = value else {
                throw InputError(field: path + ".contentText", message: "expected a string, found \(value.kindName)")
            }
            item.contentText = text
        }
        if let value = json["attachments"], value != .null {
            guard case .array(let elements) = value else {
                throw InputError(
                    field: path + ".attachments", message: "expected an array of attachments, found \(value.kindName)")
            }
            for (index, element) in elements.enumerated() {
                item.attachments.append(try attachment(element, path: "\(path).attachments[\(index)]"))
            }
        }
        if let value = json["userInfo"], value != .null {
            guard case .object(let members) = value else {
                throw InputError(field: path + ".userInfo", message: "expected an object, found \(value.kindName)")
            }
            for entry in members {
                let key = entry.key
                let member = entry.value
                if key == "attachments" || key == "contentText" {
                    throw InputError(
                        field: "\(path).userInfo.\(key)",
                        message: "is reserved for the item itself; give it at the item's level")
                }
                if let converted = propertyListValue(member) { item.userInfo[key] = converted }
            }
        }
        item.addWebPageTypes()
        return item
    }

    private static func attachment(_ json: JSONValue, path: String) throws(InputError) -> Attachment {
        guard case .object = json else {
            throw InputError(field: path, message: "expected an attachment object, found \(json.kindName)")
        }
        var types: [String] = []
        let list = json["typeIdentifiers"].flatMap { $0 == .null ? nil : $0 }
        let single = json["type"].flatMap { $0 == .null ? nil : $0 }
        switch (list, single) {
        case (nil, nil):
            throw InputError(
                field: path,
                message: "needs typeIdentifiers (an array of UTIs) or type (one UTI), as in \"type\": \"public.url\"")
        case (.some, .some):
            throw InputError(field: path, message: "has both typeIdentifiers and type; give one of them")
        case (.some(let value), nil):
            guard case .array(let elements) = value, !elements.isEmpty else {
                let found = value == .array([]) ? "an empty array" : value.kindName
                throw InputError(field: path + ".typeIdentifiers", message: "expected a non-empty array of UTIs, found \(found)")
            }
            for (index, element) in elements.enumerated() {
                types.append(try typeIdentifier(element, field: "\(path).typeIdentifiers[\(index)]"))
            }
        case (nil, .some(let value)):
            types.append(try typeIdentifier(value, field: path + ".type"))
        }
        var value: Attachment.Value?
        for key in ["value", "url", "text", "file"] {
            guard let member = json[key], member != .null else { continue }
            guard case .string(let text) = member else {
                throw InputError(field: "\(path).\(key)", message: "expected a string, found \(member.kindName)")
            }
            guard value == nil else {
                throw InputError(field: "\(path).\(key)", message: "give only one of value, url, text and file")
            }
            switch key {
            case "url": value = .url(text)
            case "text": value = .text(text)
            case "file": value = .file(path: text)
            default: value = Attachment.inferredValue(text, for: types[0])
            }
        }
        return Attachment(typeIdentifiers: types, value: value)
    }

    private static func typeIdentifier(_ json: JSONValue, field: String) throws(InputError) -> String {
        guard case .string(let text) = json else {
            throw InputError(
                field: field, message: "expected a UTI string such as \"public.jpeg\", found \(json.kindName)")
        }
        if let problem = Attachment.problem(withTypeIdentifier: text) {
            throw InputError(field: field, message: problem)
        }
        return text
    }

    /// JSON as a property-list value for `userInfo`: numbers that are whole become integers; `null` is dropped.
    private static func propertyListValue(_ json: JSONValue) -> PropertyListValue? {
        switch json {
        case .null: return nil
        case .bool(let flag): return .bool(flag)
        case .number(let number):
            if number == number.rounded(), abs(number) < 9.0e15 { return .integer(Int(number)) }
            return .real(number)
        case .string(let text): return .string(text)
        case .array(let elements): return .array(elements.compactMap(propertyListValue))
        case .object(let members):
            var dictionary: [String: PropertyListValue] = [:]
            for member in members { dictionary[member.key] = propertyListValue(member.value) }
            return .dictionary(dictionary)
        }
    }
}

import SuggestCore

extension PropertyListValue {
    /// The value as a complete XML property list, in the layout Xcode writes (tab indents, sorted keys).
    ///
    /// Parsing the result gives back an equal value (reals that are not a number excepted, as NaN is unequal to
    /// itself).
    /// - Complexity: O(n) in the size of the value, plus sorting each dictionary's keys.
    public var xmlDocument: String {
        var text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """
        writeXML(to: &text, indent: 0)
        text += "</plist>\n"
        return text
    }

    private func writeXML(to text: inout String, indent: Int) {
        let pad = String(repeating: "\t", count: indent)
        switch self {
        case .string(let value): text += "\(pad)<string>\(Self.escaped(value))</string>\n"
        case .integer(let value): text += "\(pad)<integer>\(value)</integer>\n"
        case .real(let value):
            let literal = value.isNaN ? "nan" : value.isInfinite ? (value < 0 ? "-inf" : "+inf") : "\(value)"
            text += "\(pad)<real>\(literal)</real>\n"
        case .bool(let value): text += value ? "\(pad)<true/>\n" : "\(pad)<false/>\n"
        case .date(let value): text += "\(pad)<date>\(value.rfc3339)</date>\n"
        case .data(let value): text += "\(pad)<data>\(Base64.encode(value))</data>\n"
        case .array(let elements):
            guard !elements.isEmpty else {
                text += "\(pad)<array/>\n"
                return
            }
            text += "\(pad)<array>\n"
            for element in elements { element.writeXML(to: &text, indent: indent + 1) }
            text += "\(pad)</array>\n"
        case .dictionary(let members):
            guard !members.isEmpty else {
                text += "\(pad)<dict/>\n"
                return
            }
            text += "\(pad)<dict>\n"
            for key in members.keys.sorted() {
                text += "\(pad)\t<key>\(Self.escaped(key))</key>\n"
                members[key]?.writeXML(to: &text, indent: indent + 1)
            }
            text += "\(pad)</dict>\n"
        }
    }

    /// An element's text, escaped by Unicode scalar (`MarkupEscaping.xmlText`).
    static func escaped(_ text: String) -> String { MarkupEscaping.xmlText.escape(text) }
}

/// Text made safe inside markup, read by Unicode scalars as a markup parser reads it: a `"` or a `<` followed by a
/// combining accent, or `"\r\n"`, is one `Character` that is none of the characters escaped, so a writer that
/// compared `Character`s would let it out as it is.
public enum MarkupEscaping {
    /// An XML element's text (a property list): `&`, `<`, `>`, and a carriage return, which XML parsers that
    /// normalize line ends would turn into a line feed.
    case xmlText
    /// HTML content and attribute values: `&`, `<`, `>`, `"` and `'`.
    case html

    /// `text` with each character that markup would read as its own replaced by its character reference.
    public func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"" where self == .html: result += "&quot;"
            case "'" where self == .html: result += "&#39;"
            case "\r" where self == .xmlText: result += "&#13;"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}

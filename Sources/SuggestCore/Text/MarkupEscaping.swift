/// Text made safe inside markup, read by Unicode scalars as a markup parser reads it: a `"` or a `<` followed by a
/// combining accent, or `"\r\n"`, is one `Character` that is none of the characters escaped, and went out as it
/// was when each writer compared `Character`s (the report's chart and the property-list writer both did; found by
/// a probe and a review).
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

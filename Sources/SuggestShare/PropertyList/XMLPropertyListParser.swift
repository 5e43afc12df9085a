import SuggestCore

/// Reads the XML form of a property list: the subset of XML that Apple's plist DTD uses.
///
/// Elements: `plist`, `dict`, `key`, `string`, `integer`, `real`, `true`, `false`, `array`, `data`, `date`.
/// Character data may use the five predefined entities, numeric character references and CDATA sections.
/// The XML declaration, processing instructions, comments and the DOCTYPE (with an internal subset) are skipped;
/// attributes are read and ignored. A `<plist>` wrapper is optional, as it is for Core Foundation. In a `<dict>`
/// a repeated key keeps its last value, as `CFDictionarySetValue` does.
///
/// Every error carries the line and column where the problem starts. Input must be UTF-8 (a byte-order mark is
/// allowed); nesting deeper than `maximumDepth` is refused rather than recursed into.
struct XMLPropertyListParser {
    /// The deepest nesting of `dict` and `array` accepted.
    static let maximumDepth = PropertyListValue.maximumDepth

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    private init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Parses a whole XML property list.
    /// - Throws: `PropertyListError` with a line and column.
    /// - Complexity: O(n) in the size of the input.
    static func parse(_ bytes: [UInt8]) throws(PropertyListError) -> PropertyListValue {
        var parser = XMLPropertyListParser(bytes)
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) {
            throw parser.error(
                "the file is UTF-16; only UTF-8 XML property lists are read (convert it with "
                    + "plutil -convert xml1)", at: 0)
        }
        if let bad = UTF8Validation.firstInvalidOffset(in: bytes) {
            throw parser.error("invalid UTF-8 (byte 0x\(hex(bytes[bad])))", at: bad)
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { parser.index = 3 }
        try parser.skipMisc()
        guard parser.index < bytes.count else {
            throw parser.error("the file is empty; expected an XML property list")
        }
        let root = try parser.readStartTag()
        let value: PropertyListValue
        if root.name == "plist" {
            guard !root.selfClosing else { throw parser.error("<plist/> holds no value", at: root.offset) }
            try parser.skipMisc()
            let tag = try parser.readStartTag()
            value = try parser.parseValue(tag)
            try parser.skipMisc()
            try parser.readEndTag("plist", openedAt: root.offset)
        } else {
            value = try parser.parseValue(root)
        }
        try parser.skipMisc()
        guard parser.index == bytes.count else {
            throw parser.error("unexpected content after the property list")
        }
        return value
    }

    // MARK: - Positions and errors

    private func error(_ message: String, at offset: Int? = nil) -> PropertyListError {
        let target = min(offset ?? index, bytes.count)
        var line = 1
        var column = 1
        var position = 0
        while position < target {
            let byte = bytes[position]
            if byte == 0x0A {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1  // counts characters, not bytes: continuation bytes add nothing
            }
            position += 1
        }
        return PropertyListError(position: .line(line, column: column), message: message)
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }

    private func describeHere() -> String {
        guard index < bytes.count else { return "the end of the file" }
        var end = index
        while end < bytes.count, end - index < 20, bytes[end] != 0x0A { end += 1 }
        // Cut at a character boundary so that the excerpt stays valid UTF-8.
        while end < bytes.count, end > index, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        return "'" + String(decoding: bytes[index..<end], as: UTF8.self) + "'"
    }

    // MARK: - Lexical helpers

    private func peek(_ literal: String) -> Bool {
        var position = index
        for byte in literal.utf8 {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
        }
        return true
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: ":"), UInt8(ascii: "."),
            UInt8(ascii: "-"):
            return true
        default:
            return byte >= 0x80
        }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count, Self.isWhitespace(bytes[index]) { index += 1 }
    }

    /// Skips white space, comments, processing instructions (the XML declaration) and a DOCTYPE.
    private mutating func skipMisc() throws(PropertyListError) {
        while true {
            skipWhitespace()
            if peek("<!--") {
                try skipComment()
            } else if peek("<?") {
                let start = index
                try skip(past: "?>", what: "processing instruction", openedAt: start)
            } else if peek("<!DOCTYPE") {
                try skipDoctype()
            } else {
                return
            }
        }
    }

    private mutating func skipComment() throws(PropertyListError) {
        let start = index
        index += 4
        try skip(past: "-->", what: "comment", openedAt: start)
    }

    private mutating func skip(past terminator: String, what: String, openedAt start: Int) throws(PropertyListError) {
        while index < bytes.count {
            if peek(terminator) {
                index += terminator.utf8.count
                return
            }
            index += 1
        }
        throw error("unterminated \(what) (no '\(terminator)')", at: start)
    }

    private mutating func skipDoctype() throws(PropertyListError) {
        let start = index
        index += 9
        var bracketDepth = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                index += 1
                while index < bytes.count, bytes[index] != byte { index += 1 }
            case UInt8(ascii: "["): bracketDepth += 1
            case UInt8(ascii: "]"): bracketDepth -= 1
            case UInt8(ascii: ">") where bracketDepth <= 0:
                index += 1
                return
            default: break
            }
            index += 1
        }
        throw error("unterminated <!DOCTYPE (no '>')", at: start)
    }

    // MARK: - Tags

    private struct StartTag {
        var name: String
        var selfClosing: Bool
        var offset: Int
    }

    private mutating func readName() throws(PropertyListError) -> String {
        let start = index
        while index < bytes.count, Self.isNameByte(bytes[index]) { index += 1 }
        guard index > start else { throw error("expected an element name, found \(describeHere())") }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// Reads `<name attr="value" ...>` or `<name/>`; the caller has skipped to the `<`.
    private mutating func readStartTag() throws(PropertyListError) -> StartTag {
        let start = index
        guard index < bytes.count else { throw error("expected an element, found the end of the file") }
        guard bytes[index] == UInt8(ascii: "<") else {
            throw error("expected an element such as <dict> or <string>, found \(describeHere())")
        }
        if peek("</") { throw error("expected a value, found the end tag \(describeHere())") }
        if peek("<![CDATA[") { throw error("expected an element, found a CDATA section outside <string>") }
        index += 1
        let name = try readName()
        while true {
            skipWhitespace()
            guard index < bytes.count else { throw error("unterminated <\(name)> tag", at: start) }
            if peek("/>") {
                index += 2
                return StartTag(name: name, selfClosing: true, offset: start)
            }
            if bytes[index] == UInt8(ascii: ">") {
                index += 1
                return StartTag(name: name, selfClosing: false, offset: start)
            }
            // An attribute: name = "value" (read and ignored).
            let attributeStart = index
            guard Self.isNameByte(bytes[index]) else {
                throw error("unexpected \(describeHere()) in the <\(name)> tag")
            }
            _ = try readName()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "=") else {
                throw error("expected '=' after an attribute name in <\(name)>", at: attributeStart)
            }
            index += 1
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'")
            else { throw error("expected a quoted attribute value in <\(name)>") }
            let quote = bytes[index]
            let valueStart = index
            index += 1
            while index < bytes.count, bytes[index] != quote { index += 1 }
            guard index < bytes.count else {
                throw error("unterminated attribute value in <\(name)>", at: valueStart)
            }
            index += 1
        }
    }

    /// Reads `</name>`, which must close the element opened at `openedAt`.
    private mutating func readEndTag(_ name: String, openedAt: Int) throws(PropertyListError) {
        guard peek("</") else {
            if index >= bytes.count {
                throw error("<\(name)> is never closed (expected '</\(name)>')", at: openedAt)
            }
            throw error("expected '</\(name)>', found \(describeHere())")
        }
        let start = index
        index += 2
        let found = try readName()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ">") else {
            throw error("expected '>' to end the '</\(found)' tag")
        }
        index += 1
        guard found == name else {
            throw error(
                "expected '</\(name)>' to close the element opened at \(positionText(openedAt)), "
                    + "found '</\(found)>'", at: start)
        }
    }

    private func positionText(_ offset: Int) -> String { "\(error("", at: offset).position)" }

    // MARK: - Values

    private mutating func parseValue(_ tag: StartTag) throws(PropertyListError) -> PropertyListValue {
        switch tag.name {
        case "dict": return try parseDictionary(tag)
        case "array": return try parseArray(tag)
        case "string": return .string(try readText(tag))
        case "key":
            throw error("<key> is only allowed directly inside <dict>", at: tag.offset)
        case "integer":
            let text = try readText(tag)
            guard let value = Self.integer(text) else {
                throw error("\"\(text.prefix(40))\" is not an integer (or does not fit in 64 bits)", at: tag.offset)
            }
            return .integer(value)
        case "real":
            let text = try readText(tag)
            guard let value = Self.real(text) else {
                throw error("\"\(text.prefix(40))\" is not a real number", at: tag.offset)
            }
            return .real(value)
        case "true", "false":
            if !tag.selfClosing {
                skipWhitespace()
                try readEndTag(tag.name, openedAt: tag.offset)
            }
            return .bool(tag.name == "true")
        case "date":
            let text = try readText(tag)
            let trimmed = Self.trimmed(text)
            guard let date = Timestamp(rfc3339: trimmed) else {
                throw error("\"\(trimmed.prefix(40))\" is not a date (expected 2001-01-01T00:00:00Z)", at: tag.offset)
            }
            return .date(date)
        case "data":
            let text = try readText(tag)
            switch Base64.decode(Array(text.utf8)) {
            case .success(let data): return .data(data)
            case .failure: throw error("<data> is not valid base64", at: tag.offset)
            }
        case "plist":
            throw error("<plist> may only be the outermost element", at: tag.offset)
        default:
            throw error(
                "unknown element <\(tag.name)>; a property list holds dict, array, key, string, integer, "
                    + "real, true, false, date or data", at: tag.offset)
        }
    }

    private mutating func enter(_ tag: StartTag) throws(PropertyListError) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("nested deeper than \(Self.maximumDepth) levels", at: tag.offset)
        }
    }

    private mutating func parseDictionary(_ tag: StartTag) throws(PropertyListError) -> PropertyListValue {
        if tag.selfClosing { return .dictionary([:]) }
        try enter(tag)
        defer { depth -= 1 }
        var members: [String: PropertyListValue] = [:]
        while true {
            try skipMisc()
            if peek("</") || index >= bytes.count {
                try readEndTag("dict", openedAt: tag.offset)
                return .dictionary(members)
            }
            let keyTag = try readStartTag()
            guard keyTag.name == "key" else {
                throw error("expected <key> in <dict>, found <\(keyTag.name)>", at: keyTag.offset)
            }
            let key = try readText(keyTag)
            try skipMisc()
            if peek("</") || index >= bytes.count {
                throw error("the key \"\(key.prefix(60))\" has no value", at: keyTag.offset)
            }
            let valueTag = try readStartTag()
            if valueTag.name == "key" {
                throw error("the key \"\(key.prefix(60))\" has no value (found another <key>)", at: valueTag.offset)
            }
            members[key] = try parseValue(valueTag)
        }
    }

    private mutating func parseArray(_ tag: StartTag) throws(PropertyListError) -> PropertyListValue {
        if tag.selfClosing { return .array([]) }
        try enter(tag)
        defer { depth -= 1 }
        var elements: [PropertyListValue] = []
        while true {
            try skipMisc()
            if peek("</") || index >= bytes.count {
                try readEndTag("array", openedAt: tag.offset)
                return .array(elements)
            }
            elements.append(try parseValue(try readStartTag()))
        }
    }

    /// Reads character data up to the end tag of `tag`, resolving entities, references and CDATA sections.
    private mutating func readText(_ tag: StartTag) throws(PropertyListError) -> String {
        if tag.selfClosing { return "" }
        var text: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "<") {
                if peek("</") {
                    try readEndTag(tag.name, openedAt: tag.offset)
                    return String(decoding: text, as: UTF8.self)
                } else if peek("<!--") {
                    try skipComment()
                } else if peek("<![CDATA[") {
                    let start = index
                    index += 9
                    while index < bytes.count, !peek("]]>") {
                        text.append(bytes[index])
                        index += 1
                    }
                    guard index < bytes.count else { throw error("unterminated CDATA section", at: start) }
                    index += 3
                } else {
                    throw error("unexpected element inside <\(tag.name)>; escape '<' as &lt;")
                }
            } else if byte == UInt8(ascii: "&") {
                try readReference(into: &text)
            } else {
                text.append(byte)
                index += 1
            }
        }
        throw error("<\(tag.name)> is never closed (expected '</\(tag.name)>')", at: tag.offset)
    }

    private mutating func readReference(into text: inout [UInt8]) throws(PropertyListError) {
        let start = index
        index += 1
        var end = index
        while end < bytes.count, end - index <= 12, bytes[end] != UInt8(ascii: ";") { end += 1 }
        guard end < bytes.count, bytes[end] == UInt8(ascii: ";") else {
            if index < bytes.count, bytes[index] == UInt8(ascii: "#") {
                throw error("a character reference (&#...;) here is too long or not closed by ';'", at: start)
            }
            throw error("'&' must start an entity such as &amp; (write a literal '&' as &amp;)", at: start)
        }
        let name = String(decoding: bytes[index..<end], as: UTF8.self)
        index = end + 1
        switch name {
        case "lt": text.append(UInt8(ascii: "<"))
        case "gt": text.append(UInt8(ascii: ">"))
        case "amp": text.append(UInt8(ascii: "&"))
        case "quot": text.append(UInt8(ascii: "\""))
        case "apos": text.append(UInt8(ascii: "'"))
        default:
            guard name.hasPrefix("#") else {
                throw error("unknown entity &\(name); (only &lt; &gt; &amp; &quot; &apos; and &#...; exist)", at: start)
            }
            let digits = name.dropFirst()
            let value: UInt32?
            if digits.hasPrefix("x") || digits.hasPrefix("X") {
                value = digits.count > 1 ? UInt32(digits.dropFirst(), radix: 16) : nil
            } else {
                value = digits.isEmpty ? nil : UInt32(digits, radix: 10)
            }
            guard let value, value != 0, let scalar = Unicode.Scalar(value) else {
                throw error("&\(name); is not a valid character reference", at: start)
            }
            text.append(contentsOf: String(Character(scalar)).utf8)
        }
    }

    // MARK: - Scalars

    private static func trimmed(_ text: String) -> String {
        let bytes = Array(text.utf8)
        var start = 0
        var end = bytes.count
        while start < end, isWhitespace(bytes[start]) { start += 1 }
        while end > start, isWhitespace(bytes[end - 1]) { end -= 1 }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    /// Decimal with an optional sign, or hexadecimal with `0x` as Core Foundation also reads.
    static func integer(_ text: String) -> Int? {
        var body = Substring(trimmed(text))
        var negative = false
        if body.first == "-" || body.first == "+" {
            negative = body.first == "-"
            body = body.dropFirst()
        }
        let magnitude: UInt64?
        if body.hasPrefix("0x") || body.hasPrefix("0X") {
            magnitude = UInt64(body.dropFirst(2), radix: 16)
        } else {
            magnitude = body.allSatisfy({ $0.isASCII && $0.isNumber }) ? UInt64(body, radix: 10) : nil
        }
        guard let magnitude else { return nil }
        if negative {
            guard magnitude <= UInt64(Int.max) + 1 else { return nil }
            return magnitude == UInt64(Int.max) + 1 ? Int.min : -Int(magnitude)
        }
        guard magnitude <= UInt64(Int.max) else { return nil }
        return Int(magnitude)
    }

    static func real(_ text: String) -> Double? {
        let body = trimmed(text)
        switch body.lowercased() {
        case "nan": return .nan
        case "inf", "+inf", "infinity", "+infinity": return .infinity
        case "-inf", "-infinity": return -.infinity
        default: break
        }
        // `Double(_:)` also takes hexadecimal floats and "nan(...)"; property lists only write decimals.
        guard !body.isEmpty,
            body.utf8.allSatisfy({ byte in
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "e")
                    || byte == UInt8(ascii: "E")
            })
        else { return nil }
        return Double(body)
    }
}

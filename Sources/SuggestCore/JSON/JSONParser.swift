/// A strict JSON parser (RFC 8259) over UTF-8 bytes with errors that say where and what.
///
/// Hand-written rather than `JSONDecoder` for three reasons: the core needs no Foundation (start-up time),
/// `import` parses millions of lines (speed), and hostile input must be refused with a byte position rather than
/// crash: nesting is bounded, strings must be valid UTF-8 and numbers finite.
public struct JSONParser {
    /// Why a document is not acceptable JSON, and at which byte offset (0-based) the problem starts.
    public struct Error: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        /// The 0-based byte offset in the input where the problem starts (`description` shows it 1-based).
        public var offset: Int
        /// What is wrong, without the position: `unexpected character 'x'`, `unterminated string`.
        public var message: String
        public var description: String { "\(message) at byte \(offset + 1)" }
    }

    /// The deepest nesting of arrays and objects accepted; deeper documents are refused, not recursed into.
    public static let maximumDepth = 64

    // The cursor and its primitives are internal, not private: `InteractionDecoder` reads donations with them
    // straight from bytes, without building a `JSONValue` tree.
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Parses one JSON document that spans all of `text` (white space around it is allowed).
    /// - Throws: `JSONParser.Error` for anything that is not one valid JSON value.
    /// - Complexity: O(n) in the length of `text`.
    public static func parse(_ text: String) throws(Error) -> JSONValue {
        var copy = text
        let result: Result<JSONValue, Error> = copy.withUTF8 { buffer in
            do throws(Error) { return .success(try parse(bytes: buffer)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Parses one JSON document from UTF-8 bytes.
    /// - Throws: `JSONParser.Error` for anything that is not one valid JSON value, invalid UTF-8 included.
    public static func parse(bytes: UnsafeBufferPointer<UInt8>) throws(Error) -> JSONValue {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        let value = try parser.parseValue()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
        return value
    }

    /// Checks that `bytes` hold one JSON value and nothing after it but white space, as `parse(bytes:)` does,
    /// with the same errors, without building the value.
    public static func check(bytes: UnsafeBufferPointer<UInt8>) throws(Error) {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        try parser.skipValue()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.error("unexpected text after the JSON value") }
    }

    private func error(_ message: String, at offset: Int? = nil) -> Error {
        Error(offset: offset ?? index, message: message)
    }

    var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func parseValue() throws(Error) -> JSONValue {
        guard let byte = current else { throw error("unexpected end of the JSON text") }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try parseLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try parseLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try parseLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character '\(Self.printable(byte))'")
        }
    }

    /// Reads one value as `parseValue` does, with the same errors, and keeps nothing of it: for members a reader
    /// does not know, whose tree would take about 30 bytes an element (an unknown array of 30M numbers in a 60 MB
    /// line took 890 MB).
    mutating func skipValue() throws(Error) {
        guard let byte = current else { throw error("unexpected end of the JSON text") }
        switch byte {
        case UInt8(ascii: "{"):
            try forEachMember { parser, _ throws(Error) in try parser.skipValue() }
        case UInt8(ascii: "["):
            try forEachElement { parser throws(Error) in try parser.skipValue() }
        case UInt8(ascii: "\""):
            if try parseUnescapedString() == nil { _ = try parseString() }
        case UInt8(ascii: "t"): try parseLiteral("true")
        case UInt8(ascii: "f"): try parseLiteral("false")
        case UInt8(ascii: "n"): try parseLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw error("unexpected character '\(Self.printable(byte))'")
        }
    }

    mutating func parseLiteral(_ literal: StaticString) throws(Error) {
        let start = index
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount)
        for byte in expected {
            guard current == byte else { throw error("invalid literal, expected '\(literal)'", at: start) }
            index += 1
        }
    }

    mutating func enter() throws(Error) {
        depth += 1
        guard depth <= Self.maximumDepth else {
            throw error("nesting deeper than \(Self.maximumDepth) levels")
        }
    }

    private mutating func parseObject() throws(Error) -> JSONValue {
        var members: [JSONMember] = []
        try forEachMember { parser, key throws(Error) in members.append(JSONMember(key, try parser.parseValue())) }
        return .object(members)
    }

    private mutating func parseArray() throws(Error) -> JSONValue {
        var elements: [JSONValue] = []
        try forEachElement { parser throws(Error) in elements.append(try parser.parseValue()) }
        return .array(elements)
    }

    /// Reads an object from its `{` to its `}`, calling `value` at each member's value with the member's name.
    private mutating func forEachMember(_ value: (inout JSONParser, String) throws(Error) -> Void) throws(Error) {
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else { throw error("expected a member name in quotes") }
            let key = try parseString()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw error("expected ':' after the member name") }
            index += 1
            skipWhitespace()
            try value(&self, key)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                return
            case nil: throw error("unexpected end of the JSON text inside an object")
            default: throw error("expected ',' or '}' in an object")
            }
        }
    }

    /// Reads an array from its `[` to its `]`, calling `element` at each element.
    private mutating func forEachElement(_ element: (inout JSONParser) throws(Error) -> Void) throws(Error) {
        try enter()
        defer { depth -= 1 }
        index += 1
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            try element(&self)
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                return
            case nil: throw error("unexpected end of the JSON text inside an array")
            default: throw error("expected ',' or ']' in an array")
            }
        }
    }

    mutating func parseNumber() throws(Error) -> Double {
        let start = index
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, first >= 0x30, first <= 0x39 else { throw error("invalid number", at: start) }
        if first == 0x30 {
            index += 1
        } else {
            while let byte = current, byte >= 0x30, byte <= 0x39 { index += 1 }
        }
        if current == UInt8(ascii: ".") {
            index += 1
            guard let byte = current, byte >= 0x30, byte <= 0x39 else { throw error("invalid number", at: start) }
            while let byte = current, byte >= 0x30, byte <= 0x39 { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, byte >= 0x30, byte <= 0x39 else { throw error("invalid number", at: start) }
            while let byte = current, byte >= 0x30, byte <= 0x39 { index += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw error("number \(text.prefix(40)) is out of range (beyond a double's ±1.8e308)", at: start)
        }
        return value
    }

    /// The bytes between the quotes of a string that has no escapes, checked as `parseString` checks them (no
    /// control character, well-formed UTF-8), with the cursor moved past the closing quote; `nil`, with the cursor
    /// left on the opening quote, for a string with an escape. The fast path of `parseString`, and what
    /// `InteractionDecoder` reads member names and most values with, without making a `String`.
    mutating func parseUnescapedString() throws(Error) -> UnsafeBufferPointer<UInt8>? {
        let start = index
        var position = index + 1
        var highBits: UInt8 = 0
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") { return nil }
            guard byte >= 0x20 else { throw error("control character in a string (escape it as \\u00XX)", at: position) }
            highBits |= byte
            position += 1
        }
        guard position < bytes.count else { throw error("unterminated string", at: start) }
        let content = UnsafeBufferPointer(rebasing: bytes[start + 1..<position])
        // ASCII needs no validation; anything else must be well-formed UTF-8.
        // At the first byte that is not UTF-8, not the string's quote.
        if highBits >= 0x80, let invalid = UTF8Validation.firstInvalidOffset(in: content) {
            throw error("invalid UTF-8 in a string (the text must be UTF-8)", at: start + 1 + invalid)
        }
        index = position + 1
        return content
    }

    mutating func parseString() throws(Error) -> String {
        if let content = try parseUnescapedString() { return String(decoding: content, as: UTF8.self) }
        // With escapes: decoded byte by byte from the opening quote.
        let start = index
        index += 1
        var scratch: [UInt8] = []
        while let byte = current {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard UTF8Validation.firstInvalidOffset(in: scratch) == nil else {
                    throw error("invalid UTF-8 in a string (the text must be UTF-8)", at: start)
                }
                return String(decoding: scratch, as: UTF8.self)
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = current else { break }
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scratch.append(0x22)
                case UInt8(ascii: "\\"): scratch.append(0x5C)
                case UInt8(ascii: "/"): scratch.append(0x2F)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &scratch)
                default: throw error("invalid escape '\\\(Self.printable(escape))'", at: index - 2)
                }
            default:
                guard byte >= 0x20 else { throw error("control character in a string (escape it as \\u00XX)") }
                scratch.append(byte)
                index += 1
            }
        }
        throw error("unterminated string", at: start)
    }

    private mutating func hexQuad() throws(Error) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw error("invalid hex digit in a \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func appendUnicodeEscape(to scratch: inout [UInt8]) throws(Error) {
        let escapeStart = index - 2
        var scalar = try hexQuad()
        if (0xD800...0xDBFF).contains(scalar) {
            guard index + 6 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
            else { throw error("unpaired surrogate in a \\u escape", at: escapeStart) }
            index += 2
            let low = try hexQuad()
            guard (0xDC00...0xDFFF).contains(low) else {
                throw error("unpaired surrogate in a \\u escape", at: escapeStart)
            }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw error("unpaired surrogate in a \\u escape", at: escapeStart)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid \\u escape", at: escapeStart) }
        scratch.append(contentsOf: String(unicode).utf8)
    }

    /// The byte as an error shows it: itself when printable, else `\x` and two hex digits (`\x00`, not `\x0`).
    private static func printable(_ byte: UInt8) -> String {
        guard byte < 0x20 || byte >= 0x7F else { return String(UnicodeScalar(byte)) }
        return "\\x" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16)
    }
}

import Testing

@testable import SuggestCore

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(#" {"a": [1, -2.5e3, true, false, null, "x\n\u00e9\ud83d\ude00"], "b": {}} "#)
        #expect(
            value
                == .object([
                    JSONMember("a", .array([.number(1), .number(-2500), .bool(true), .bool(false), .null, .string("x\né😀")])),
                    JSONMember("b", .object([])),
                ]))
    }

    @Test(arguments: [
        ("", "unexpected end", 0),
        ("{", "expected a member name", 1),
        ("[1,]", "unexpected character ']'", 3),
        ("{\"a\" 1}", "expected ':'", 5),
        ("01", "unexpected text after", 1),
        ("1e400", "out of range", 0),
        ("\"abc", "unterminated string", 0),
        ("\"a\u{01}\"", "control character", 2),
        ("\"\\x\"", "invalid escape", 1),
        ("\"\\ud800\"", "unpaired surrogate", 1),
        ("tru", "invalid literal", 0),
        ("[1] 2", "unexpected text after", 4),
        // A byte that is not printable shows as two hex digits: a NUL read '\x0'.
        ("[\u{0}]", "unexpected character '\\x00'", 1),
        ("[\u{1B}]", "unexpected character '\\x1b'", 1),
    ])
    func reportsWhatAndWhere(text: String, message: String, offset: Int) {
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(text) }
        do {
            _ = try JSONParser.parse(text)
        } catch {
            #expect(error.message.contains(message), "\(error)")
            #expect(error.offset == offset, "\(error)")
        }
    }

    /// `skipValue` reads what `parseValue` reads, to the same place, and refuses what it refuses with the same
    /// error: it only keeps nothing.
    @Test(arguments: [
        #"{"a":[1,2,{"b":"c\u00e9\n"}],"d":null,"e":true,"f":-1.5e3}"#, "[]", "{}", #""plain""#, "12", "[1,]",
        #"{"a" 1}"#, "1e400", #""abc"#, "\"a\u{01}\"", #""\x""#, #""\ud800""#, "tru", "[[[", #"{"a":1,}"#,
        String(repeating: "[", count: JSONParser.maximumDepth + 1) + String(repeating: "]", count: JSONParser.maximumDepth + 1),
    ])
    func skippingAcceptsAndRefusesWhatParsingDoes(text: String) {
        var copy = text
        copy.withUTF8 { bytes in
            var parsing = JSONParser(bytes)
            var skipping = JSONParser(bytes)
            let parsed = Result { () throws(JSONParser.Error) in try parsing.parseValue() }
            let skipped = Result { () throws(JSONParser.Error) in try skipping.skipValue() }
            switch (parsed, skipped) {
            case (.success, .success): #expect(parsing.index == skipping.index)
            case (.failure(let first), .failure(let second)): #expect(first == second)
            default: Issue.record("parsing gave \(parsed), skipping \(skipped)")
            }
        }
    }

    @Test func refusesDeepNestingInsteadOfRecursing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONParser.Error.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        #expect(throws: Never.self) { try JSONParser.parse(fine) }
    }

    @Test func refusesInvalidUTF8() {
        let bytes: [UInt8] = [0x22, 0x61, 0xFF, 0x22]
        #expect(throws: JSONParser.Error.self) {
            try bytes.withUnsafeBufferPointer { buffer throws(JSONParser.Error) in try JSONParser.parse(bytes: buffer) }
        }
    }

    @Test func writerRoundTripsStrings() throws {
        let tricky = "quote \" backslash \\ newline \n tab \t nul \u{0} bell \u{7} line-sep \u{2028} 😀"
        var writer = JSONWriter()
        writer.string(tricky)
        #expect(try JSONParser.parse(writer.text) == .string(tricky))
    }

    /// Strings short enough to be stored inline and longer ones take the same path: appended whole when nothing in
    /// them needs escaping, escaped character by character when something does.
    @Test func writerEscapesShortAndLongStringsAlike() {
        let long = String(repeating: "x", count: 40)
        for (input, expected) in [
            ("plain", #""plain""#), ("a\"b", #""a\"b""#), ("tab\t", #""tab\t""#), ("\u{2028}", #""\u2028""#),
            ("\u{1}", #""\u0001""#), ("é ok", #""é ok""#), (long, "\"\(long)\""), (long + "\\", "\"\(long)\\\\\""),
        ] {
            var writer = JSONWriter()
            writer.string(input)
            #expect(writer.text == expected, "\(input)")
        }
    }
}

@Suite struct DecimalFormattingTests {
    @Test(arguments: [
        (5.1027700000000005, "5.10277"), (6.71715, "6.71715"), (0.000123456789, "0.000123457"), (1234567.8, "1234570"),
        (100.0, "100"), (0.25, "0.25"), (-2.5, "-2.5"), (0.0, "0"), (9.9999999, "10"),
    ])
    func roundsToSignificantDigits(value: Double, text: String) {
        #expect(JSONWriter.decimal(value, significantDigits: 6) == text)
    }
}

import SuggestTestSupport
import Testing

@testable import SuggestShare

@Suite("Malformed property lists")
struct PropertyListErrorTests {
    struct XMLCase: Sendable, CustomTestStringConvertible {
        var text: String
        var line: Int
        var column: Int
        var fragment: String
        var testDescription: String { fragment }
    }

    static let xmlCases: [XMLCase] = [
        XMLCase(text: "", line: 1, column: 1, fragment: "empty"),
        XMLCase(text: "<plist><dict><key>a</key></dict></plist>", line: 1, column: 14, fragment: "has no value"),
        XMLCase(
            text: "<plist><dict><key>a</key><key>b</key></dict></plist>", line: 1, column: 26,
            fragment: "has no value (found another <key>)"),
        XMLCase(
            text: "<plist>\n  <dict>\n\t<string>x</string>\n</dict></plist>", line: 3, column: 2,
            fragment: "expected <key> in <dict>"),
        XMLCase(text: "<plist><string>abc</strin></plist>", line: 1, column: 19, fragment: "found '</strin>'"),
        XMLCase(text: "<plist><string>abc", line: 1, column: 8, fragment: "never closed"),
        XMLCase(
            text: "<plist><string>a &nbsp; b</string></plist>", line: 1, column: 18, fragment: "unknown entity &nbsp;"),
        XMLCase(
            text: "<plist><string>a & b</string></plist>", line: 1, column: 18, fragment: "'&' must start an entity"),
        XMLCase(
            text: "<plist><string>&#xD800;</string></plist>", line: 1, column: 16,
            fragment: "not a valid character reference"),
        XMLCase(
            text: "<plist><string>&#x110000;</string></plist>", line: 1, column: 16,
            fragment: "not a valid character reference"),
        XMLCase(
            text: "<plist><string>&#99999999999999999999;</string></plist>", line: 1, column: 16,
            fragment: "a character reference (&#...;) here is too long"),
        XMLCase(text: "<plist>\n<integer>12x</integer></plist>", line: 2, column: 1, fragment: "is not an integer"),
        XMLCase(text: "<plist><real>one</real></plist>", line: 1, column: 8, fragment: "is not a real number"),
        XMLCase(text: "<plist><date>yesterday</date></plist>", line: 1, column: 8, fragment: "is not a date"),
        XMLCase(text: "<plist><data>!!!</data></plist>", line: 1, column: 8, fragment: "not valid base64"),
        XMLCase(text: "<plist><foo/></plist>", line: 1, column: 8, fragment: "unknown element <foo>"),
        XMLCase(
            text: "<plist><string>a</string></plist>trailing", line: 1, column: 34, fragment: "after the property list"),
        XMLCase(text: "<plist><array><string>a</string></plist>", line: 1, column: 33, fragment: "expected '</array>'"),
        XMLCase(
            text: "<plist><string>a<b/></string></plist>", line: 1, column: 17,
            fragment: "unexpected element inside <string>"),
        XMLCase(text: "<plist/>", line: 1, column: 1, fragment: "holds no value"),
        XMLCase(text: "<!-- never closed", line: 1, column: 1, fragment: "unterminated comment"),
        XMLCase(text: "<plist version=\"1.0><dict/></plist>", line: 1, column: 16, fragment: "unterminated attribute"),
        XMLCase(
            text: "<plist><key>a</key></plist>", line: 1, column: 8, fragment: "only allowed directly inside <dict>"),
        XMLCase(text: "<plist><true>x</true></plist>", line: 1, column: 14, fragment: "expected '</true>'"),
        // Columns count characters: é is two bytes but one column.
        XMLCase(text: "<plist><string>é</string></plist>x", line: 1, column: 34, fragment: "after the property list"),
        XMLCase(
            text: "<plist><string>é</string>\n  <x", line: 2, column: 3, fragment: "expected '</plist>', found '<x'"),
    ]

    @Test("XML errors carry the line and column of the problem", arguments: xmlCases)
    func xmlPositions(_ testCase: XMLCase) {
        expectError {
            _ = try PropertyListValue(parsing: testCase.text)
        } where: { error in
            guard let error = error as? PropertyListError else { return false }
            return error.position == .line(testCase.line, column: testCase.column)
                && error.message.contains(testCase.fragment)
        }
    }

    @Test(
        "invalid UTF-8 is refused where it occurs",
        arguments: [
            [0xC0, 0x80] as [UInt8],  // overlong NUL
            [0xED, 0xA0, 0x80],  // a surrogate
            [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
            [0xE2, 0x82],  // truncated at the end
            [0xFF],
        ])
    func invalidUTF8(_ bad: [UInt8]) {
        let bytes = Array("<plist>\n<string>ab".utf8) + bad + Array("</string></plist>".utf8)
        #expect(
            throws: PropertyListError(position: .line(2, column: 11), message: "invalid UTF-8 (byte 0x\(hex(bad[0])))")
        ) {
            _ = try PropertyListValue(parsing: bytes)
        }
    }

    @Test("UTF-16 files are refused with advice")
    func utf16() {
        expectError {
            _ = try PropertyListValue(parsing: [0xFF, 0xFE, 0x3C, 0x00])
        } where: { error in
            (error as? PropertyListError)?.message.contains("plutil -convert xml1") == true
        }
    }

    @Test("nesting deeper than the limit is refused at the element that crosses it")
    func deepXML() {
        let depth = 1000
        let text = String(repeating: "<array>", count: depth) + String(repeating: "</array>", count: depth)
        let limit = XMLPropertyListParser.maximumDepth
        #expect(
            throws: PropertyListError(
                position: .line(1, column: limit * 7 + 1), message: "nested deeper than \(limit) levels")
        ) {
            _ = try PropertyListValue(parsing: text)
        }
        let fine = String(repeating: "<array>", count: limit) + String(repeating: "</array>", count: limit)
        #expect(throws: Never.self) { _ = try PropertyListValue(parsing: fine) }
    }

    private func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
    }
}

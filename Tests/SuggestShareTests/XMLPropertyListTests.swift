import SuggestCore
import Testing

@testable import SuggestShare

@Suite("XML property lists")
struct XMLPropertyListTests {
    @Test("every element type of the DTD")
    func allTypes() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <!-- a comment before the root -->
            <dict>
            \t<key>string</key><string>a &lt;b&gt; &amp; &quot;c&quot; &apos;d&apos; &#233;&#x1F600;</string>
            \t<key>empty</key><string/>
            \t<key>cdata</key><string><![CDATA[<raw> & stuff]]></string>
            \t<key>integer</key><integer>-42</integer>
            \t<key>hex</key><integer>0x1F</integer>
            \t<key>big</key><integer>9223372036854775807</integer>
            \t<key>real</key><real>2.5</real>
            \t<key>exponent</key><real>-1e3</real>
            \t<key>yes</key><true/>
            \t<key>no</key><false></false>
            \t<key>date</key><date>2001-01-01T00:00:00Z</date>
            \t<key>data</key><data>
            \t\tSGVs
            \t\tbG8=
            \t</data>
            \t<key>array</key><array><integer>1</integer><!-- inside --><string>two</string></array>
            \t<key>emptyArray</key><array/>
            \t<key>emptyDict</key><dict/>
            </dict>
            </plist>
            """
        let value = try PropertyListValue(parsing: text)
        #expect(value["string"] == .string("a <b> & \"c\" 'd' é😀"))
        #expect(value["empty"] == .string(""))
        #expect(value["cdata"] == .string("<raw> & stuff"))
        #expect(value["integer"] == .integer(-42))
        #expect(value["hex"] == .integer(31))
        #expect(value["big"] == .integer(Int.max))
        #expect(value["real"] == .real(2.5))
        #expect(value["exponent"] == .real(-1000))
        #expect(value["yes"] == .bool(true))
        #expect(value["no"] == .bool(false))
        #expect(value["date"] == .date(Timestamp(seconds: 978_307_200)))
        #expect(value["data"] == .data(Array("Hello".utf8)))
        #expect(value["array"] == .array([.integer(1), .string("two")]))
        #expect(value["emptyArray"] == .array([]))
        #expect(value["emptyDict"] == .dictionary([:]))
    }

    @Test("a byte-order mark, no <plist> wrapper, and a repeated key that keeps its last value")
    func lenientForms() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let value = try PropertyListValue(
            parsing: bom + Array("<dict><key>a</key><integer>1</integer><key>a</key><integer>2</integer></dict>".utf8))
        #expect(value == .dictionary(["a": .integer(2)]))
    }

    @Test("the sample Info.plists parse, with entities in their rules resolved")
    func samples() throws {
        let signal = try PropertyListValue(parsing: Fixtures.bytes("signal.plist"))
        let rule = signal["NSExtension"]?["NSExtensionAttributes"]?["NSExtensionActivationRule"]?.stringValue
        #expect(rule?.contains(").@count >= 1") == true)
        let chromium = try PropertyListValue(parsing: Fixtures.bytes("chromium-open-extension.plist"))
        let chromiumRule = chromium["NSExtension"]?["NSExtensionAttributes"]?["NSExtensionActivationRule"]?.stringValue
        #expect(chromiumRule?.contains("UTI-CONFORMS-TO \"public.url\"") == true)
    }

    @Test(
        "integers and reals are read strictly",
        arguments: [
            ("12", 12), ("+7", 7), ("-9223372036854775808", Int.min), (" 3 ", 3), ("0X10", 16),
        ])
    func integers(text: String, expected: Int) {
        #expect(XMLPropertyListParser.integer(text) == expected)
    }

    @Test("integers that are not", arguments: ["", "1.5", "9223372036854775808", "12a", "0x", "--1", "١٢"])
    func badIntegers(text: String) {
        #expect(XMLPropertyListParser.integer(text) == nil)
    }

    @Test("reals, including the special values Core Foundation writes")
    func reals() {
        #expect(XMLPropertyListParser.real("1.25") == 1.25)
        #expect(XMLPropertyListParser.real("+infinity") == .infinity)
        #expect(XMLPropertyListParser.real("-inf") == -.infinity)
        #expect(XMLPropertyListParser.real("nan")?.isNaN == true)
        #expect(XMLPropertyListParser.real("0x1p3") == nil)
        #expect(XMLPropertyListParser.real("abc") == nil)
    }
}

import Testing

@testable import SuggestShare

/// Each real-world rule of share-flow.md §2, loaded from its sample Info.plist, with requests it must accept
/// and requests it must refuse.
@Suite("Real-world activation rules")
struct RealWorldRuleTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var file: String
        /// One array per extension item; attachments as `UTI=VALUE`, several types joined by `+`.
        var items: [[String]]
        var activates: Bool
        var testDescription: String {
            let shared =
                items.isEmpty ? "nothing" : items.map { "[" + $0.joined(separator: ", ") + "]" }.joined(separator: " ")
            return "\(file): \(shared) → \(activates ? "shown" : "hidden")"
        }
    }

    static let url = "public.url=https://example.com"
    static let jpeg = "public.jpeg=photo.jpg"
    static let text = "public.plain-text=hello"
    static let pdf = "com.adobe.pdf=report.pdf"
    static let movie = "com.apple.quicktime-movie=clip.mov"
    static let livePhoto = "com.apple.live-photo=IMG_1.pvt"

    static let cases: [Case] = [
        // Signal: exactly one item with at least one data or URL attachment.
        Case(file: "signal.plist", items: [[jpeg]], activates: true),
        Case(file: "signal.plist", items: [[url]], activates: true),
        Case(file: "signal.plist", items: [[text, jpeg, pdf]], activates: true),
        Case(file: "signal.plist", items: [[livePhoto, jpeg]], activates: true),
        Case(file: "signal.plist", items: [], activates: false),
        Case(file: "signal.plist", items: [[]], activates: false),
        Case(file: "signal.plist", items: [[jpeg], [jpeg]], activates: false),
        Case(file: "signal.plist", items: [[livePhoto]], activates: false),
        // Telegram: at least one item whose attachments all conform to one of nine types.
        Case(file: "telegram.plist", items: [[url]], activates: true),
        Case(file: "telegram.plist", items: [[jpeg, movie, text]], activates: true),
        Case(file: "telegram.plist", items: [["public.vcard=card.vcf"]], activates: true),
        Case(file: "telegram.plist", items: [["com.apple.pkpass=ticket.pkpass"]], activates: true),
        Case(file: "telegram.plist", items: [[livePhoto], [url]], activates: true),
        Case(file: "telegram.plist", items: [], activates: false),
        Case(file: "telegram.plist", items: [[livePhoto]], activates: false),
        Case(file: "telegram.plist", items: [[jpeg, livePhoto]], activates: false),
        // An item with no attachments satisfies "all attachments conform" (0 == 0): the real rule shows for it.
        Case(file: "telegram.plist", items: [[]], activates: true),
        // The binary form of the same Info.plist decides the same way.
        Case(file: "telegram.binary.plist", items: [[url]], activates: true),
        Case(file: "telegram.binary.plist", items: [], activates: false),
        // Chromium: exactly one item with exactly one web (not file) URL.
        Case(file: "chromium-open-extension.plist", items: [[url]], activates: true),
        Case(
            file: "chromium-open-extension.plist", items: [["public.url+public.plain-text=https://a.example"]],
            activates: true),
        Case(file: "chromium-open-extension.plist", items: [[url, jpeg]], activates: true),
        Case(file: "chromium-open-extension.plist", items: [["public.file-url=file:///tmp/a.pdf"]], activates: false),
        Case(
            file: "chromium-open-extension.plist", items: [["public.url+public.file-url=file:///tmp/a"]],
            activates: false),
        Case(file: "chromium-open-extension.plist", items: [[url, "public.url=https://b.example"]], activates: false),
        Case(file: "chromium-open-extension.plist", items: [[url], [url]], activates: false),
        Case(file: "chromium-open-extension.plist", items: [[jpeg]], activates: false),
        // Olvid: one item with data/URL/pass attachments, or two such items of which exactly one holds a public.url.
        Case(file: "olvid.plist", items: [[jpeg]], activates: true),
        Case(file: "olvid.plist", items: [[url], [jpeg]], activates: true),
        Case(file: "olvid.plist", items: [["com.apple.pkpass=a.pkpass"]], activates: true),
        Case(file: "olvid.plist", items: [[jpeg], [jpeg]], activates: false),
        Case(file: "olvid.plist", items: [[url], [url]], activates: false),
        Case(file: "olvid.plist", items: [["public.file-url=/tmp/a"], [jpeg]], activates: false),
        Case(file: "olvid.plist", items: [[url], [jpeg], [pdf]], activates: false),
        Case(file: "olvid.plist", items: [], activates: false),
        // Firefox Focus (version 2): text, one web page, one web URL.
        Case(file: "firefox-focus.plist", items: [[url]], activates: true),
        Case(file: "firefox-focus.plist", items: [[text]], activates: true),
        Case(file: "firefox-focus.plist", items: [["com.apple.active-webpage=https://example.com"]], activates: true),
        Case(file: "firefox-focus.plist", items: [[url, jpeg]], activates: true),
        Case(file: "firefox-focus.plist", items: [[jpeg]], activates: false),
        Case(file: "firefox-focus.plist", items: [[url, "public.url=https://b.example"]], activates: false),
        Case(file: "firefox-focus.plist", items: [["public.url=mailto:someone@example.com"]], activates: false),
        Case(file: "firefox-focus.plist", items: [], activates: false),
        // Element (version 2): up to five images, one movie, text, one web URL.
        Case(file: "element.plist", items: [Array(repeating: jpeg, count: 5)], activates: true),
        Case(file: "element.plist", items: [[movie]], activates: true),
        Case(file: "element.plist", items: [[jpeg, text]], activates: true),
        Case(file: "element.plist", items: [[pdf, jpeg]], activates: true),
        Case(file: "element.plist", items: [Array(repeating: jpeg, count: 6)], activates: false),
        Case(file: "element.plist", items: [[movie, movie]], activates: false),
        Case(file: "element.plist", items: [[pdf]], activates: false),
        // WordPress (version 2): text, one web URL, one image.
        Case(file: "wordpress.plist", items: [[jpeg]], activates: true),
        Case(file: "wordpress.plist", items: [[url, text]], activates: true),
        Case(file: "wordpress.plist", items: [[jpeg, jpeg]], activates: false),
        Case(file: "wordpress.plist", items: [[pdf]], activates: false),
        Case(file: "wordpress.plist", items: [[movie]], activates: false),
        // Apple's example: exactly one item whose attachments are all PDFs.
        Case(file: "apple-pdf-example.plist", items: [[pdf]], activates: true),
        Case(file: "apple-pdf-example.plist", items: [["public.file-url+com.adobe.pdf=/tmp/a.pdf"]], activates: true),
        Case(file: "apple-pdf-example.plist", items: [[pdf, pdf]], activates: true),
        Case(file: "apple-pdf-example.plist", items: [[jpeg]], activates: false),
        Case(file: "apple-pdf-example.plist", items: [[pdf, jpeg]], activates: false),
        Case(file: "apple-pdf-example.plist", items: [[pdf], [pdf]], activates: false),
    ]

    @Test("each rule accepts and refuses what it should", arguments: cases)
    func decide(_ testCase: Case) throws {
        let target = try ShareTarget.load(infoPlistAt: Fixtures.extensionPath(testCase.file))
        let decision = target.evaluate(Fixtures.request(testCase.items))
        #expect(decision.activated == testCase.activates, "\(decision)")
        #expect((decision.reason == nil) == testCase.activates)
    }

    func reason(_ file: String, _ items: [[String]]) throws -> String? {
        try ShareTarget.load(infoPlistAt: Fixtures.extensionPath(file)).evaluate(Fixtures.request(items)).reason
    }

    @Test("refusals say which part of the rule refused, in words")
    func reasons() throws {
        #expect(
            try reason("apple-pdf-example.plist", [[Self.jpeg]])
                == "the rule needs exactly 1 extension item whose attachments all conform to com.adobe.pdf; "
                + "got 1 extension item with 1 attachment of public.jpeg")
        #expect(
            try reason("signal.plist", [[Self.jpeg], [Self.url]])
                == "the rule needs exactly 1 extension item with at least 1 attachment that conforms to public.data or "
                + "public.url; got 2 extension items: 1 attachment of public.jpeg; 1 attachment of public.url")
        #expect(
            try reason("telegram.plist", [])
                == "the rule needs at least 1 extension item whose attachments all conform to public.file-url, "
                + "public.movie, public.image, public.url, public.text, public.audio, public.data, public.vcard or "
                + "com.apple.pkpass; got no extension items")
        #expect(
            try reason("chromium-open-extension.plist", [["public.file-url=/tmp/a.pdf"]])
                == "the rule needs exactly 1 extension item with exactly 1 attachment that conforms to public.url and "
                + "does not conform to public.file-url; got 1 extension item with 1 attachment of public.file-url")
        #expect(
            try reason("olvid.plist", [[Self.jpeg], [Self.jpeg]])
                == "the rule needs either exactly 1 extension item with at least 1 attachment that conforms to public.data, "
                + "public.url or com.apple.pkpass, or exactly 2 extension items with at least 1 attachment that conforms "
                + "to public.data, public.url or com.apple.pkpass and exactly 1 extension item with at least 1 "
                + "attachment that is of type public.url; got 2 extension items: 1 attachment of public.jpeg; "
                + "1 attachment of public.jpeg")
        #expect(
            try reason("element.plist", [Array(repeating: Self.jpeg, count: 6)])
                == "6 images exceed NSExtensionActivationSupportsImageWithMaxCount = 5")
        #expect(
            try reason("wordpress.plist", [[Self.pdf]])
                == "none of the shared attachments (com.adobe.pdf) is supported; the rule accepts text, at most 1 web URL "
                + "and at most 1 image")
    }

    @Test("the Telegram-style rule: a URL activates it, nothing does not")
    func telegramStyle() throws {
        let target = try ShareTarget.load(infoPlistAt: Fixtures.extensionPath("telegram.plist"))
        let shown = target.evaluate(try ShareRequest(attachmentArguments: ["public.url=https://telegram.org"]))
        #expect(shown == .activated)
        let nothing = target.evaluate(try ShareRequest(attachmentArguments: []))
        #expect(!nothing.activated)
    }

    @Test("the PDF-only rule refuses an image")
    func pdfOnly() throws {
        let target = try ShareTarget.load(infoPlistAt: Fixtures.extensionPath("apple-pdf-example.plist"))
        let decision = target.evaluate(try ShareRequest(attachmentArguments: ["public.jpeg=photo.jpg"]))
        #expect(!decision.activated)
        #expect(decision.reason?.contains("com.adobe.pdf") == true)
        #expect(target.evaluate(try ShareRequest(attachmentArguments: ["com.adobe.pdf=a.pdf"])).activated)
    }

    @Test(
        "which samples take conversation suggestions (IntentsSupported has INSendMessageIntent)",
        arguments: [
            ("signal.plist", true), ("telegram.plist", true), ("telegram.binary.plist", true), ("olvid.plist", true),
            ("chromium-open-extension.plist", false), ("firefox-focus.plist", false), ("element.plist", false),
            ("wordpress.plist", false), ("apple-pdf-example.plist", false),
        ])
    func intents(file: String, supported: Bool) throws {
        #expect(try ShareTarget.load(infoPlistAt: Fixtures.extensionPath(file)).supportsSendMessageIntent == supported)
    }

    @Test("the binary sample loads to the same rule as its XML source")
    func binaryRule() throws {
        let xml = try ShareTarget.load(infoPlistAt: Fixtures.extensionPath("telegram.plist"))
        let binary = try ShareTarget.load(infoPlistAt: Fixtures.extensionPath("telegram.binary.plist"))
        #expect(xml.activationRule == binary.activationRule)
        #expect(xml.displayName == "Telegram")
    }
}

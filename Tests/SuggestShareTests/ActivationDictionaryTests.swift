import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestShare

@Suite("Dictionary-form activation rules")
struct ActivationDictionaryTests {
    func rule(_ members: [String: PropertyListValue]) throws -> ActivationDictionary {
        try ActivationDictionary(propertyList: members)
    }

    let imageAndText = Fixtures.request([["public.jpeg=photo.jpg", "public.plain-text=caption"]])

    @Test("Apple's example: image and text offered to a text-only extension — hidden under v1, shown under v2")
    func versionOneVersusTwo() throws {
        let versionOne = try rule(["NSExtensionActivationSupportsText": .bool(true)])
        let hidden = versionOne.decision(for: imageAndText)
        #expect(!hidden.activated)
        #expect(
            hidden.reason == "public.jpeg attachments are not supported: no key of the rule accepts them "
                + "(NSExtensionActivationSupportsImageWithMaxCount is absent), and "
                + "without NSExtensionActivationDictionaryVersion = 2 the rule must support every shared attachment")
        let explicitOne = try rule([
            "NSExtensionActivationSupportsText": .bool(true), "NSExtensionActivationDictionaryVersion": .integer(1),
        ])
        #expect(
            explicitOne.decision(for: imageAndText).reason?.contains("with NSExtensionActivationDictionaryVersion = 1")
                == true)
        let versionTwo = try rule([
            "NSExtensionActivationSupportsText": .bool(true), "NSExtensionActivationDictionaryVersion": .integer(2),
        ])
        #expect(versionTwo.decision(for: imageAndText) == .activated)
    }

    @Test("strict matching with version 2 forces version 1 behaviour")
    func strictMatching() throws {
        let strict = try rule([
            "NSExtensionActivationSupportsText": .bool(true), "NSExtensionActivationDictionaryVersion": .integer(2),
            "NSExtensionActivationUsesStrictMatching": .bool(true),
        ])
        #expect(strict.matchesStrictly)
        let decision = strict.decision(for: imageAndText)
        #expect(!decision.activated)
        #expect(decision.reason?.contains("with NSExtensionActivationUsesStrictMatching = YES") == true)
        let notStrict = try rule([
            "NSExtensionActivationSupportsText": .bool(true), "NSExtensionActivationDictionaryVersion": .integer(2),
            "NSExtensionActivationUsesStrictMatching": .bool(false),
        ])
        #expect(!notStrict.matchesStrictly)
        #expect(notStrict.decision(for: imageAndText).activated)
    }

    @Test("a key of 0 refuses its kind under either version")
    func zeroRefuses() throws {
        for version in [1, 2] {
            let dictionary = try rule([
                "NSExtensionActivationDictionaryVersion": .integer(version),
                "NSExtensionActivationSupportsWebURLWithMaxCount": .integer(1),
                "NSExtensionActivationSupportsImageWithMaxCount": .integer(0),
            ])
            let decision = dictionary.decision(
                for: Fixtures.request([["public.url=https://a.example", "public.jpeg=a.jpg"]]))
            #expect(
                decision.reason
                    == "public.jpeg attachments are not supported (NSExtensionActivationSupportsImageWithMaxCount is 0)"
            )
        }
        let noText = try rule([
            "NSExtensionActivationSupportsText": .bool(false),
            "NSExtensionActivationSupportsImageWithMaxCount": .integer(1),
        ])
        #expect(
            noText.decision(for: Fixtures.request([["public.plain-text=hi"]])).reason
                == "public.plain-text attachments are not supported (NSExtensionActivationSupportsText is NO)")
    }

    /// The JSON form takes what the property-list forms take: a count past 2^53 is not refused as "a real number"
    /// (2^63 - 1 reads as 2^63, which bounds nothing), a Boolean given as any non-zero integer is YES, and a null
    /// member is told to be given or left out, not to give a predicate string.
    @Test("the JSON form's counts, flags and nulls")
    func jsonForm() throws {
        func decision(_ json: String) throws -> ActivationDecision {
            try ActivationRule(json: JSONParser.parse(json)).decision(for: Fixtures.request([["public.jpeg=a"]]))
        }
        for count in ["1", "9000000000000000", "9223372036854775807", "1e300"] {
            let rule = #"{"NSExtensionActivationSupportsImageWithMaxCount": \#(count)}"#
            #expect(try decision(rule).activated, "\(count)")
        }
        #expect(try decision(#"{"NSExtensionActivationSupportsImageWithMaxCount": 0}"#).activated == false)
        let text = Fixtures.request([["public.plain-text=hi"]])
        let negative = try ActivationRule(json: JSONParser.parse(#"{"NSExtensionActivationSupportsText": -1}"#))
        #expect(negative.decision(for: text).activated)
        let null = #"{"NSExtensionActivationUsesStrictMatching": null, "NSExtensionActivationSupportsText": true}"#
        let nullValue = try JSONParser.parse(null)
        let refusal = #expect(throws: InputError.self) { try ActivationRule(json: nullValue) }
        #expect(refusal?.message == "is null; give a value, or leave the key out")
        let minimum = try JSONParser.parse(#"{"NSExtensionActivationSupportsAttachmentsWithMinCount": -1}"#)
        let below = #expect(throws: InputError.self) { try ActivationRule(json: minimum) }
        #expect(below.map { !$0.message.contains("0 means") && $0.message.contains("non-negative") } == true)
    }

    @Test("maximum counts, per kind and in total, and the minimum count")
    func counts() throws {
        let images = try rule(["NSExtensionActivationSupportsImageWithMaxCount": .integer(1)])
        #expect(
            images.decision(for: Fixtures.request([["public.jpeg=a", "public.png=b", "public.heic=c"]])).reason
                == "3 images exceed NSExtensionActivationSupportsImageWithMaxCount = 1")
        #expect(images.decision(for: Fixtures.request([["public.jpeg=a"]])) == .activated)
        // Counts add up across extension items.
        #expect(!images.decision(for: Fixtures.request([["public.jpeg=a"], ["public.png=b"]])).activated)

        let total = try rule([
            "NSExtensionActivationSupportsImageWithMaxCount": .integer(10),
            "NSExtensionActivationSupportsAttachmentsWithMaxCount": .integer(3),
        ])
        #expect(
            total.decision(for: Fixtures.request([Array(repeating: "public.png=x", count: 4)])).reason
                == "4 attachments exceed NSExtensionActivationSupportsAttachmentsWithMaxCount = 3")

        let minimum = try rule([
            "NSExtensionActivationSupportsImageWithMaxCount": .integer(10),
            "NSExtensionActivationSupportsAttachmentsWithMinCount": .integer(2),
        ])
        #expect(
            minimum.decision(for: Fixtures.request([["public.png=x"]])).reason
                == "1 attachment is fewer than NSExtensionActivationSupportsAttachmentsWithMinCount = 2")
        #expect(minimum.decision(for: Fixtures.request([["public.png=x", "public.png=y"]])).activated)
    }

    @Test(
        "how types map to keys (a documented guess)",
        arguments: [
            ("public.jpeg=a.jpg", ActivationDictionary.Key.imageMaximumCount),
            ("public.heic=a.heic", .imageMaximumCount),
            ("com.apple.quicktime-movie=a.mov", .movieMaximumCount),
            ("public.mpeg-4=a.mp4", .movieMaximumCount),
            ("public.url=https://a.example", .webURLMaximumCount),
            ("public.url=HTTP://A.EXAMPLE", .webURLMaximumCount),
            ("com.apple.active-webpage=https://a.example", .webPageMaximumCount),
            ("public.file-url=/tmp/a", .fileMaximumCount),
            ("com.adobe.pdf=a.pdf", .fileMaximumCount),
            ("public.zip-archive=a.zip", .fileMaximumCount),
            ("public.mp3=a.mp3", .fileMaximumCount),
            ("public.plain-text=hi", .supportsText),
            ("public.html=<p>", .supportsText),
        ])
    func mapping(attachment: String, key: ActivationDictionary.Key) throws {
        let value: PropertyListValue = key == .supportsText ? .bool(true) : .integer(5)
        let only = try rule([key.rawValue: value])
        #expect(only.decision(for: Fixtures.request([[attachment]])).activated, "\(attachment) under \(key.rawValue)")
        for other in ActivationDictionary.Key.allCases
        where other != key && other != .fileMaximumCount && other != .attachmentsMaximumCount
            && other.rawValue.contains("Supports")
            && other != .attachmentsMinimumCount
        {
            let otherValue: PropertyListValue = other == .supportsText ? .bool(true) : .integer(5)
            let wrong = try rule([other.rawValue: otherValue])
            #expect(
                !wrong.decision(for: Fixtures.request([[attachment]])).activated,
                "\(attachment) under \(other.rawValue)")
        }
    }

    @Test("without strict matching, images and movies fall back to the File key; an explicit 0 on their own key wins")
    func fileFallback() throws {
        let files = try rule([
            "NSExtensionActivationSupportsFileWithMaxCount": .integer(3),
            "NSExtensionActivationDictionaryVersion": .integer(2),
        ])
        #expect(files.decision(for: Fixtures.request([["public.jpeg=a", "com.adobe.pdf=b"]])).activated)
        let filesButNoImages = try rule([
            "NSExtensionActivationSupportsFileWithMaxCount": .integer(3),
            "NSExtensionActivationSupportsImageWithMaxCount": .integer(0),
        ])
        #expect(!filesButNoImages.decision(for: Fixtures.request([["public.jpeg=a"]])).activated)
        let imagesButNoFiles = try rule([
            "NSExtensionActivationSupportsFileWithMaxCount": .integer(0),
            "NSExtensionActivationSupportsImageWithMaxCount": .integer(3),
        ])
        #expect(imagesButNoFiles.decision(for: Fixtures.request([["public.jpeg=a"]])).activated)
        #expect(!imagesButNoFiles.decision(for: Fixtures.request([["com.adobe.pdf=a"]])).activated)
    }

    /// Under strict matching iOS compiles a key that is absent into a REJECT template, as it does a 0 (reference
    /// §1): an image whose own key is missing is not taken by the File or Attachments key (Bitwarden's share
    /// extension, File and Text keys only, is not offered for a photo).
    @Test("under strict matching, a kind whose key is absent is refused, whatever the File or Attachments key says")
    func strictMatchingRefusesAKindWithoutItsKey() throws {
        for other in ["NSExtensionActivationSupportsFileWithMaxCount", "NSExtensionActivationSupportsAttachmentsWithMaxCount"] {
            let strict = try rule([other: .integer(3)])
            let image = strict.decision(for: Fixtures.request([["public.jpeg=a"]]))
            #expect(!image.activated, "\(other)")
            #expect(
                image.reason == "public.jpeg attachments are not supported: no key of the rule accepts them "
                    + "(NSExtensionActivationSupportsImageWithMaxCount is absent), and without "
                    + "NSExtensionActivationDictionaryVersion = 2 the rule must support every shared attachment")
            #expect(!strict.decision(for: Fixtures.request([["public.mpeg-4=a"]])).activated, "\(other)")
            // A second type that the rule takes still carries the attachment.
            #expect(strict.decision(for: Fixtures.request([["public.jpeg+public.file-url=file:///a.jpg"]])).activated == (other.contains("File")))
            let fuzzy = try rule([other: .integer(3), "NSExtensionActivationDictionaryVersion": .integer(2)])
            #expect(fuzzy.decision(for: Fixtures.request([["public.jpeg=a"]])).activated, "\(other)")
        }
        // A type no kind covers is still the Attachments key's to take.
        let any = try rule(["NSExtensionActivationSupportsAttachmentsWithMaxCount": .integer(2)])
        #expect(any.decision(for: Fixtures.request([["com.example.custom=a"]])).activated)
    }

    @Test("an attachment is supported when any of its types is")
    func multipleTypes() throws {
        let urls = try rule(["NSExtensionActivationSupportsWebURLWithMaxCount": .integer(1)])
        #expect(urls.decision(for: Fixtures.request([["public.plain-text+public.url=https://a.example"]])).activated)
        #expect(urls.decision(for: Fixtures.request([["public.url=mailto:a@example.com"]])).reason
            == "public.url attachments that are not http(s) URLs (mailto:a@example.com) are not supported: no key of "
            + "the rule accepts them, and without NSExtensionActivationDictionaryVersion = 2 the rule must support "
            + "every shared attachment")
        #expect(!urls.decision(for: Fixtures.request([["public.url=example.com"]])).activated)
    }

    @Test("AttachmentsWithMaxCount accepts attachments of any type")
    func anyAttachment() throws {
        let any = try rule(["NSExtensionActivationSupportsAttachmentsWithMaxCount": .integer(2)])
        #expect(any.decision(for: Fixtures.request([["com.apple.live-photo=a", "com.example.custom=b"]])).activated)
        let none = try rule([
            "NSExtensionActivationSupportsAttachmentsWithMaxCount": .integer(0),
            "NSExtensionActivationDictionaryVersion": .integer(2),
            "NSExtensionActivationSupportsText": .bool(true),
        ])
        #expect(
            none.decision(for: Fixtures.request([["public.plain-text=a", "com.apple.live-photo=b"]])).reason
                == "com.apple.live-photo attachments are not supported (NSExtensionActivationSupportsAttachmentsWithMaxCount is 0)"
        )
    }

    @Test("nothing shared never activates a dictionary rule; an empty dictionary supports nothing")
    func emptyCases() throws {
        let text = try rule([
            "NSExtensionActivationSupportsText": .bool(true), "NSExtensionActivationDictionaryVersion": .integer(2),
        ])
        #expect(
            text.decision(for: .empty).reason == "nothing is shared: a dictionary rule needs at least one attachment")
        let empty = try rule(["NSExtensionActivationDictionaryVersion": .integer(2)])
        #expect(
            empty.decision(for: Fixtures.request([["public.jpeg=a"]])).reason
                == "none of the shared attachments (public.jpeg) is supported; the rule accepts nothing (no key is nonzero)"
        )
    }

    @Test("SupportsText takes a Boolean or, as iOS reads it, an integer")
    func textAsInteger() throws {
        #expect(try rule(["NSExtensionActivationSupportsText": .integer(1)]).supportsText == true)
        #expect(try rule(["NSExtensionActivationSupportsText": .integer(0)]).supportsText == false)
    }

    @Test(
        "undocumented keys are errors that name the key and suggest the documented one",
        arguments: [
            ("NSExtensionActivationSupportsImage", "NSExtensionActivationSupportsImageWithMaxCount"),
            ("NSExtensionActivationSupportsTextWithMinCount", "NSExtensionActivationSupportsText"),
            ("nsextensionactivationsupportstext", "NSExtensionActivationSupportsText"),
            ("NSExtensionActivationSupportsWebURL", "NSExtensionActivationSupportsWebURLWithMaxCount"),
            ("SupportsImage", nil),
        ] as [(String, String?)])
    func unknownKeys(key: String, suggestion: String?) {
        #expect(throws: ActivationRuleError.unknownKey(key, suggestion: suggestion)) {
            _ = try rule([key: .integer(1), "NSExtensionActivationSupportsText": .bool(true)])
        }
        let message = ActivationRuleError.unknownKey(key, suggestion: suggestion).description
        #expect(message.contains("has the key \(key), which Apple does not document"))
        if let suggestion { #expect(message.contains("did you mean \(suggestion)?")) }
    }

    /// iOS reads a count with `intValue`: apps ship `<true/>` for 1 (AlefAlfa/Kokoro-TTS-App's WebURL key), and a
    /// whole `<real>` reads as its integer.
    @Test("a count given as a Boolean or a whole real is read as iOS reads it")
    func countsReadAsIntValue() throws {
        let yes = try rule(["NSExtensionActivationSupportsWebURLWithMaxCount": .bool(true)])
        #expect(yes.webURLMaximumCount == 1)
        #expect(yes.decision(for: Fixtures.request([["public.url=https://a.example"]])).activated)
        #expect(try rule(["NSExtensionActivationSupportsImageWithMaxCount": .bool(false)]).imageMaximumCount == 0)
        #expect(try rule(["NSExtensionActivationSupportsImageWithMaxCount": .real(2)]).imageMaximumCount == 2)
    }

    @Test(
        "values of the wrong type or range",
        arguments: [
            (
                "NSExtensionActivationDictionaryVersion", PropertyListValue.integer(3),
                "is 3; it must be the integer 1 or 2"
            ),
            (
                "NSExtensionActivationDictionaryVersion", .string("2"),
                "is the string \"2\"; it must be the integer 1 or 2"
            ),
            (
                "NSExtensionActivationSupportsImageWithMaxCount", .integer(-1),
                "is -1; it must be a non-negative <integer>"
            ),
            (
                "NSExtensionActivationSupportsImageWithMaxCount", .real(1.5),
                "is a real number; it must be a non-negative <integer>"
            ),
            (
                "NSExtensionActivationSupportsImageWithMaxCount", .string("1"),
                "is the string \"1\"; it must be a non-negative <integer>"
            ),
            ("NSExtensionActivationSupportsText", .string("YES"), "is the string \"YES\"; it must be a Boolean"),
            ("NSExtensionActivationUsesStrictMatching", .real(1), "is a real number; it must be a Boolean"),
        ])
    func invalidValues(key: String, value: PropertyListValue, problem: String) {
        expectError {
            _ = try rule([key: value])
        } where: { error in
            guard case .invalidValue(let named, let message) = error as? ActivationRuleError else { return false }
            return named == key && message.hasPrefix(problem)
        }
    }

    /// The kinds of a decision come from the types conforming to each kind's type, found once (a walk up the tree
    /// for each type of each attachment let a target's declarations make a share run for hours): the same kinds as
    /// a walk up from each type, for public types, declared chains, declared types with several parents, unknown
    /// types and case.
    @Test func kindsFoundOnceAreTheKindsOfAWalk() {
        var declarations: [(type: String, parents: [String])] = [("com.example.doc", ["public.text", "public.data"])]
        for index in 0..<200 {
            declarations.append(("com.example.c\(index)", [index == 0 ? "public.jpeg" : "com.example.c\(index - 1)"]))
        }
        declarations.append(("com.example.both", ["com.example.c199", "public.file-url"]))
        let types = UniformTypeTree.standard.declaring(declarations)
        let kinds = ActivationDictionary.KindTypes(types)
        let ancestors: [(String, [ActivationDictionary.AssetKind])] = [
            ("com.apple.active-webpage", [.webPage]), ("public.file-url", [.file]), ("public.url", [.webURL]),
            ("public.image", [.image, .file]), ("public.movie", [.movie, .file]), ("public.text", [.text]),
            ("public.data", [.file]),
        ]
        let attachment = Attachment(typeIdentifiers: ["public.url"], value: .url("https://example.com"))
        let names = ["public.jpeg", "PUBLIC.JPEG", "public.mpeg-4", "public.utf8-plain-text", "com.adobe.pdf",
            "public.url", "public.file-url", "com.apple.active-webpage", "com.example.doc", "com.example.c0",
            "com.example.c199", "com.example.both", "com.example.unknown", "public.item", "public.data"]
        for name in names {
            let walked = ancestors.first { types.conforms(name, to: $0.0) }?.1 ?? []
            #expect(kinds.kinds(of: name, in: attachment) == walked, "\(name)")
        }
    }
}

import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestShare

@Suite("Share requests")
struct ShareRequestTests {
    @Test("UTI=VALUE strings make one extension item; the split is at the first '='")
    func arguments() throws {
        let request = try ShareRequest(attachmentArguments: [
            "public.url=https://example.com/?a=b&c=d", "public.jpeg=photo.jpg", "public.plain-text=x = y",
            "public.file-url=file:///tmp/a.pdf", "com.example.thing=https://example.com/x", "public.plain-text=",
        ])
        #expect(request.items.count == 1)
        #expect(
            request.attachments.map(\.value) == [
                .url("https://example.com/?a=b&c=d"), .file(path: "photo.jpg"), .text("x = y"),
                .file(path: "file:///tmp/a.pdf"), .url("https://example.com/x"), .text(""),
            ])
        #expect(
            request.attachments.map(\.typeIdentifiers) == [
                ["public.url"], ["public.jpeg"], ["public.plain-text"], ["public.file-url"], ["com.example.thing"],
                ["public.plain-text"],
            ])
    }

    @Test("no strings share nothing; content text alone makes an item without attachments")
    func emptyArguments() throws {
        #expect(try ShareRequest(attachmentArguments: []) == .empty)
        #expect(
            try ShareRequest(attachmentArguments: [], contentText: "hi").items == [ExtensionItem(contentText: "hi")])
    }

    @Test("a web URL of an item that supports JavaScript is a web page too, as Foundation makes it (share-flow.md §1)")
    func safarisWebPage() throws {
        func attachment(_ userInfo: String, _ url: String) throws -> SuggestShare.Attachment? {
            try ShareRequest(
                jsonText: #"{"items": [{"userInfo": \#(userInfo), "attachments": [{"type": "public.url", "url": "\#(url)"}]}]}"#
            ).items.first?.attachments.first
        }
        #expect(try attachment(#"{"supportsJavaScript": true}"#, "https://example.com")?.typeIdentifiers == ["public.url", "com.apple.active-webpage"])
        #expect(try attachment(#"{"supportsJavaScript": true}"#, "HTTP://example.com")?.typeIdentifiers == ["public.url", "com.apple.active-webpage"])
        // The flag as Foundation reads an NSNumber's boolValue: a nonzero number is YES.
        #expect(try attachment(#"{"supportsJavaScript": 1}"#, "https://example.com")?.typeIdentifiers == ["public.url", "com.apple.active-webpage"])
        #expect(try attachment(#"{"supportsJavaScript": 0}"#, "https://example.com")?.typeIdentifiers == ["public.url"])
        // Not a web page: no JavaScript, or not http(s).
        #expect(try attachment("{}", "https://example.com")?.typeIdentifiers == ["public.url"])
        #expect(try attachment(#"{"supportsJavaScript": false}"#, "https://example.com")?.typeIdentifiers == ["public.url"])
        #expect(try attachment(#"{"supportsJavaScript": true}"#, "mailto:a@example.com")?.typeIdentifiers == ["public.url"])
        // A rule of the WebPage key alone takes what Safari shares.
        let rule = try ActivationDictionary(propertyList: ["NSExtensionActivationSupportsWebPageWithMaxCount": .integer(1)])
        let page = try ShareRequest(
            jsonText: #"{"items": [{"userInfo": {"supportsJavaScript": true}, "attachments": [{"type": "public.url", "url": "https://example.com"}]}]}"#)
        #expect(rule.decision(for: page).activated)
    }

    @Test(
        "bad strings are InputErrors on --attachment",
        arguments: [
            ("=https://example.com", "has an empty type identifier before '='"),
            ("public.url", "has no '='"),
            ("public url=x", "is not a uniform type identifier"),
            ("public.url;x=y", "contains ';'"),
        ])
    func badArguments(argument: String, fragment: String) {
        expectError {
            _ = try ShareRequest(attachmentArguments: ["public.jpeg=a.jpg", argument])
        } where: { error in
            guard let error = error as? InputError else { return false }
            return error.field == "--attachment" && error.message.contains(fragment)
        }
    }

    @Test("contentTypes lists every registered type once, in order, ignoring case")
    func contentTypes() {
        let request = Fixtures.request([
            ["public.jpeg=a", "public.file-url+com.adobe.pdf=b"], ["PUBLIC.JPEG=c", "public.url=https://x.example"],
        ])
        #expect(request.contentTypes == ["public.jpeg", "public.file-url", "com.adobe.pdf", "public.url"])
        #expect(ShareRequest.empty.contentTypes == [])
    }

    @Test("the documented JSON shape")
    func json() throws {
        let request = try ShareRequest(
            jsonText: """
                {"items": [
                   {"contentText": "Look at this",
                    "attachments": [
                      {"typeIdentifiers": ["public.url", "public.plain-text"], "value": "https://example.com"},
                      {"type": "public.jpeg", "file": "photo.jpg"},
                      {"type": "public.plain-text", "text": "hello"},
                      {"type": "com.apple.active-webpage", "url": "https://example.com/page"},
                      {"type": "public.data"}],
                    "userInfo": {"source": "safari", "count": 2, "ratio": 0.5, "flag": true, "nothing": null,
                                 "list": [1, "a"], "nested": {"k": "v"}},
                    "unknownMember": 1},
                   {}]}
                """)
        #expect(request.items.count == 2)
        let first = request.items[0]
        #expect(first.contentText == "Look at this")
        #expect(
            first.attachments == [
                Attachment(typeIdentifiers: ["public.url", "public.plain-text"], value: .url("https://example.com")),
                Attachment(typeIdentifiers: ["public.jpeg"], value: .file(path: "photo.jpg")),
                Attachment(typeIdentifiers: ["public.plain-text"], value: .text("hello")),
                Attachment(typeIdentifiers: ["com.apple.active-webpage"], value: .url("https://example.com/page")),
                Attachment(typeIdentifiers: ["public.data"]),
            ])
        #expect(
            first.userInfo == [
                "source": .string("safari"), "count": .integer(2), "ratio": .real(0.5), "flag": .bool(true),
                "list": .array([.integer(1), .string("a")]), "nested": .dictionary(["k": .string("v")]),
            ])
        #expect(request.items[1] == ExtensionItem())
        #expect(try ShareRequest(jsonText: #"{"items": []}"#) == .empty)
    }

    @Test(
        "JSON errors name the field by its path",
        arguments: [
            (#"[]"#, nil, "expected a share request object"),
            (#"{}"#, "items", "is required"),
            (#"{"items": {}}"#, "items", "expected an array of extension items, found an object"),
            (#"{"items": [3]}"#, "items[0]", "expected an extension item object, found a number"),
            (#"{"items": [{"contentText": 1}]}"#, "items[0].contentText", "expected a string"),
            (#"{"items": [{"attachments": "x"}]}"#, "items[0].attachments", "expected an array of attachments"),
            (#"{"items": [{"attachments": [{}]}]}"#, "items[0].attachments[0]", "needs typeIdentifiers"),
            (
                #"{"items": [{}, {"attachments": [{"type": "public.url"}, {"typeIdentifiers": []}]}]}"#,
                "items[1].attachments[1].typeIdentifiers", "found an empty array"
            ),
            (
                #"{"items": [{"attachments": [{"typeIdentifiers": ["public.url", 7]}]}]}"#,
                "items[0].attachments[0].typeIdentifiers[1]", "expected a UTI string"
            ),
            (
                #"{"items": [{"attachments": [{"type": ""}]}]}"#, "items[0].attachments[0].type",
                "the type identifier is empty"
            ),
            (
                #"{"items": [{"attachments": [{"type": "a", "typeIdentifiers": ["b"]}]}]}"#, "items[0].attachments[0]",
                "has both typeIdentifiers and type"
            ),
            (
                #"{"items": [{"attachments": [{"type": "a", "value": "x", "url": "y"}]}]}"#,
                "items[0].attachments[0].url",
                "give only one of value, url, text and file"
            ),
            (
                #"{"items": [{"attachments": [{"type": "a", "file": 3}]}]}"#, "items[0].attachments[0].file",
                "expected a string"
            ),
            (#"{"items": [{"userInfo": []}]}"#, "items[0].userInfo", "expected an object"),
            (#"{"items": [{"userInfo": {"attachments": 1}}]}"#, "items[0].userInfo.attachments", "is reserved"),
            (#"{"items": [}"#, nil, "not valid JSON"),
        ] as [(String, String?, String)])
    func jsonErrors(text: String, field: String?, fragment: String) {
        expectError {
            _ = try ShareRequest(jsonText: text)
        } where: { error in
            guard let error = error as? InputError else { return false }
            return error.field == field && error.message.contains(fragment)
        }
    }

    @Test("URL schemes")
    func schemes() {
        #expect(Attachment.urlScheme(of: "HTTPS://a") == "https")
        #expect(Attachment.urlScheme(of: "mailto:a@b") == "mailto")
        #expect(Attachment.urlScheme(of: "x-callback+y.z-1:rest") == "x-callback+y.z-1")
        #expect(Attachment.urlScheme(of: "photo.jpg") == nil)
        #expect(Attachment.urlScheme(of: ":nothing") == nil)
        #expect(Attachment.urlScheme(of: "1http://a") == nil)
        #expect(Attachment.urlScheme(of: "C:\\path") == "c")
    }
}

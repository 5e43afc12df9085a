import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestShare

@Suite("Share targets")
struct ShareTargetTests {
    /// An Info.plist around `attributes` (the body of NSExtensionAttributes) and `extra` top-level keys.
    func infoPlist(attributes: String, extra: String = "") -> String {
        """
        <?xml version="1.0" encoding="UTF-8"?>
        <plist version="1.0">
        <dict>
        \(extra)
        \t<key>NSExtension</key>
        \t<dict>
        \t\t<key>NSExtensionAttributes</key>
        \t\t<dict>
        \(attributes)
        \t\t</dict>
        \t\t<key>NSExtensionPointIdentifier</key>
        \t\t<string>com.apple.share-services</string>
        \t</dict>
        </dict>
        </plist>
        """
    }

    func target(_ text: String) throws -> ShareTarget {
        try ShareTarget(infoPlist: PropertyListValue(parsing: text), path: "Test.plist")
    }

    @Test("with no extension named, anything is accepted and suggestions apply")
    func acceptingAnything() {
        let target = ShareTarget.acceptingAnything
        #expect(target.evaluate(.empty) == .activated)
        #expect(target.evaluate(Fixtures.request([["public.jpeg=a"], ["com.apple.live-photo=b"]])) == .activated)
        #expect(target.supportsSendMessageIntent)
        #expect(target.activationRule == .predicate(.alwaysTrue))
    }

    @Test("TRUEPREDICATE and FALSEPREDICATE as rule strings")
    func constants() throws {
        let always = try target(
            infoPlist(attributes: "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>"))
        #expect(always.evaluate(.empty).activated)
        let never = try target(
            infoPlist(attributes: "<key>NSExtensionActivationRule</key><string> falsepredicate </string>"))
        #expect(
            never.evaluate(Fixtures.request([["public.url=https://a"]]))
                == .refused("the rule is FALSEPREDICATE, which never activates"))
    }

    /// A type the target declares as an image ranks as an image, and its sent donation counts as one: it
    /// activated the target as an image but ranked as an unknown type, through the store's tree of public types.
    @Test func aTypeTheTargetDeclaresRanksAndIsRecordedAsItsPublicKind() throws {
        let shareTarget = try target(
            infoPlist(
                attributes: """
                    <key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>
                    <key>IntentsSupported</key><array><string>INSendMessageIntent</string></array>
                    """,
                extra: """
                    <key>UTExportedTypeDeclarations</key><array><dict>
                    <key>UTTypeIdentifier</key><string>com.example.sketch</string>
                    <key>UTTypeConformsTo</key><array><string>public.image</string></array></dict></array>
                    """))
        let at = Timestamp(seconds: 1_796_000_000)
        let store = InMemoryDonationStore()
        _ = try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: at)
        for (conversation, type, ago) in [("photos", "public.jpeg", 7_200.0), ("notes", "public.plain-text", 60.0)] {
            let intent = SendMessageIntent(conversationIdentifier: conversation, contentTypes: [type])
            _ = try store.record(Interaction(account: "a", date: at.adding(-ago), direction: .outgoing, intent: intent), now: at)
        }
        let flow = ShareFlow(target: shareTarget)
        func ranked(_ attachment: String) throws -> [String] {
            try flow.run(
                Fixtures.request([[attachment]]), choice: .none, action: .preview, account: "a",
                context: RankingContext(at: at), in: store, now: at
            ).suggestions.map(\.conversationIdentifier)
        }
        #expect(try ranked("public.jpeg=a.jpg") == ["photos", "notes"])
        #expect(try ranked("com.example.sketch=a.sketch") == ["photos", "notes"])
        let sent = try flow.run(
            Fixtures.request([["com.example.sketch=a.sketch"]]), choice: .conversation("notes"), action: .send,
            account: "a", context: RankingContext(at: at), in: store, now: at)
        if case .sent = sent.outcome {} else { Issue.record("\(sent)") }
        #expect(sent.contentTypes == ["com.example.sketch"])
        var donated: [[String]] = []
        try store.forEachDonation(account: "a") { donated.append($0.intent.contentTypes) }
        #expect(donated.last == ["com.example.sketch", "public.image"])
    }

    @Test("the target's own type declarations take part in evaluation")
    func customTypes() throws {
        let declarations = """
            \t<key>UTExportedTypeDeclarations</key>
            \t<array><dict>
            \t\t<key>UTTypeIdentifier</key><string>com.example.sketch</string>
            \t\t<key>UTTypeConformsTo</key><array><string>public.image</string></array>
            \t</dict></array>
            \t<key>UTImportedTypeDeclarations</key>
            \t<array><dict>
            \t\t<key>UTTypeIdentifier</key><string>org.example.notebook</string>
            \t\t<key>UTTypeConformsTo</key><string>com.example.sketch</string>
            \t</dict><dict>
            \t\t<key>UTTypeIdentifier</key><string>org.example.orphan</string>
            \t</dict></array>
            """
        let dictionary = try target(
            infoPlist(
                attributes: """
                    <key>NSExtensionActivationRule</key><dict>
                    <key>NSExtensionActivationSupportsImageWithMaxCount</key><integer>2</integer></dict>
                    """,
                extra: declarations))
        #expect(dictionary.declaredTypes == ["com.example.sketch", "org.example.notebook", "org.example.orphan"])
        #expect(
            dictionary.evaluate(Fixtures.request([["com.example.sketch=a.sketch", "org.example.notebook=b"]])).activated
        )
        #expect(!dictionary.evaluate(Fixtures.request([["org.example.orphan=c"]])).activated)
        // Without the declarations, the standard tree does not know the type.
        #expect(
            !ShareTarget(activationRule: dictionary.activationRule).evaluate(
                Fixtures.request([["com.example.sketch=a"]])
            ).activated)

        let types = dictionary.types
        #expect(types.isDeclared("com.example.sketch"))
        #expect(types.isDeclared("org.example.orphan"))
        #expect(types.conforms("org.example.notebook", to: "public.data"))  // transitive through the app's own type
        #expect(types.conforms("org.example.notebook", to: "org.example.notebook"))  // reflexive
        #expect(types.conforms("ORG.EXAMPLE.NOTEBOOK", to: "Public.Image"))  // case-insensitive
        #expect(!types.conforms("org.example.orphan", to: "public.data"))
        #expect(!types.conforms("public.image", to: "com.example.sketch"))
    }

    @Test(
        "conformance in the public tree: reflexive, transitive, not symmetric",
        arguments: [
            ("public.jpeg", "public.jpeg", true), ("public.jpeg", "public.image", true),
            ("public.jpeg", "public.data", true),
            ("public.jpeg", "public.item", true), ("public.jpeg", "public.content", true),
            ("public.heic", "public.image", true),
            ("public.utf8-plain-text", "public.text", true), ("public.file-url", "public.url", true),
            ("public.mpeg-4-audio", "public.audio", true), ("public.mpeg-4-audio", "public.movie", true),
            ("com.adobe.pdf", "public.composite-content", true), ("public.vcard", "public.contact", true),
            ("com.apple.xml-property-list", "public.text", true),
            ("public.image", "public.jpeg", false), ("public.url", "public.file-url", false),
            ("public.text", "public.image", false), ("com.apple.live-photo", "public.data", false),
            ("com.example.unknown", "public.item", false), ("com.example.unknown", "com.example.unknown", true),
        ])
    func conformance(type: String, ancestor: String, expected: Bool) {
        #expect(UniformTypeTree.standard.conforms(type, to: ancestor) == expected)
    }

    @Test("a declaration cycle does not hang conformance")
    func declarationCycle() {
        let types = UniformTypeTree.standard.declaring("com.example.a", conformsTo: ["com.example.b"])
            .declaring("com.example.b", conformsTo: ["com.example.a"])
        #expect(types.conforms("com.example.a", to: "com.example.b"))
        #expect(!types.conforms("com.example.a", to: "public.data"))
    }

    @Test("IntentsSupported decides whether suggestions apply")
    func intents() throws {
        let rule = "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>"
        let with = try target(
            infoPlist(
                attributes: rule + "<key>IntentsSupported</key><array><string>INSendMessageIntent</string></array>"))
        #expect(with.supportsSendMessageIntent)
        let other = try target(
            infoPlist(attributes: rule + "<key>IntentsSupported</key><array><string>INStartCallIntent</string></array>")
        )
        #expect(!other.supportsSendMessageIntent)
        #expect(other.intentsSupported == ["INStartCallIntent"])
        #expect(try !target(infoPlist(attributes: rule)).supportsSendMessageIntent)
    }

    @Test(
        "invalid Info.plists give typed errors that say where and what to do",
        arguments: [
            ("<plist><array/></plist>", "Test.plist: the top level is an array; an Info.plist is a dictionary"),
            ("<plist><dict/></plist>", "Test.plist: NSExtension is missing; this is not an app extension's Info.plist"),
            (
                "<plist><dict><key>NSExtension</key><string>x</string></dict></plist>",
                "Test.plist: NSExtension is a string; it must be a dictionary"
            ),
            (
                "<plist><dict><key>NSExtension</key><dict/></dict></plist>",
                "Test.plist: there is no NSExtensionActivationRule under NSExtension > NSExtensionAttributes; add one"
            ),
            (
                "<plist><dict><key>NSExtension</key><dict><key>NSExtensionAttributes</key><array/></dict></dict></plist>",
                "Test.plist: NSExtension.NSExtensionAttributes is an array; it must be a dictionary"
            ),
        ])
    func structureErrors(text: String, prefix: String) {
        expectError {
            _ = try target(text)
        } where: { error in
            "\(error)".hasPrefix(prefix)
        }
    }

    @Test(
        "errors in attributes and declarations name the key path",
        arguments: [
            (
                "<key>NSExtensionActivationRule</key><integer>1</integer>",
                "", "Test.plist: NSExtensionActivationRule is an integer; it must be a dictionary or a predicate string"
            ),
            (
                "<key>NSExtensionActivationRule</key><dict><key>NSExtensionActivationSupportsImage</key><integer>1</integer></dict>",
                "",
                "Test.plist: NSExtensionActivationRule has the key NSExtensionActivationSupportsImage, which Apple does not "
                    + "document (did you mean NSExtensionActivationSupportsImageWithMaxCount?)"
            ),
            (
                "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string><key>IntentsSupported</key><string>x</string>",
                "", "Test.plist: NSExtension.NSExtensionAttributes.IntentsSupported is a string"
            ),
            (
                "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string><key>IntentsSupported</key><array><true/></array>",
                "", "Test.plist: NSExtension.NSExtensionAttributes.IntentsSupported[0] is <true/>"
            ),
            (
                "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>",
                "<key>UTExportedTypeDeclarations</key><array><dict/></array>",
                "Test.plist: UTExportedTypeDeclarations[0].UTTypeIdentifier is missing or not a string"
            ),
            (
                "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>",
                "<key>UTImportedTypeDeclarations</key><array><dict><key>UTTypeIdentifier</key><string>a b</string></dict></array>",
                "Test.plist: UTImportedTypeDeclarations[0].UTTypeIdentifier is invalid"
            ),
            (
                "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>",
                "<key>UTImportedTypeDeclarations</key><array><dict><key>UTTypeIdentifier</key><string>a.b</string>"
                    + "<key>UTTypeConformsTo</key><array><integer>1</integer></array></dict></array>",
                "Test.plist: UTImportedTypeDeclarations[0].UTTypeConformsTo[0] is an integer"
            ),
            (
                "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>",
                "<key>UTExportedTypeDeclarations</key><dict/>", "Test.plist: UTExportedTypeDeclarations is a dictionary"
            ),
            // An app declares a few types of one or two parents: 600,000 declared types made every conformance
            // check walk them all, and loading 80,000 took 41 s.
            (
                "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>",
                "<key>UTExportedTypeDeclarations</key><array>"
                    + String(repeating: "<dict><key>UTTypeIdentifier</key><string>a.b</string></dict>", count: 1001)
                    + "</array>",
                "Test.plist: UTExportedTypeDeclarations holds more than 1000 type declarations"
            ),
            (
                "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>",
                "<key>UTImportedTypeDeclarations</key><array><dict><key>UTTypeIdentifier</key><string>a.b</string>"
                    + "<key>UTTypeConformsTo</key><array>" + String(repeating: "<string>public.data</string>", count: 33)
                    + "</array></dict></array>",
                "Test.plist: UTImportedTypeDeclarations[0].UTTypeConformsTo names 33 types"
            ),
        ])
    func attributeErrors(attributes: String, extra: String, prefix: String) {
        expectError {
            _ = try target(infoPlist(attributes: attributes, extra: extra))
        } where: { error in
            "\(error)".hasPrefix(prefix)
        }
    }

    /// A parent that is no type identifier (an underscore, a stray space, 1,025 bytes) conforms nothing to anything:
    /// it is left out and the rest of the file loads. It was kept, and copied lowercased for every declaration that
    /// named it: a thousand declarations naming one parent of 15 MB took `share --extension` to 4 GB and an abort.
    @Test("parents that are no type identifiers are left out")
    func invalidParentsAreLeftOut() throws {
        let long = String(repeating: "x", count: 1025)
        let loaded = try target(
            infoPlist(
                attributes: "<key>NSExtensionActivationRule</key><string>TRUEPREDICATE</string>",
                extra: "<key>UTImportedTypeDeclarations</key><array><dict><key>UTTypeIdentifier</key><string>a.b</string>"
                    + "<key>UTTypeConformsTo</key><array><string>\(long)</string><string>com.example.my_type</string>"
                    + "<string>public.data</string></array></dict>"
                    + "<dict><key>UTTypeIdentifier</key><string>c.d</string><key>UTTypeConformsTo</key><string>a b</string></dict></array>"))
        #expect(loaded.types.conforms("a.b", to: "public.data"))
        #expect(!loaded.types.conforms("a.b", to: long))
        #expect(!loaded.types.conforms("a.b", to: "com.example.my_type"))
        #expect(!loaded.types.conforms("c.d", to: "a b"))
    }

    @Test("a predicate that does not parse is an error with its position and a caret — never 'accept all'")
    func predicateError() throws {
        let text = infoPlist(
            attributes: """
                <key>NSExtensionActivationRule</key>
                <string>SUBQUERY (
                    extensionItems,
                    $extensionItem,
                    ANY $extensionItem.attachments.registeredTypeIdentifiers UTI-CONFORMS-TO "public.url"
                ).@count == == 1</string>
                """)
        let plist = try PropertyListValue(parsing: text)
        do {
            _ = try ShareTarget(infoPlist: plist, path: "Test.plist")
            Issue.record("the rule was accepted")
        } catch {
            guard case .invalidRule(let path, .syntax(let syntax)) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(path == "Test.plist")
            #expect(syntax.location == .init(line: 5, column: 13))
            #expect(syntax.message == "expected an operand (a key path, number, string or SUBQUERY), found '=='")
            #expect(
                "\(error)".hasPrefix("Test.plist: NSExtensionActivationRule: the predicate does not parse at character")
            )
            #expect("\(error)".hasSuffix("; fix the predicate or use the dictionary form"))
            #expect(error.excerpt == ").@count == == 1\n" + String(repeating: " ", count: 12) + "^")
        }
    }

    @Test("files that cannot be read, or are not property lists")
    func loadErrors() throws {
        #expect(
            throws: ShareTargetError.unreadable(path: "/nonexistent/Info.plist", reason: "no such file or directory")
        ) {
            _ = try ShareTarget.load(infoPlistAt: "/nonexistent/Info.plist")
        }
        #expect(throws: ShareTargetError.unreadable(path: "/tmp", reason: "it is a directory")) {
            _ = try ShareTarget.load(infoPlistAt: "/tmp")
        }
        let broken = try Fixtures.temporaryFile(Array("<plist>\n<dict>\n\t<key>a</key>\n</dict>\n</plist>\n".utf8))
        defer { Fixtures.remove(broken) }
        expectError {
            _ = try ShareTarget.load(infoPlistAt: broken)
        } where: { error in
            "\(error)" == "\(broken):3:2: not a valid property list: the key \"a\" has no value; fix the file "
                + "(plutil -lint checks it)"
        }
        var builder = BinaryPlistBuilder()
        builder.add([0xA1, 0x00])
        let cyclic = try Fixtures.temporaryFile(builder.build())
        defer { Fixtures.remove(cyclic) }
        expectError {
            _ = try ShareTarget.load(infoPlistAt: cyclic)
        } where: { error in
            "\(error)".hasPrefix("\(cyclic): byte 8: not a valid property list: object 0 contains itself")
        }
    }

    @Test("a rule is described in one line")
    func ruleDescription() throws {
        let element = try ShareTarget.load(infoPlistAt: Fixtures.extensionPath("element.plist"))
        #expect(
            "\(element.activationRule)" == "dictionary rule accepting text, at most 1 web URL, at most 5 images and "
                + "at most 1 movie (at least one attachment must be supported)")
        #expect("\(ActivationRule.acceptingAnything)" == "TRUEPREDICATE")
    }
}

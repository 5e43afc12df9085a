import SuggestCore
import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Names and identifiers come from other people (issue 13, item 5): no human-readable output lets them act on the
/// terminal, whatever they hold; JSON keeps them exactly. And the table's columns line up whatever the script.
@Suite struct TerminalOutputTests {
    static let evil = "x=\u{1B}[2J\u{1B}[31mEVIL"
    static let at = "2026-11-30T09:00:00Z"

    /// Whether any byte would act on a terminal: C0 controls but the line break, DEL, and the UTF-8 of C1 controls
    /// and of the bidirectional overrides.
    static func actsOnTheTerminal(_ bytes: [UInt8]) -> Bool {
        if bytes.contains(where: { ($0 < 0x20 && $0 != 0x0A) || $0 == 0x7F }) { return true }
        let text = String(decoding: bytes, as: UTF8.self)
        return text.unicodeScalars.contains { (0x80...0x9F).contains($0.value) || (0x202A...0x202E).contains($0.value) }
    }

    func fixture() throws -> StoreFixture {
        let fixture = try StoreFixture("terminal")
        try fixture.keepEverything()
        let date = "2026-11-29T10:00:00Z"
        try fixture.succeed(["donate", "--conversation", "x", "--recipient", Self.evil, "--date", date])
        try fixture.succeed([
            "donate", "--conversation", "two\nlines", "--date", date, "--identifier", "id\u{1B}]0;title\u{7}",
        ])
        try fixture.succeed([
            "donate", "--conversation", "rtl", "--group-name", "abc\u{202E}fed\u{9B}31m", "--date", date,
            "--recipient", "u-1=\u{1B}(0lqk", "--content-type", "public.jpeg",
        ])
        return fixture
    }

    @Test(arguments: [
        ["list", "--at", at], ["list", "--at", at, "--explain"], ["block", "--list"],
        ["share", "--attachment", "public.jpeg=a.jpg", "--at", at, "--conversation", "two\nlines"],
        ["share", "--attachment", "public.jpeg=a.jpg", "--at", at, "--conversation", "rtl"],
        ["share", "--attachment", "public.jpeg=a.jpg", "--at", at, "--conversation", "gone\u{1B}[2J"],
        ["share", "--attachment", "public.jpeg=a.jpg", "--at", at, "--pick", "1", "--send"],
        ["delete", "--conversation", "two\nlines"], ["delete", "--all"], ["block", "--conversation", "\u{1B}[5m"],
        ["unblock", "--conversation", "\u{1B}[5m"], ["feedback", "--less", "--conversation", "\u{1B}[5m"],
        ["donate", "--conversation", "c", "--identifier", "\u{1B}[8m"], ["list", "--limit", "\u{1B}[2J"],
        ["list", "--bogus\u{1B}[2J"], ["delete", "--conversation", "none\u{1B}[2J"],
    ])
    func humanOutputNeverActsOnTheTerminal(_ command: [String]) throws {
        let fixture = try fixture()
        try fixture.succeed(["block", "--conversation", "blocked\u{1B}[2J\nrow"])
        let outcome = try fixture.run(command)
        #expect(outcome.signal == nil && [0, 1, 64].contains(outcome.status ?? -1), "\(outcome)")
        #expect(!Self.actsOnTheTerminal(outcome.standardOutput), "\(command): \(outcome.output.debugDescription)")
        #expect(!Self.actsOnTheTerminal(outcome.standardError), "\(command): \(outcome.error.debugDescription)")
        if outcome.status != 0 { #expect(outcome.errorLines.count == 1, "\(outcome)") }
    }

    /// One row per suggestion, the escapes visible; the JSON has the names exactly as donated.
    @Test func theTableShowsEscapesAndTheJSONTheText() throws {
        let fixture = try fixture()
        let table = try fixture.succeed(["list", "--at", Self.at])
        #expect(table.split(separator: "\n").count == 3, "\(table)")
        #expect(table.contains("\\u{1B}[2J\\u{1B}[31mEVIL") && table.contains("[two\\nlines]"), "\(table)")
        #expect(table.contains("abc\\u{202E}fed\\u{9B}31m"))
        let json = try JSONParser.parse(try fixture.succeed(["list", "--at", Self.at, "--json"]))
        guard case .array(let suggestions)? = json["suggestions"] else {
            Issue.record("no suggestions")
            return
        }
        let identifiers = suggestions.compactMap { suggestion -> String? in
            if case .string(let id)? = suggestion["conversationIdentifier"] { return id }
            return nil
        }
        #expect(Set(identifiers) == ["x", "two\nlines", "rtl"])
        #expect(try fixture.succeed(["export"]).contains(#""displayName":"\u001b[2J\u001b[31mEVIL""#))
    }

    /// A rule of 60 KB refuses a photo: the reason is one short line in the text and in the JSON. A rule of 1.4 MB
    /// is refused as longer than a rule may be, in a short line too.
    @Test func aHugeRulesRefusalIsCapped() throws {
        let fixture = try fixture()
        func rule(_ length: Int) -> String {
            "SUBQUERY(extensionItems, $e, SUBQUERY($e.attachments, $a, ANY $a.registeredTypeIdentifiers "
                + "UTI-CONFORMS-TO \"\u{1B}[2J" + String(repeating: "x", count: length) + "\").@count == 1).@count == 1"
        }
        func plist(_ rule: String) -> String {
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <plist version="1.0"><dict><key>NSExtension</key><dict><key>NSExtensionAttributes</key><dict>
            <key>NSExtensionActivationRule</key><string>\(rule)</string></dict></dict></dict></plist>
            """
        }
        let tooLong = fixture.scratch + "/too-long.plist"
        try writeFile(tooLong, plist(rule(1_400_000)))
        let refused = try fixture.run(["share", "--extension", tooLong, "--attachment", "public.jpeg=a.jpg"])
        #expect(refused.status == 64 && refused.standardError.count < 1_000, "\(refused.output.prefix(300))")
        #expect(refused.error.contains("a rule may have at most 65536"), "\(refused.error.prefix(300))")
        #expect(!Self.actsOnTheTerminal(refused.standardError))
        let path = fixture.scratch + "/huge.plist"
        try writeFile(path, plist(rule(60_000)))
        let text = try fixture.run(["share", "--extension", path, "--attachment", "public.jpeg=a.jpg"])
        #expect(text.status == 0 && text.standardOutput.count < 1_000, "\(text.output.prefix(300))")
        #expect(!Self.actsOnTheTerminal(text.standardOutput))
        let json = try fixture.run(["share", "--extension", path, "--attachment", "public.jpeg=a.jpg", "--json-output"])
        guard case .string(let reason)? = try JSONParser.parse(json.output)["reason"] else {
            Issue.record("no reason: \(json.output.prefix(300))")
            return
        }
        #expect(reason.count <= 500 && reason.hasSuffix("…"), "\(reason.count)")
    }

    /// Names in CJK and emoji take two columns a character: the scores start in one column on every row.
    @Test func wideCharactersAlignByDisplayWidth() throws {
        let fixture = try StoreFixture("terminal-wide")
        try fixture.keepEverything()
        // Display widths 4, 8, 4 and 5: the title column is 12 wide (its minimum) and 2 spaces follow.
        for (conversation, name) in [("c", "漢字"), ("a", "abcdefgh"), ("e", "🧗🧗"), ("k", "한국e")] {
            try fixture.succeed([
                "donate", "--conversation", conversation, "--group-name", name, "--date", "2026-11-29T10:00:00Z",
            ])
        }
        let table = try fixture.succeed(["list", "--at", Self.at])
        var padding: [String: Int] = [:]
        for row in table.split(separator: "\n") {
            guard let score = row.firstRange(of: "score") else { continue }
            let title = row[..<score.lowerBound].dropFirst(5)
            let name = title.trimmingSuffix(" ")
            padding[String(name)] = title.count - name.count
        }
        #expect(padding == ["漢字": 10, "abcdefgh": 6, "🧗🧗": 10, "한국e": 9], "\(table)")
    }
}

extension Substring {
    func trimmingSuffix(_ character: Character) -> Substring {
        var text = self
        while text.last == character { text = text.dropLast() }
        return text
    }
}

import Testing

@testable import SuggestCLI

/// Escaping and measuring text from other people for a terminal (issue 13, item 5 and the wide characters).
@Suite struct TerminalTextTests {
    @Test(arguments: [
        ("plain", "plain"), ("a\nb", "a\\nb"), ("a\r\nb\tc", "a\\r\\nb\\tc"),
        ("\u{1B}[2J\u{1B}[31mEVIL", "\\u{1B}[2J\\u{1B}[31mEVIL"),
        ("nul\u{0}", "nul\\u{0}"), ("del\u{7F}", "del\\u{7F}"), ("csi\u{9B}2J", "csi\\u{9B}2J"),
        ("abc\u{202E}fed", "abc\\u{202E}fed"), ("iso\u{2066}late\u{2069}", "iso\\u{2066}late\\u{2069}"),
        ("line\u{2028}sep", "line\\u{2028}sep"), ("Zoë 漢字 🧗 \u{200F}", "Zoë 漢字 🧗 \u{200F}"),
        ("back\\slash", "back\\slash"),
    ])
    func controlCharactersAreEscapedAndTheRestKept(_ text: String, _ expected: String) {
        #expect(TerminalText.escaped(text) == expected)
        // Escaping is idempotent: an escaped text has nothing left to escape.
        #expect(TerminalText.escaped(expected) == expected)
        #expect(!TerminalText.escaped(text).unicodeScalars.contains(where: TerminalText.needsEscape))
    }

    @Test(arguments: [
        ("abc", 3), ("", 0), ("漢字", 4), ("グループ", 8), ("한국어", 6), ("ＡＢ", 4), ("🧗", 2), ("👨‍👩‍👧", 2), ("🇫🇷", 2),
        ("❤️", 2), ("e\u{301}", 1), ("Zoë", 3), ("\u{200B}", 0), ("Ünïcödé", 7), ("a漢b🧗c", 7),
    ])
    func widthsAreTheColumnsATerminalDraws(_ text: String, _ columns: Int) {
        #expect(TerminalText.width(text) == columns, "\(text.debugDescription)")
    }

    @Test func prefixesCutWholeCharactersWithinTheColumns() {
        #expect(TerminalText.prefix("漢字漢字", columns: 5) == "漢字")
        #expect(TerminalText.prefix("ab🧗cd", columns: 3) == "ab")
        #expect(TerminalText.prefix("short", columns: 40) == "short")
        #expect(TerminalText.padded("漢字", to: 6) == "漢字  ")
    }

    @Test func anErrorLineIsOneLineAndCapped() {
        #expect(TerminalText.line("a\nb\n") == "a\\nb\n")
        let long = TerminalText.line(String(repeating: "x", count: 10_000))
        #expect(long.count == 2_001 && long.hasSuffix("…\n"))
    }

    /// The sorted, disjoint ranges the binary search needs.
    @Test func theWideRangesAreSortedAndDisjoint() {
        for (low, high) in zip(TerminalText.wideRanges, TerminalText.wideRanges.dropFirst()) {
            #expect(low.upperBound < high.lowerBound)
        }
    }
}

/// Command lines as bytes (issue 13, item 6), in this process.
@Suite struct RawArgumentTests {
    static func run(_ arguments: [[UInt8]], environment: [String: [UInt8]] = [:]) -> (code: Int32, error: String) {
        let entries = environment.map { Array(($0.key + "=").utf8) + $0.value }
        let error = CapturedOutput()
        let io = CommandIO(
            standardOutput: CapturedOutput(), standardError: error, standardInput: ByteSource(text: ""),
            environment: ["SUGGEST_STORE": "/nonexistent-should-not-be-used"])
        return (SuggestCommandLine.run(rawArguments: arguments, rawEnvironment: entries, io: io), error.text)
    }

    @Test func invalidUTF8IsRefusedAndNamed() {
        let refused = Self.run([Array("donate".utf8), Array("--conversation".utf8), [0x61, 0xFF, 0x62]])
        #expect(refused.code == 64)
        #expect(
            refused.error
                == "suggest donate: argument 3 ('a\\xFFb') is not valid UTF-8; give identifiers, names and paths as UTF-8 text\n"
        )
        let overlong = Self.run([[0xC0, 0x80]])
        #expect(overlong.code == 64 && overlong.error.hasPrefix("suggest: argument 1 ('\\xC0\\x80')"))
    }

    @Test func validUTF8RunsAsBefore() {
        #expect(Self.run([Array("--version".utf8)]).code == 0)
        #expect(Self.run([Array("list".utf8), Array("--limit".utf8), Array("zéro".utf8)]).code == 64)
    }

    /// A variable that is not UTF-8 is refused by a command that would find the store through it, and by no other.
    @Test func theEnvironmentIsCheckedWhereItIsUsed() {
        let home: [String: [UInt8]] = ["HOME": [0x2F, 0xFE]]
        let refused = Self.run([Array("list".utf8)], environment: home)
        #expect(refused.code == 64 && refused.error.contains("HOME ('/\\xFE') is not valid UTF-8"), "\(refused.error)")
        #expect(Self.run([Array("--version".utf8)], environment: home).code == 0)
        // The variables given replace the ones in `io`: SUGGEST_STORE from there is not used.
        let explicit = Self.run(
            [Array("list".utf8), Array("--store".utf8), Array("/nonexistent-h3/s".utf8)], environment: home)
        #expect(explicit.code == 1 && explicit.error.contains("no such store: /nonexistent-h3/s"), "\(explicit.error)")
    }
}

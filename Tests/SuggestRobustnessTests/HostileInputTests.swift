import SuggestCore
import Testing

/// Input written to break things: every bad donation is refused with a message that names the field (and the line,
/// in a file), nothing crashes, and what is accepted comes back byte for byte.
@Suite struct HostileInputTests {
    /// Why a donation was refused: "json: …" for the parser, "input: …" for the donation contract.
    struct Refusal: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses one donation the way `import` does: JSON first, then the donation contract.
    static func donation(_ bytes: [UInt8]) -> Result<Interaction, Refusal> {
        let json: JSONValue
        do {
            json = try bytes.withUnsafeBufferPointer { buffer throws(JSONParser.Error) in
                try JSONParser.parse(bytes: buffer)
            }
        } catch {
            return .failure(Refusal(description: "json: \(error)"))
        }
        do {
            return .success(try Interaction(json: json))
        } catch {
            return .failure(Refusal(description: "input: \(error)"))
        }
    }

    static func donation(_ text: String) -> Result<Interaction, Refusal> { donation(Array(text.utf8)) }

    static func refusal(_ text: String) -> String? { refusal(Array(text.utf8)) }

    static func refusal(_ bytes: [UInt8]) -> String? {
        if case .failure(let refusal) = donation(bytes) { return refusal.description }
        return nil
    }

    /// A valid donation with `value` (JSON text) at the string field `path`.
    static func withField(_ path: String, _ value: String) -> String {
        func at(_ field: String, _ otherwise: String) -> String { field == path ? value : "\"" + otherwise + "\"" }
        let person = "intent.recipients[0]."
        return """
            {"account":\(at("account", "a")),"identifier":\(at("identifier", "d")),\
            "groupIdentifier":\(at("groupIdentifier", "g")),"date":"2026-11-29T18:03:00Z","direction":"outgoing",\
            "intent":{"conversationIdentifier":\(at("intent.conversationIdentifier", "c")),\
            "speakableGroupName":\(at("intent.speakableGroupName", "n")),"serviceName":\(at("intent.serviceName", "s")),\
            "recipients":[{"customIdentifier":\(at(person + "customIdentifier", "u")),\
            "displayName":\(at(person + "displayName", "D")),\
            "personHandle":{"value":\(at(person + "personHandle.value", "h")),"type":"unknown"},\
            "contactIdentifier":\(at(person + "contactIdentifier", "C")),"image":\(at(person + "image", "i"))}],\
            "image":\(at("intent.image", "i")),"contentTypes":[\(at("intent.contentTypes[0]", "public.jpeg"))],\
            "content":\(at("intent.content", "t"))}}
            """
    }

    static let stringFields = [
        "account", "identifier", "groupIdentifier", "intent.conversationIdentifier", "intent.speakableGroupName",
        "intent.serviceName", "intent.image", "intent.content", "intent.recipients[0].customIdentifier",
        "intent.recipients[0].displayName", "intent.recipients[0].contactIdentifier", "intent.recipients[0].image",
        "intent.recipients[0].personHandle.value", "intent.contentTypes[0]",
    ]

    @Test(arguments: stringFields)
    func stringsUpTo4096BytesAreAcceptedAndLongerOnesRefusedByName(_ field: String) throws {
        #expect(Self.refusal(Self.withField(field, #""x""#)) == nil, "the template itself is valid")
        let fits = "\"" + String(repeating: "é", count: 2_048) + "\""  // 4096 bytes of UTF-8
        #expect(Self.refusal(Self.withField(field, fits)) == nil)
        let over = "\"" + String(repeating: "é", count: 2_048) + "a\""  // 4096 + 1
        let message = Self.refusal(Self.withField(field, over)) ?? "accepted"
        #expect(message.contains(field) && message.contains("4097 bytes"), "\(message.prefix(200))")
        // The limit is on the decoded text: 2049 escaped é are 4098 bytes however they are written.
        let escaped = "\"" + String(repeating: "\\u00e9", count: 2_049) + "\""
        #expect(Self.refusal(Self.withField(field, escaped))?.contains(field) == true)
        // NUL, written as an escape (a raw NUL is a control character and fails as JSON).
        #expect(Self.refusal(Self.withField(field, #""a\u0000b""#))?.contains(field) == true)
        #expect(
            Self.refusal(Array(Self.withField(field, "\"a\u{0}b\"").utf8))?.hasPrefix("json: control character") == true
        )
    }

    @Test func deepNestingIsRefusedWithoutRecursingIntoIt() {
        for depth in [65, 1_000, 200_000] {
            for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
                let text = String(repeating: open, count: depth) + "1" + String(repeating: close, count: depth)
                #expect(Self.refusal(text)?.contains("nesting deeper than 64") == true, "depth \(depth) \(open)")
            }
        }
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        #expect(Self.refusal(deepest)?.hasPrefix("input: expected a JSON object") == true)
        // Deep nesting inside an otherwise valid donation, in a field nobody reads.
        let inside =
            "{\"date\":1,\"intent\":{\"conversationIdentifier\":\"c\"},\"x\":" + String(repeating: "[", count: 63)
            + String(repeating: "]", count: 63) + "}"
        #expect(Self.refusal(inside) == nil)
    }

    @Test(
        arguments: [
            [0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80],
            [0xF5, 0x80, 0x80, 0x80], [0xFF], [0xFE, 0xFF], [0xC3],
        ] as [[UInt8]])
    func invalidUTF8IsRefused(_ bad: [UInt8]) {
        let inString = Array(#"{"date":1,"intent":{"conversationIdentifier":"c"#.utf8) + bad + Array(#""}}"#.utf8)
        #expect(Self.refusal(inString)?.contains("invalid UTF-8") == true, "\(bad)")
        let outside = Array(#"{"date":1,"intent":{"conversationIdentifier":"c"}}"#.utf8) + bad
        #expect(Self.refusal(outside)?.hasPrefix("json: ") == true, "\(bad)")
        let inKey = Array(#"{"date":1,"intent":{"conversationIdentifier":"c"},""#.utf8) + bad + Array(#"":1}"#.utf8)
        #expect(Self.refusal(inKey)?.contains("invalid UTF-8") == true, "\(bad)")
    }

    @Test(arguments: [#"\ud800"#, #"\udfff"#, #"\ud800\u0041"#, #"\ud800\ud800"#, #"\udc00\ud800"#, #"\ud83d"#])
    func unpairedSurrogateEscapesAreRefused(_ escape: String) {
        let text = #"{"date":1,"intent":{"conversationIdentifier":"c\#(escape)"}}"#
        #expect(Self.refusal(text)?.contains("surrogate") == true, "\(escape)")
    }

    @Test func pairedSurrogatesAndOtherPlanesAreAccepted() throws {
        let text =
            #"{"date":1,"intent":{"conversationIdentifier":"c\ud83d\ude00\u00e9\u4e2d","speakableGroupName":"😀👨‍👩‍👧"}}"#
        let donation = try Self.donation(text).get()
        #expect(donation.conversationIdentifier == "c😀é中")
        #expect(donation.intent.speakableGroupName == "😀👨‍👩‍👧")
    }

    @Test(arguments: [
        "1e400", "-1e400", "1e309", "123456789e999", "1e99999999999999999999", String(repeating: "9", count: 400),
    ])
    func hugeNumbersAreRefused(_ number: String) {
        let text = #"{"date":\#(number),"intent":{"conversationIdentifier":"c"}}"#
        #expect(Self.refusal(text)?.contains("out of range") == true, "\(number)")
    }

    @Test(arguments: [
        "1e300", "-1e300", "1e15", "-62135596801", "253402300800", "true", "null", "[]", #""""#,
        #""2026-02-30T00:00:00Z""#,
        #""2026-11-29T18:03:00""#, #""2026-11-29""#, #""tomorrow""#,
    ])
    func datesOutsideTheContractAreRefusedByName(_ date: String) {
        let text = #"{"date":\#(date),"intent":{"conversationIdentifier":"c"}}"#
        #expect(Self.refusal(text)?.hasPrefix("input: date") == true, "\(date): \(Self.refusal(text) ?? "accepted")")
    }

    @Test(arguments: ["01", "1.", ".5", "-", "+1", "0x10", "1e", "--1", "NaN", "Infinity", "1_000"])
    func malformedNumbersAreRefused(_ number: String) {
        let text = #"{"date":\#(number),"intent":{"conversationIdentifier":"c"}}"#
        #expect(Self.refusal(text)?.hasPrefix("json: ") == true, "\(number)")
    }

    @Test func edgesOfTheJSONGrammar() {
        let valid = #"{"date":1,"intent":{"conversationIdentifier":"c"}}"#
        #expect(Self.refusal(valid) == nil)
        #expect(Self.refusal(" \t\r\n" + valid + " \r\n") == nil)
        #expect(
            Self.refusal("\u{FEFF}" + valid)?.hasPrefix("json: ") == true, "a byte-order mark is not JSON white space")
        #expect(Self.refusal(valid + valid)?.contains("unexpected text after") == true)
        #expect(Self.refusal(String(valid.dropLast())) != nil)
        #expect(Self.refusal("") != nil)
        #expect(Self.refusal(#"{"date":1,"intent":{"conversationIdentifier":"c"},}"#) != nil)
        #expect(Self.refusal(#"{'date':1}"#) != nil)
        // A repeated member: the last one counts, as JSONValue's subscript documents.
        #expect(Self.refusal(#"{"date":"soon","date":1,"intent":{"conversationIdentifier":"c"}}"#) == nil)
        #expect(
            Self.refusal(#"{"date":1,"intent":{"conversationIdentifier":""}}"#)?.contains("conversationIdentifier")
                == true)
        #expect(
            Self.refusal(#"{"date":1,"intent":{"conversationIdentifier":"c"},"direction":"sideways"}"#)?.contains(
                "direction") == true)
        #expect(Self.refusal(#"{"date":1,"intent":[]}"#)?.contains("intent") == true)
        #expect(
            Self.refusal(#"{"date":1,"intent":{"conversationIdentifier":"c","recipients":[1]}}"#)?.contains(
                "recipients[0]") == true)
        for top in ["[]", "1", #""x""#, "null", "true"] {
            #expect(Self.refusal(top)?.hasPrefix("input: expected a JSON object") == true, "\(top)")
        }
    }

    /// A donation names at most 1,024 recipients (issue 13: 100,000 made `list --json --limit 3` 6.4 MB): the direct
    /// decoder and the tree path give the same answer on each side of the limit.
    @Test(arguments: [0, 1, 1_023, 1_024, 1_025, 5_000])
    func recipientsAreCappedAlikeByBothDecoders(_ count: Int) throws {
        var people: [String] = []
        for index in 0..<count { people.append(#"{"customIdentifier":"u-\#(index)","displayName":"P \#(index)"}"#) }
        let text =
            #"{"date":1,"intent":{"conversationIdentifier":"big","recipients":["# + people.joined(separator: ",")
            + "]}}"
        var copy = text
        let direct = copy.withUTF8 { bytes in Result { () throws(InputError) in try Interaction(jsonBytes: bytes) } }
        let tree = Self.donation(text)
        switch (direct, tree) {
        case (.success(let fast), .success(let slow)):
            #expect(count <= Interaction.maximumRecipients)
            #expect(fast == slow && fast.intent.recipients.count == count)
        case (.failure(let fast), .failure(let slow)):
            #expect(count > Interaction.maximumRecipients)
            #expect("input: \(fast)" == slow.description)
            #expect(fast.field == "intent.recipients")
            #expect(fast.message.hasPrefix("names \(count) people, more than the 1024"))
        default:
            Issue.record("the decoders disagree at \(count) recipients: \(direct) and \(tree)")
        }
    }

    /// What is accepted survives the trip through `export`'s JSON Lines unchanged, and a second trip gives the
    /// same text: the property the fuzz target checks on every input it finds.
    @Test func acceptedDonationsRoundTripThroughTheirJSONLine() throws {
        let strange = [
            "'); DROP TABLE donations; --", "Robert'); DROP TABLE students;--", "1 OR 1=1", "%_\\", "\"quoted\"",
            "line\nbreak\ttab\r", "\u{2028}\u{2029}", "\u{1}\u{1F}\u{7F}", "😀👨‍👩‍👧", "\u{202E}rtl", "é" + "\u{301}",
        ]
        for text in strange {
            let donation = Interaction(
                identifier: text, groupIdentifier: text, date: Timestamp(seconds: 1_796_029_200),
                direction: .incoming,
                intent: SendMessageIntent(
                    conversationIdentifier: text, speakableGroupName: text, serviceName: text,
                    recipients: [Person(customIdentifier: text, displayName: text, personHandle: .init(value: text))],
                    image: text, contentTypes: [text]))
            let again = try Self.donation(donation.jsonLine).get()
            #expect(again == donation, "\(text.debugDescription)")
            #expect(again.jsonLine == donation.jsonLine)
        }
    }

    // MARK: Through the binary

    /// SQL in every field is data: stored verbatim, listed and exported verbatim, deleted by its exact text, and
    /// the tables are all still there.
    @Test func sqlLookingTextIsStoredVerbatimAndNeverExecuted() throws {
        let fixture = try StoreFixture("hostile-sql")
        try fixture.keepEverything()
        let nasty = [
            "'); DROP TABLE donations; --", "\"; DELETE FROM conversations; --", "1' OR '1'='1", "%", "_",
            "x' UNION SELECT body FROM snapshots --", "?1", ":name", "@p", "$v", "\\'",
        ]
        var donations: [Interaction] = []
        for (index, text) in nasty.enumerated() {
            donations.append(
                Interaction(
                    identifier: text, groupIdentifier: text, date: Timestamp(seconds: Donations.start + Double(index)),
                    direction: .outgoing,
                    intent: SendMessageIntent(
                        conversationIdentifier: text, speakableGroupName: "name " + text,
                        recipients: [Person(customIdentifier: "p " + text, displayName: text)])))
        }
        try fixture.importLines(Donations.lines(donations))
        let exported = try fixture.succeed(["export"])
        #expect(exported == Donations.lines(donations).joined(separator: "\n") + "\n")
        let listed = try fixture.succeed(["list", "--json", "--limit", "100", "--at", Donations.at.rfc3339])
        for text in nasty {
            var quoted = ""
            JSONWriter.appendQuoted(text, to: &quoted)
            #expect(listed.contains("\"conversationIdentifier\":\(quoted)"), "\(text)")
        }
        // `%` and `_` are not patterns: deleting "%" deletes that conversation only.
        try fixture.succeed(["delete", "--conversation", "%"])
        try fixture.succeed(["delete", "--identifier", "_"])
        try fixture.succeed(["delete", "--group-identifier", "1' OR '1'='1"])
        try fixture.succeed(["block", "--conversation", "'); DROP TABLE donations; --"])
        #expect(try StoreCheck.count(store: fixture.store) == nasty.count - 3)
        #expect(try fixture.succeed(["block", "--list"]) == "'); DROP TABLE donations; --\n")
        // Through flags as well as JSON.
        try fixture.succeed([
            "donate", "--conversation", "'; DROP TABLE snapshots; --", "--group-name", "'--", "--identifier",
            "' OR 1=1 --",
        ])
        #expect(try fixture.succeed(["export"]).contains(#""identifier":"' OR 1=1 --""#))
        #expect(try StoreCheck.count(store: fixture.store) == nasty.count - 2)
        #expect(try StoreCheck.rankingDifferences(store: fixture.store) == [])
        #expect(try StoreCheck.rebuildDifferences(of: fixture) == [])
    }

    /// A file of bad lines: each refused by line number and field, and an all-or-nothing import records nothing.
    @Test func importRefusesHostileLinesByNumberAndRecordsNothing() throws {
        let fixture = try StoreFixture("hostile-import")
        try fixture.keepEverything()
        let good = Array(#"{"identifier":"ok","date":1796029200,"intent":{"conversationIdentifier":"c"}}"#.utf8)
        let bad: [(String, [UInt8])] = [
            ("NUL", Array(#"{"date":1,"intent":{"conversationIdentifier":"a"#.utf8) + [0] + Array(#""}}"#.utf8)),
            (
                "invalid UTF-8",
                Array(#"{"date":1,"intent":{"conversationIdentifier":"a"#.utf8) + [0xC0, 0xAF] + Array(#""}}"#.utf8)
            ),
            ("a huge number", Array(#"{"date":1e400,"intent":{"conversationIdentifier":"a"}}"#.utf8)),
            (
                "deep nesting",
                Array((String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)).utf8)
            ),
            (
                "a long string",
                Array(
                    ("{\"date\":1,\"intent\":{\"conversationIdentifier\":\"" + String(repeating: "z", count: 100_000)
                        + "\"}}").utf8)
            ),
            ("a lone surrogate", Array(#"{"date":1,"intent":{"conversationIdentifier":"\udead"}}"#.utf8)),
        ]
        for (what, line) in bad {
            let input = good + [10] + good + [10] + line + [10] + good + [10]
            let outcome = try fixture.run(["import", "-", "--quiet"], input: input)
            #expect(outcome.status == 64, "\(what): \(outcome)")
            #expect(outcome.errorLines.count == 1 && outcome.error.contains("line 3"), "\(what): \(outcome)")
            #expect(outcome.error.count < 400, "\(what): the message repeats the input")
            let skipped = try fixture.run(["import", "-", "--quiet", "--skip-invalid"], input: input)
            #expect(skipped.status == 0 && skipped.error.contains("line 3"), "\(what): \(skipped)")
        }
        #expect(try StoreCheck.count(store: fixture.store) == 1)
    }
}

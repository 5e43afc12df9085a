import SuggestTestSupport
import Testing

@testable import SuggestCore

/// The direct decoder is only a faster way to the tree path's answer: on every line it accepts, the tree path must
/// read the same donation, and it must accept nothing the tree path refuses.
@Suite struct InteractionDecoderTests {
    /// What the tree path makes of a line: the donation, or `nil` for an error.
    private func tree(_ line: String) -> Interaction? {
        guard let json = try? JSONParser.parse(line) else { return nil }
        return try? Interaction(json: json, defaultAccount: "fallback")
    }

    private func direct(_ line: String) -> Interaction? {
        var copy = line
        return copy.withUTF8 { InteractionDecoder.decode($0, defaultAccount: "fallback") }
    }

    /// Checks the decoder against the tree path on one line; returns whether the fast path read it.
    @discardableResult
    private func agree(_ line: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let expected = tree(line)
        guard let fast = direct(line) else { return false }
        #expect(expected == fast, "line: \(line)", sourceLocation: sourceLocation)
        return true
    }

    static let full = #"""
        {"account":"a","identifier":"ID-1","groupIdentifier":"g","date":"2026-11-29T18:03:00.250+01:00","direction":"outgoing","engagedSuggestion":true,"intent":{"conversationIdentifier":"c-1","speakableGroupName":"Crew","serviceName":"chat","image":"crew.png","content":"hi","contentTypes":["public.jpeg","public.url","public.jpeg"],"sender":{"customIdentifier":"me","isMe":true},"recipients":[{"customIdentifier":"p-1","displayName":"Ana","personHandle":{"value":"ana@example.com","type":"emailAddress"},"contactIdentifier":"C1","image":"ana.png","isMe":false},{"customIdentifier":"p-2","personHandle":{"value":"+15550100"}}]}}
        """#

    @Test func readsEveryFieldAsTheTreePathDoes() {
        #expect(agree(Self.full))
        #expect(direct(Self.full)?.intent.contentTypes == ["public.jpeg", "public.url"])
        #expect(agree(#"{"date":1764439380.5,"intent":{"conversationIdentifier":"c"}}"#))
        #expect(direct(#"{"date":1764439380.5,"intent":{"conversationIdentifier":"c"}}"#)?.account == "fallback")
    }

    @Test func leavesEscapesAndOddValidLinesToTheTreePath() throws {
        // Valid, but read by the tree path: escaped names, escaped dates, and a bad member overwritten by a good one.
        for line in [
            #"{"acc\u006funt":"a","date":0,"intent":{"conversationIdentifier":"c"}}"#,
            #"{"date":"2026-11-29T18:03:00\u005a","intent":{"conversationIdentifier":"c"}}"#,
            #"{"direction":"sideways","direction":"incoming","date":0,"intent":{"conversationIdentifier":"c"}}"#,
        ] {
            #expect(tree(line) != nil)
            agree(line)
            #expect(try Interaction(jsonBytes: line) == tree(line))
        }
        // Escapes inside values are read in place and decoded.
        #expect(agree(#"{"date":0,"intent":{"conversationIdentifier":"c\"1\u00e9\ud83d\ude00"}}"#))
    }

    /// An empty group identifier, service or group name is none, on both paths and when set later.
    @Test func emptyOptionalNamesAreNone() throws {
        let line = #"{"groupIdentifier":"","date":0,"intent":{"conversationIdentifier":"c","speakableGroupName":"","serviceName":""}}"#
        for read in [tree(line), direct(line)] {
            let interaction = try #require(read)
            #expect(interaction.groupIdentifier == nil && interaction.intent.serviceName == nil)
            #expect(interaction.intent.speakableGroupName == nil && !interaction.intent.isGroup)
        }
        var interaction = try #require(direct(line))
        interaction.groupIdentifier = ""
        interaction.intent.serviceName = ""
        interaction.intent.speakableGroupName = ""
        #expect(interaction == direct(line))
    }

    /// A donation is at most `Interaction.maximumDonationBytes` of JSON as `export` writes it (1,024 recipients
    /// with five 4 KiB fields each made a 21 MB donation that every listing of its conversation returned): one of
    /// exactly the limit is read, one a byte over refused, whatever the input's own length (unknown members and
    /// spaces are not written; a handle's type is); a text too long to be one is refused before it is read (the tree
    /// path takes 30 bytes an element: a 60 MB line of an unknown array took 890 MB). A short one still says exactly
    /// what is wrong.
    @Test func aDonationOverTheLimitIsRefusedWhateverItHolds() throws {
        func read(_ text: String) -> Result<Interaction, InputError> {
            var text = text
            return text.withUTF8 { bytes in Result { () throws(InputError) in try Interaction(jsonBytes: bytes) } }
        }
        let limit = Interaction.maximumDonationBytes
        // A written donation of `length` bytes: people of long names, the last one's trimmed to fit.
        func written(_ length: Int, identifier: String? = "d-1") -> String {
            var people = (0..<260).map { Person(customIdentifier: "p\($0)", displayName: String(repeating: "n", count: 4_000)) }
            var interaction = Interaction(
                account: "a", identifier: identifier, date: Timestamp(seconds: 1_796_342_400), direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "c", recipients: people))
            let over = interaction.jsonLine.utf8.count - length
            people[0].displayName = String(repeating: "n", count: 4_000 - over)
            interaction.intent.recipients = people
            return interaction.jsonLine
        }
        let atTheLimit = written(limit)
        #expect(atTheLimit.utf8.count == limit)
        #expect((try? read(atTheLimit).get())?.conversationIdentifier == "c")
        guard case .failure(let refused) = read(written(limit + 1)) else {
            Issue.record("a donation a byte over the limit was read")
            return
        }
        #expect(
            refused.field == nil
                && refused.message == "is \(limit + 1) bytes of JSON as export writes it, more than the 1 MiB a donation "
                + "may take; give a large group's speakableGroupName and a part of its members", "\(refused)")
        // A donation without an identifier counts the one a store gives it (a probe's was exported 52 bytes over).
        guard case .failure(let unnamed) = read(written(limit, identifier: nil)) else {
            Issue.record("a donation without an identifier, at the limit without it, was read")
            return
        }
        #expect(unnamed.message.hasPrefix("is \(limit + 52) bytes of JSON as export writes it"), "\(unnamed)")
        // What is not written does not count: a line of 2 MiB, most of it an unknown member, is read.
        let padded = #"{"x":""# + String(repeating: "y", count: 2 << 20) + #"","date":1796342400,"intent":{"conversationIdentifier":"c"}}"#
        #expect((try? read(padded).get())?.conversationIdentifier == "c")
        // What is written counts: handles without a type, under the limit as read, over it as written (export
        // wrote a line that import refused).
        let handles = (0..<1_024).map { #"{"displayName":"\#(String(repeating: "d", count: 960))","personHandle":{"value":"h\#($0)"}}"# }
        let typeless = #"{"date":1796342400,"intent":{"conversationIdentifier":"c","recipients":["# + handles.joined(separator: ",") + "]}}"
        #expect(typeless.utf8.count <= limit)
        guard case .failure(let grown) = read(typeless) else {
            Issue.record("a donation over the limit as written was read")
            return
        }
        #expect(grown.message.contains("bytes of JSON as export writes it"), "\(grown)")
        // Too long to be read at all.
        let huge = #"{"x":""# + String(repeating: "y", count: 5 << 20) + #""}"#
        guard case .failure(let unread) = read(huge) else {
            Issue.record("a 5 MiB text was read")
            return
        }
        #expect(unread.message.hasPrefix("is \(huge.utf8.count) bytes of JSON, more than a donation may take"), "\(unread)")
        // One field too long is as likely as a large group: the message names both (it spoke of groups alone).
        #expect(unread.message.contains("a name or identifier takes at most 4096 bytes"), "\(unread)")
        let person = #"{"customIdentifier":"\#(String(repeating: "p", count: 4000))","displayName":"\#(String(repeating: "n", count: 4000))"}"#
        let crowd = #"{"date":1796342400,"intent":{"conversationIdentifier":"c","recipients":["#
            + Array(repeating: person, count: 1024).joined(separator: ",") + "]}}"
        #expect(throws: InputError.self) { try read(crowd).get() }
        guard case .failure(let short) = read(#"{"intent":{"conversationIdentifier":"c"}}"#) else {
            Issue.record("a short line without a date was read")
            return
        }
        #expect(short.field == "date", "\(short)")
    }

    /// A donation carries at most `Interaction.maximumContentTypes` distinct content types, on both paths, and
    /// reading a long list costs its length, not its square (a million distinct types kept `donate` busy for hours).
    @Test func contentTypesAreBoundedAndReadInLinearTime() throws {
        func line(_ types: [String]) -> String {
            #"{"date":0,"intent":{"conversationIdentifier":"c","contentTypes":["#
                + types.map { "\"\($0)\"" }.joined(separator: ",") + "]}}"
        }
        #expect(agree(line((0..<Interaction.maximumContentTypes).map { "public.t\($0)" })))
        let over = line((0..<20_000).map { "public.t\($0)" })
        #expect(direct(over) == nil)
        let refused = try #require(throws: InputError.self) { try Interaction(jsonBytes: over) }
        #expect(refused.field == "intent.contentTypes")
        #expect(refused.message == "names 20000 distinct content types, more than the 100 a donation may carry")
        // Repeats of one type are one type.
        let repeated = line(Array(repeating: "public.jpeg", count: 60_000))
        #expect(direct(repeated)?.intent.contentTypes == ["public.jpeg"])
        #expect(tree(repeated)?.intent.contentTypes == ["public.jpeg"])
        // Two spellings of one type (composed, decomposed) are two types, as the stores keep them, on both paths.
        let spellings = line(["org.caf\u{E9}", "org.cafe\u{301}"])
        #expect(direct(spellings)?.intent.contentTypes.count == 2 && tree(spellings)?.intent.contentTypes.count == 2)
    }

    /// A query's limit of distinct content types counts spellings by their bytes, as its kinds are: 5,040 orders
    /// of seven combining marks on one type passed as one type and were ranked as 5,040 kinds (a review).
    @Test func aQueryCountsItsContentTypesByTheirBytes() {
        // Marks of distinct combining classes: any order of them is canonically the same string.
        let marks = ["\u{301}", "\u{323}", "\u{327}", "\u{31B}", "\u{334}", "\u{345}", "\u{5B0}"]
        let types = (0...RankingContext.Limits.contentTypes).map { index in
            // The index-th order of the marks (its digits in the factorial base).
            var left = marks
            var rest = index
            var order = ""
            for base in stride(from: marks.count, to: 0, by: -1) {
                order += left.remove(at: rest % base)
                rest /= base
            }
            return "org.x" + order
        }
        #expect(Set(types).count == 1 && Set(types.map { Array($0.utf8) }).count == types.count)
        #expect(throws: InputError.self) { try RankingContext(at: .now(), contentTypes: types).validate() }
    }

    @Test func refusesWhatTheTreePathRefuses() {
        let bad = [
            #"{"date":0}"#, #"{"intent":{"conversationIdentifier":"c"}}"#,
            #"{"date":0,"intent":{"conversationIdentifier":""}}"#,
            #"{"date":0,"identifier":"","intent":{"conversationIdentifier":"c"}}"#,
            #"{"account":"","date":0,"intent":{"conversationIdentifier":"c"}}"#,
            #"{"date":"yesterday","intent":{"conversationIdentifier":"c"}}"#,
            #"{"date":1e300,"intent":{"conversationIdentifier":"c"}}"#,
            #"{"date":0,"intent":{"conversationIdentifier":"c","contentTypes":[""]}}"#,
            #"{"date":0,"intent":{"conversationIdentifier":"c","recipients":[null]}}"#,
            #"{"date":0,"intent":{"conversationIdentifier":"c","content":5}}"#,
            #"{"date":0,"intent":{"conversationIdentifier":"c\u0000"}}"#,
            #"{"date":0,"intent":{"conversationIdentifier":"c"}} x"#,
            #"{"date":0,"intent":{"conversationIdentifier":"c"},}"#,
            #"{"date":0,"x":"\#u{1}","intent":{"conversationIdentifier":"c"}}"#,
            #"{"date":0,"intent":{"conversationIdentifier":"c","recipients":[{"personHandle":{"type":"fax"}}]}}"#,
            "{\"date\":0,\"intent\":{\"conversationIdentifier\":\"" + String(repeating: "x", count: 4097) + "\"}}",
            // A date is a string too: a fraction of 5,000 digits was accepted (found by a newcomer sweep).
            "{\"date\":\"2026-11-29T18:03:00." + String(repeating: "1", count: 5_000) + "Z\",\"intent\":{\"conversationIdentifier\":\"c\"}}",
            "{\"date\":0,\"x\":" + String(repeating: "[", count: 70) + String(repeating: "]", count: 70)
                + ",\"intent\":{\"conversationIdentifier\":\"c\"}}",
        ]
        for line in bad {
            #expect(tree(line) == nil, "the tree path should refuse \(line)")
            #expect(direct(line) == nil, "the decoder accepted \(line)")
        }
    }

    @Test func invalidUTF8IsRefused() {
        var bytes = Array(#"{"date":0,"intent":{"conversationIdentifier":"cX"}}"#.utf8)
        bytes[bytes.firstIndex(of: UInt8(ascii: "X"))!] = 0xC3
        let decoded = bytes.withUnsafeBufferPointer { InteractionDecoder.decode($0, defaultAccount: "d") }
        #expect(decoded == nil)
    }

    /// `text` with one to three bytes removed, inserted or replaced, from an alphabet of JSON's own characters.
    private static func edited(_ text: String, using random: inout SeededRandom) -> [UInt8] {
        let alphabet = Array(#"{}[]:,"\ 0123456789.eE-+abcnultrfsé"#.utf8)
        var bytes = Array(text.utf8)
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let position = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes.remove(at: position)
            case 1: bytes.insert(alphabet.randomElement(using: &random)!, at: position)
            default: bytes[position] = alphabet.randomElement(using: &random)!
            }
        }
        return bytes
    }

    /// Random edits of `text`, `rounds` of them: whatever `fast` accepts, `tree` reads the same from the parsed
    /// value; `check` sees every edit with the tree's answer. Returns how many edits `fast` accepted.
    private static func editsAgree<Value: Equatable>(
        _ text: String, seed: UInt64, rounds: Int, tree: (JSONValue) -> Value?,
        fast: (UnsafeBufferPointer<UInt8>) -> Value?, check: ([UInt8], Value?) -> Void = { _, _ in }
    ) -> Int {
        var random = SeededRandom(seed: seed)
        var accepted = 0
        for round in 0..<rounds {
            let bytes = edited(text, using: &random)
            let treeResult: Value? = bytes.withUnsafeBufferPointer { buffer in
                guard let json = try? JSONParser.parse(bytes: buffer) else { return nil }
                return tree(json)
            }
            if let fastResult = bytes.withUnsafeBufferPointer(fast) {
                accepted += 1
                #expect(fastResult == treeResult, "round \(round): \(String(decoding: bytes, as: UTF8.self))")
            }
            check(bytes, treeResult)
        }
        return accepted
    }

    /// Random edits of valid lines: whatever the decoder accepts, the tree path reads the same.
    @Test func mutatedLinesAgreeWithTheTreePath() {
        let accepted = Self.editsAgree(
            Self.full, seed: 6, rounds: 20_000, tree: { try? Interaction(json: $0, defaultAccount: "fallback") },
            fast: { InteractionDecoder.decode($0, defaultAccount: "fallback") })
        // Most single edits inside string values leave a valid line: the fast path must have read many of them.
        #expect(accepted > 2_000)
    }

    /// The intent of `full`, as an object of its own (the form the store keeps).
    static let fullIntent = #"""
        {"conversationIdentifier":"c-1","speakableGroupName":"Crew","serviceName":"chat","image":"crew.png","content":"hi","contentTypes":["public.jpeg","public.url","public.jpeg"],"sender":{"customIdentifier":"me","isMe":true},"recipients":[{"customIdentifier":"p-1","displayName":"Ana","personHandle":{"value":"ana@example.com","type":"emailAddress"},"contactIdentifier":"C1","image":"ana.png","isMe":false},{"customIdentifier":"p-2","personHandle":{"value":"+15550100"}}]}
        """#

    @Test func readsAStoredIntentDirectly() throws {
        let intent = try #require(direct(Self.full)?.intent)
        var writer = JSONWriter()
        intent.write(to: &writer)
        let stored = writer.text
        let fast = stored.utf8.withContiguousStorageIfAvailable { InteractionDecoder.decodeIntent($0) }
        #expect(fast == intent, "the fast path should read what the store writes: \(stored)")
        #expect(Self.fullIntent.utf8.withContiguousStorageIfAvailable { InteractionDecoder.decodeIntent($0) } == intent)
        // Through the public entry point, a damaged object is the tree path's error, word for word.
        for damaged in [#"{"conversationIdentifier":""}"#, #"{"conversationIdentifier":"c","recipients":[1]}"#, "{"] {
            #expect(Self.publicEntry(damaged) == Self.treeEntry(damaged), "\(damaged)")
            guard case .failure(let error) = Self.publicEntry(damaged) else {
                Issue.record("accepted \(damaged)")
                continue
            }
            #expect(error.field?.hasPrefix("intent") == true, "\(error)")
        }
    }

    /// `SendMessageIntent(jsonBytes:path:)` on `text`: the intent or its error.
    private static func publicEntry(_ text: String) -> Result<SendMessageIntent, InputError> {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            do throws(InputError) {
                return .success(try SendMessageIntent(jsonBytes: bytes, path: "intent"))
            } catch { return .failure(error) }
        }
    }

    /// The tree path on `text`, with a syntax error worded as the public entry words it.
    private static func treeEntry(_ text: String) -> Result<SendMessageIntent, InputError> {
        let json: JSONValue
        do {
            json = try JSONParser.parse(text)
        } catch {
            return .failure(InputError(field: "intent", message: "invalid JSON: \(error)"))
        }
        do throws(InputError) {
            return .success(try SendMessageIntent(json: json, path: "intent"))
        } catch { return .failure(error) }
    }

    /// Random edits of an intent object: whatever the decoder accepts, the tree path reads the same.
    @Test func mutatedIntentsAgreeWithTheTreePath() {
        let accepted = Self.editsAgree(
            Self.fullIntent, seed: 7, rounds: 10_000, tree: { try? SendMessageIntent(json: $0, path: "intent") },
            fast: { InteractionDecoder.decodeIntent($0) }
        ) { bytes, treeResult in
            // The public entry point, fast path or fallback, always gives the tree path's answer.
            let entry = bytes.withUnsafeBufferPointer { try? SendMessageIntent(jsonBytes: $0, path: "intent") }
            #expect(entry == treeResult, "\(String(decoding: bytes, as: UTF8.self))")
        }
        #expect(accepted > 1_000)
    }
}

extension Interaction {
    fileprivate init(jsonBytes line: String) throws(InputError) {
        var copy = line
        let result: Result<Interaction, InputError> = copy.withUTF8 { buffer in
            do throws(InputError) {
                return .success(try Interaction(jsonBytes: buffer, defaultAccount: "fallback"))
            } catch { return .failure(error) }
        }
        self = try result.get()
    }
}

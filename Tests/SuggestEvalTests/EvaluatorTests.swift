#if canImport(Glibc)
    import Glibc
#endif
import SuggestCore
import SuggestEval
import SuggestTestSupport
import Testing

@Suite struct EvaluatorTests {
    static func donation(
        _ account: String, _ conversation: String, _ seconds: Double, _ direction: InteractionDirection,
        id: String? = nil
    ) -> Interaction {
        Interaction(
            account: account, identifier: id, date: Timestamp(seconds: seconds), direction: direction,
            intent: SendMessageIntent(conversationIdentifier: conversation))
    }

    @Test func newConversationsAreNotEvaluatedAndAccountsDoNotMix() throws {
        let evaluator = try Evaluator(policy: .recency)
        #expect(try evaluator.consume(Self.donation("a", "x", 10, .outgoing)) == .new)
        #expect(try evaluator.consume(Self.donation("b", "x", 20, .incoming)) == .applied)
        #expect(try evaluator.consume(Self.donation("a", "y", 30, .incoming)) == .applied)
        // In account a: y (30) is more recent than x (10).
        #expect(try evaluator.consume(Self.donation("a", "x", 40, .outgoing)) == .ranked(rank: 2, covered: true))
        // In account b: x is the only conversation.
        #expect(try evaluator.consume(Self.donation("b", "x", 50, .outgoing)) == .ranked(rank: 1, covered: true))
        let result = evaluator.result
        #expect(result.donations == 5 && result.outgoing == 3 && result.evaluated == 2 && result.new == 1)
        #expect(result.accounts == 2)
        #expect(result.hitAt(1) == 0.5)
        #expect(result.mrr == 0.75)
    }

    /// Canonically equivalent spellings ("é" precomposed, and "e" with a combining accent) are two conversations
    /// and two accounts, as in every store: a `String` key merged them in the replay, for every policy.
    @Test(arguments: ["default", "recency", "tdlib"])
    func equivalentSpellingsStayApart(policy: String) throws {
        let evaluator = try Evaluator(policy: try RankingPolicy.named(policy))
        #expect(try evaluator.consume(Self.donation("a", "caf\u{E9}", 10, .outgoing)) == .new)
        #expect(try evaluator.consume(Self.donation("a", "cafe\u{301}", 20, .outgoing)) == .new)
        #expect(try evaluator.consume(Self.donation("a\u{E9}", "x", 30, .outgoing)) == .new)
        #expect(try evaluator.consume(Self.donation("ae\u{301}", "x", 40, .outgoing)) == .new)
        #expect(evaluator.result.accounts == 3)
    }

    @Test func tiesFallBackToRecencyThenIdentifierBytes() throws {
        // frequency: every conversation has one outgoing donation; "b" and "B" tie on the date too.
        let evaluator = try Evaluator(policy: .frequency)
        for (conversation, date) in [("b", 10.0), ("B", 10), ("a", 5), ("target", 1)] {
            try evaluator.consume(Self.donation("me", conversation, date, .outgoing))
        }
        // Before "target": B and b (date 10; "B" < "b" byte-wise) and a (date 5).
        #expect(try evaluator.consume(Self.donation("me", "target", 20, .outgoing)) == .ranked(rank: 4, covered: true))
        #expect(try evaluator.consume(Self.donation("me", "b", 21, .outgoing)) == .ranked(rank: 3, covered: true))
    }

    /// A file's dates are taken as a store records them, to the microsecond: two donations a tenth of a
    /// microsecond apart tie, and the tie is broken by identifier as `list` breaks it on the store the file was
    /// imported into (the replay took the later one first, a probe).
    @Test func datesAreTakenAsAStoreRecordsThem() throws {
        let directory = try TemporaryDirectory("eval-precision")
        let path = directory.path + "/ties.jsonl"
        try writeFile(
            path,
            """
            {"date":"2026-12-01T00:00:00.0000004Z","direction":"incoming","intent":{"conversationIdentifier":"b"}}
            {"date":"2026-12-01T00:00:00.0000001Z","direction":"incoming","intent":{"conversationIdentifier":"a"}}
            {"date":"2026-12-01T00:01:00Z","direction":"outgoing","intent":{"conversationIdentifier":"b"}}

            """)
        let evaluator = try Evaluator(policy: .recency)
        try evaluator.consumeJSONLines(from: .file(path))
        #expect(evaluator.result.evaluated == 1 && evaluator.result.mrr == 0.5)
    }

    @Test func repeatedIdentifiersAreSkippedPerAccount() throws {
        let evaluator = try Evaluator(policy: .default)
        #expect(try evaluator.consume(Self.donation("a", "x", 1, .outgoing, id: "d1")) == .new)
        #expect(try evaluator.consume(Self.donation("a", "x", 2, .outgoing, id: "d1")) == .duplicate)
        #expect(try evaluator.consume(Self.donation("b", "x", 2, .outgoing, id: "d1")) == .new)
        #expect(evaluator.result.duplicates == 1)
        #expect(evaluator.result.donations == 2)
    }

    @Test func outgoingOnlyPoliciesHaveNoEvidenceForIncomingOnlyConversations() throws {
        let evaluator = try Evaluator(policy: .tdlib)
        try evaluator.consume(Self.donation("a", "x", 1, .incoming))
        #expect(try evaluator.consume(Self.donation("a", "x", 2, .outgoing)) == .ranked(rank: 1, covered: false))
        #expect(evaluator.result.coverage == 0)
    }

    @Test(arguments: [[Int](), [0], [3, -1]])
    func invalidCutoffsAreRefused(cutoffs: [Int]) {
        #expect(throws: InputError.self) { try Evaluator(policy: .default, cutoffs: cutoffs) }
    }

    @Test func cutoffsParse() throws {
        #expect(try Evaluator.parseCutoffs("8,1,3,3") == [1, 3, 8])
        #expect(try Evaluator.parseCutoffs("1, 5") == [1, 5])
        #expect(throws: InputError.self) { try Evaluator.parseCutoffs("1,,3") }
        // At most 20 distinct: each is a column of every account's sums.
        let twenty = (1...20).map(String.init).joined(separator: ",")
        #expect(try Evaluator.parseCutoffs(twenty + ",20,1").count == 20)
        #expect(throws: InputError.self) { try Evaluator.parseCutoffs(twenty + ",21") }
        #expect(throws: InputError.self) { try Evaluator.parseCutoffs("top") }
    }

    @Test func badLinesNameTheirLineNumber() throws {
        let good = Self.donation("a", "x", 1, .outgoing).jsonLine
        let cases: [(String, Int, String)] = [
            ("\(good)\n{\"date\": 5}\n", 2, "line 2: intent: is required"),
            ("\(good)\n\n   \n{oops\n", 4, "line 4: invalid JSON"),
            ("\(good)\n\(good.replacingOccurrences("outgoing", "sideways"))\n", 2, "line 2: direction: unknown"),
        ]
        for (text, line, prefix) in cases {
            let evaluator = try Evaluator(policy: .default)
            expectError {
                try evaluator.consumeJSONLines(from: .text(text))
            } where: { error in
                guard let error = error as? InputError else { return false }
                return error.line == line && error.description.hasPrefix(prefix)
            }
        }
    }

    @Test func readsFilesLongerThanOneChunkAndLinesAcrossChunks() throws {
        // About 2.5 MiB: several reads of 1 MiB, so lines span the chunk boundaries.
        var text = ""
        var expected: [Interaction] = []
        for index in 0..<12_000 {
            let donation = Interaction(
                account: "a", identifier: "d\(index)", date: Timestamp(seconds: Double(index)),
                direction: index % 3 == 0 ? .incoming : .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: "c\(index % 17)", speakableGroupName: String(repeating: "n", count: index % 300)))
            expected.append(donation)
            text += donation.jsonLine + (index % 2 == 0 ? "\n" : "\r\n")
        }
        let path = try TemporaryFile.create(text)
        defer { unlink(path) }
        let fromFile = try #require(
            try Evaluator.evaluate(.file(path), policies: [.default, .android]) as [EvalResult]?)
        let fromMemory = try Evaluator.evaluate(expected, policies: [.default, .android])
        #expect(fromFile == fromMemory)
        #expect(fromFile[0].donations == 12_000)
        #expect(try Evaluator.evaluate(jsonLinesAt: path, policy: .default) == fromMemory[0])
        // The path `suggest eval` takes: parsing on a second thread must not change a figure.
        #expect(try Evaluator.evaluatePipelined(.file(path), policies: [.default, .android]) == fromMemory)
    }

    @Test func pipelinedReplayStopsAtTheFirstInvalidLine() throws {
        let good = Interaction(
            identifier: "a", date: Timestamp(seconds: 0), direction: .outgoing,
            intent: SendMessageIntent(conversationIdentifier: "c")
        ).jsonLine
        let path = try TemporaryFile.create(good + "\n{oops\n")
        defer { unlink(path) }
        expectError {
            try Evaluator.evaluatePipelined(.file(path), policies: [.default])
        } where: { error in
            (error as? InputError)?.line == 2
        }
    }

    @Test func missingFileIsAFileError() {
        expectError {
            try Evaluator.evaluate(jsonLinesAt: "/nonexistent/donations.jsonl", policy: .default)
        } where: { error in
            (error as? FileError)?.description.hasPrefix("cannot open /nonexistent/donations.jsonl: ") == true
        }
    }
}

extension String {
    /// Every `target` replaced by `replacement`, without Foundation.
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}

/// Files under /tmp for tests, each with a unique name.
enum TemporaryFile {
    struct Failure: Error {}

    /// Creates a file holding `text` and returns its path.
    static func create(_ text: String) throws -> String {
        var template = Array("/tmp/suggest-eval-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemp(base)
        }
        guard descriptor >= 0 else { throw Failure() }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else { throw Failure() }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

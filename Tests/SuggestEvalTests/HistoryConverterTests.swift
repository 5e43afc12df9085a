import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestEval

@Suite struct HistoryConverterTests {
    static func convertCollegeMsg(_ text: String) throws -> [Interaction] {
        var donations: [Interaction] = []
        try HistoryConverter.collegeMsg(.text(text)) { donations.append($0) }
        return donations
    }

    @Test func collegeMsgGivesBothSides() throws {
        let donations = try Self.convertCollegeMsg("1 2 1082040961\n3 4 1082155839\n")
        #expect(donations.count == 4)
        let outgoing = donations[0]
        #expect(outgoing.account == "u1")
        #expect(outgoing.direction == .outgoing)
        #expect(outgoing.conversationIdentifier == "u2")
        #expect(outgoing.date == Timestamp(seconds: 1_082_040_961))
        #expect(outgoing.identifier == "collegemsg-1-u1")
        #expect(outgoing.intent.recipients.map(\.customIdentifier) == ["u2"])
        #expect(outgoing.intent.sender?.isMe == true)
        let incoming = donations[1]
        #expect(incoming.account == "u2")
        #expect(incoming.direction == .incoming)
        #expect(incoming.conversationIdentifier == "u1")
        #expect(incoming.identifier == "collegemsg-1-u2")
        #expect(incoming.intent.sender?.customIdentifier == "u1")
        #expect(!incoming.intent.isGroup)
        #expect(donations[2].identifier == "collegemsg-2-u3")
    }

    @Test func collegeMsgKeepsDuplicatesWithTheirOwnIdentifiers() throws {
        let donations = try Self.convertCollegeMsg("5 6 100\n5 6 100\n")
        #expect(donations.count == 4)
        let identifiers = Set(donations.map { "\($0.account)/\($0.identifier ?? "")" })
        #expect(identifiers.count == 4)
        let result = try #require(try Evaluator.evaluate(donations, policies: [.recency]).first)
        #expect(result.donations == 4)
        #expect(result.duplicates == 0)
        #expect(result.evaluated == 1)
        #expect(result.new == 1)
    }

    /// A file cut short in its last line may still parse: "933 1214 1" of "933 1214 1082040961" was a message dated
    /// 1970 (found by a probe). The published histories end every line with a break; one without is refused.
    @Test func aLastLineWithoutABreakIsACutShortFile() throws {
        expectError {
            try Self.convertCollegeMsg("1 2 1082040961\n933 1214 1")
        } where: { error in
            "\(error)".contains("its last line (2) has no line break: the file looks cut short")
        }
    }

    @Test func collegeMsgToleratesTabsCommentsBlankLinesAndCRLF() throws {
        let donations = try Self.convertCollegeMsg("# SRC DST UNIXTS\r\n\r\n7\t8\t1.5\r\n  9   10   20\n")
        #expect(donations.map(\.account) == ["u7", "u8", "u9", "u10"])
        #expect(donations[0].date == Timestamp(seconds: 1.5))
        #expect(donations[2].identifier == "collegemsg-4-u9")
    }

    @Test(arguments: [
        ("1 2\n", 1, "expected 3 fields"),
        ("1 2 3\nx 2 3\n", 2, "SRC \"x\" is not a whole number"),
        ("1 -2 3\n", 1, "DST \"-2\" is not a whole number"),
        ("1 2 3\n\n1 2 soon\n", 3, "UNIXTS \"soon\" is not a Unix time"),
        // What `Double` reads and SNAP's decimal seconds never hold.
        ("1 2 0x10\n", 1, "UNIXTS \"0x10\" is not a Unix time"),
        ("1 2 1e9\n", 1, "UNIXTS \"1e9\" is not a Unix time"),
        ("1 2 inf\n", 1, "UNIXTS \"inf\" is not a Unix time"),
        ("1 2 5.\n", 1, "UNIXTS \"5.\" is not a Unix time"),
        ("1 2 3 4\n", 1, "found 4"),
    ])
    func collegeMsgErrorsNameTheLine(text: String, line: Int, message: String) {
        expectError {
            try Self.convertCollegeMsg(text)
        } where: { error in
            guard let error = error as? ConversionError else { return false }
            return error.line == line && error.message.contains(message) && error.description.hasPrefix("text, line \(line): ")
        }
    }

    static let messages = """
        1\ttaylor-m/sent/11\t910930020\tCd$ CME letter\t138
        2\ttaylor-m/sent/17\t911459940\tIndemnification\t138
        3\ta/b\t911459999\tsubject\twith a tab\t109
        4\ta/c\t911460000\tnobody\t5

        """
    static let recipients = "1\t1\t59\n2\t1\t15\n2\t2\t109\n2\t3\t15\n3\t1\t138\n4\t1\t5\n"
    static let employees = "15\tAna Ñúñez\tLegal\tx\ty\tFemale\tSenior\n59\tBob\tOther\n109\tCy\tTrading\n138\tDee\tLegal\n"

    static func convertEnron(employees: String? = HistoryConverterTests.employees) throws -> (
        [Interaction], HistoryConverter.Summary
    ) {
        var donations: [Interaction] = []
        let summary = try HistoryConverter.enron(
            messages: .text(messages), recipients: .text(recipients), employees: employees.map { .text($0) }
        ) { donations.append($0) }
        return (donations, summary)
    }

    @Test func enronGroupsFromBothSides() throws {
        let (donations, summary) = try Self.convertEnron()
        #expect(summary == HistoryConverter.Summary(messages: 4, donations: 7, skipped: 1))
        // Message 1: 138 → 59, a person.
        #expect(donations[0].account == "u138")
        #expect(donations[0].conversationIdentifier == "u59")
        #expect(donations[0].intent.recipients.map(\.displayName) == ["Bob"])
        #expect(donations[1].account == "u59")
        #expect(donations[1].conversationIdentifier == "u138")
        #expect(donations[1].intent.sender?.displayName == "Dee")
        // Message 2: 138 → {15, 109} (15 listed twice): a group, seen from each side.
        let sent = donations[2]
        #expect(sent.account == "u138")
        #expect(sent.direction == .outgoing)
        #expect(sent.conversationIdentifier == "g15-109")
        #expect(sent.intent.speakableGroupName == "Ana Ñúñez and Cy")
        #expect(sent.intent.isGroup)
        #expect(sent.identifier == "enron-2-u138")
        let fifteen = donations[3]
        #expect(fifteen.account == "u15")
        #expect(fifteen.direction == .incoming)
        #expect(fifteen.conversationIdentifier == "g109-138")
        #expect(fifteen.intent.speakableGroupName == "Cy and Dee")
        #expect(fifteen.intent.recipients.map(\.customIdentifier) == ["u109", "u138"])
        let oneOhNine = donations[4]
        #expect(oneOhNine.account == "u109")
        #expect(oneOhNine.conversationIdentifier == "g15-138")
        // Message 3: a subject holding a tab; the sender is the last field.
        #expect(donations[5].account == "u109")
        #expect(donations[5].conversationIdentifier == "u138")
        #expect(donations[6].account == "u138")
        // Message 4 was sent to its own sender only: skipped.
        #expect(!donations.contains { $0.account == "u5" })
    }

    /// What `convert` writes, `import` reads back: a message to more people than a donation may name is skipped and
    /// counted (its 1,025 sides of 1,024 people each would be refused, and grow with the square of its size), and a
    /// group whose joined ids would pass 4,096 bytes is named by their hash.
    @Test func enronBroadcastsAndVeryLargeGroupsStayImportable() throws {
        // Message 1: to 1,100 people (a broadcast); message 2: to 800 people with six-digit ids (5,600 bytes joined).
        let broadcast = (0..<1100).map { "1\t\($0)\t\(200_000 + $0)" }
        let large = (0..<800).map { "2\t\($0)\t\(100_000 + $0)" }
        var donations: [Interaction] = []
        let summary = try HistoryConverter.enron(
            messages: .text("1\ta/1\t911459940\tall hands\t7\n2\ta/2\t911459999\tproject\t7\n"),
            recipients: .text((broadcast + large).joined(separator: "\n") + "\n"), employees: nil
        ) { donations.append($0) }
        #expect(summary == HistoryConverter.Summary(messages: 2, donations: 801, skipped: 0, broadcasts: 1))
        let sent = try #require(donations.first)
        #expect(sent.account == "u7")
        #expect(sent.conversationIdentifier.hasPrefix("gh") && sent.conversationIdentifier.utf8.count == 18)
        #expect(sent.intent.recipients.count == 800)
        // Each side names its group by its own members' hash; every donation reads back as it was written.
        #expect(Set(donations.map(\.conversationIdentifier)).count == 801)
        for donation in donations {
            var line = donation.jsonLine
            let read = try line.withUTF8 { bytes throws(InputError) in try Interaction(jsonBytes: bytes) }
            #expect(read.conversationIdentifier == donation.conversationIdentifier)
            #expect(read.intent.recipients.count == donation.intent.recipients.count)
        }
    }

    @Test func enronWithoutNamesUsesIdentifiers() throws {
        let (donations, _) = try Self.convertEnron(employees: nil)
        #expect(donations[2].intent.speakableGroupName == "u15 and u109")
        #expect(donations[0].intent.recipients.first?.displayName == nil)
    }

    /// What the converter writes, `import` takes: a name with a NUL was written, and refused by `eval` and
    /// `import`; a name in Latin-1 became "J\u{FFFD}hn".
    @Test func enronNamesAreImportableAndLatin1IsRead() throws {
        let directory = try TemporaryDirectory("enron-names")
        let path = directory.path + "/employees.txt"
        try writeFile(path, Array("15\tA\u{0}B\tx\n109\tJ".utf8) + [0xF6] + Array("hn\tx\n".utf8))
        var donations: [Interaction] = []
        _ = try HistoryConverter.enron(
            messages: .text(Self.messages), recipients: .text(Self.recipients), employees: .file(path)
        ) { donations.append($0) }
        let names = Set(donations.flatMap { $0.intent.recipients.compactMap(\.displayName) })
        #expect(names == ["J\u{F6}hn"], "\(names)")
        for donation in donations { #expect(throws: Never.self) { try donation.validated() } }
    }

    @Test func enronKeepsNoSubject() throws {
        let (donations, _) = try Self.convertEnron()
        for donation in donations {
            #expect(!donation.jsonLine.contains("Indemnification"))
            #expect(!donation.jsonLine.contains("CME"))
        }
    }

    @Test func groupNamesShortenLongLists() {
        #expect(HistoryConverter.groupName(["A", "B"]) == "A and B")
        #expect(HistoryConverter.groupName(["A", "B", "C"]) == "A, B and C")
        #expect(HistoryConverter.groupName(["A", "B", "C", "D", "E"]) == "A, B, C and 2 others")
    }

    @Test func enronErrorsNameFileAndLine() {
        expectError {
            try HistoryConverter.enron(
                messages: .text("1\tf\t5\ts\t2\n2\tf\tlater\ts\t3\n"), recipients: .text("1\t1\t3\n"), employees: nil
            ) { _ in }
        } where: { error in
            (error as? ConversionError)?.description == "text, line 2: unix_time \"later\" is not a Unix time"
        }
        expectError {
            try HistoryConverter.enron(messages: .text(""), recipients: .text("1\t1\n"), employees: nil) { _ in }
        } where: { error in
            (error as? ConversionError)?.line == 1
        }
        // A message listed again was written again, each time every recipient's copy naming all the others: 200
        // lines of one message to 1,024 people wrote 10 GB. Refused at the second listing, before anything of it.
        var written = 0
        expectError {
            try HistoryConverter.enron(
                messages: .text("1\tf\t5\ts\t2\n1\tf\t6\ts\t2\n"), recipients: .text("1\t1\t3\n"), employees: nil
            ) { _ in written += 1 }
        } where: { error in
            (error as? ConversionError)?.description
                == "text, line 2: message_id 1 is listed again (first on line 1); list each message once"
        }
        #expect(written == 2)
    }

    @Test func missingFileIsAFileError() {
        expectError {
            try HistoryConverter.enron(directory: "/nonexistent/enron") { _ in }
        } where: { error in
            guard let error = error as? FileError else { return false }
            return error.path == "/nonexistent/enron/messages.tsv" || error.path == "/nonexistent/enron/recipients.tsv"
        }
    }

    @Test func convertedDonationsRoundTripThroughJSONLines() throws {
        let (donations, _) = try Self.convertEnron()
        let text = donations.map(\.jsonLine).joined(separator: "\n")
        var read: [Interaction] = []
        try LineReader.forEachLine(in: .text(text)) { bytes, line in
            if let interaction = try Evaluator.interaction(jsonLine: bytes, line: line) { read.append(interaction) }
        }
        #expect(read == donations)
    }
}

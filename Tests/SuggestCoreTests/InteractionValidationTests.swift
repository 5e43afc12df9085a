import Testing

@testable import SuggestCore

@Suite struct InteractionValidationTests {
    func parse(_ text: String) throws -> Interaction { try Interaction(json: try JSONParser.parse(text)) }

    @Test func readsTheContractExample() throws {
        let interaction = try parse(
            #"""
            {"account": "default", "identifier": "d-0001", "groupIdentifier": "thread-42",
             "date": "2026-11-29T18:03:00Z", "direction": "outgoing",
             "intent": {"conversationIdentifier": "thread-42", "speakableGroupName": "Climbing crew",
               "serviceName": "chat.example", "sender": {"customIdentifier": "me", "displayName": "Me", "isMe": true},
               "recipients": [{"customIdentifier": "u-17", "displayName": "Juan Chavez",
                 "personHandle": {"value": "juan@example.com", "type": "emailAddress"},
                 "contactIdentifier": "C-17", "image": "avatars/juan.png"}],
               "image": "avatars/climbing.png", "contentTypes": ["public.jpeg"], "content": "text of the message"}}
            """#)
        #expect(interaction.conversationIdentifier == "thread-42")
        #expect(interaction.direction == .outgoing)
        #expect(interaction.intent.recipients.first?.personHandle?.type == .emailAddress)
        #expect(interaction.intent.contentTypes == ["public.jpeg"])
        // The message text is never kept: it is not in the model, so it cannot reach the store or an export.
        #expect(!interaction.jsonLine.contains("text of the message"))
        #expect(try parse(interaction.jsonLine) == interaction)
    }

    @Test func acceptsUnixSecondsAndDefaults() throws {
        let interaction = try parse(#"{"date": 1795975380.5, "intent": {"conversationIdentifier": "c"}}"#)
        #expect(interaction.date.seconds == 1_795_975_380.5)
        #expect(interaction.direction == .unspecified)
        #expect(interaction.account == "default")
        #expect(interaction.identifier == nil)
    }

    @Test(arguments: [
        (#"{"intent": {"conversationIdentifier": "c"}}"#, "date"),
        (#"{"date": "2026-11-29T18:03:00Z"}"#, "intent"),
        (#"{"date": "2026-11-29T18:03:00Z", "intent": {}}"#, "intent.conversationIdentifier"),
        (#"{"date": "2026-11-29T18:03:00Z", "intent": {"conversationIdentifier": ""}}"#, "intent.conversationIdentifier"),
        (#"{"date": "tomorrow", "intent": {"conversationIdentifier": "c"}}"#, "date"),
        (#"{"date": "2026-11-29T18:03:00", "intent": {"conversationIdentifier": "c"}}"#, "date"),
        (#"{"date": true, "intent": {"conversationIdentifier": "c"}}"#, "date"),
        (#"{"date": 1e300, "intent": {"conversationIdentifier": "c"}}"#, "date"),
        (#"{"date": 0, "direction": "sideways", "intent": {"conversationIdentifier": "c"}}"#, "direction"),
        (#"{"date": 0, "account": "", "intent": {"conversationIdentifier": "c"}}"#, "account"),
        (#"{"date": 0, "intent": {"conversationIdentifier": 7}}"#, "intent.conversationIdentifier"),
        (#"{"date": 0, "intent": {"conversationIdentifier": "c", "recipients": {}}}"#, "intent.recipients"),
        (
            #"{"date": 0, "intent": {"conversationIdentifier": "c", "recipients": [{"personHandle": {"type": "fax"}}]}}"#,
            "intent.recipients[0].personHandle.type"
        ),
        (#"{"date": 0, "intent": {"conversationIdentifier": "c", "contentTypes": [1]}}"#, "intent.contentTypes[0]"),
        (#"{"date": 0, "intent": {"conversationIdentifier": "c\u0000d"}}"#, "intent.conversationIdentifier"),
        (#"[1]"#, nil),
    ])
    func namesTheOffendingField(text: String, field: String?) {
        do {
            _ = try parse(text)
            Issue.record("accepted \(text)")
        } catch let error as InputError {
            #expect(error.field == field, "\(error)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// Errors the parser finds inside a value (bytes that are not UTF-8, a number out of range, a control
    /// character) name the member they are in, as the contract asks of every invalid case: they named only a byte.
    static let errorsInsideValues: [(bytes: [UInt8], field: String)] = {
        /// `before`, one byte that is not UTF-8 on its own, then `after`.
        func text(_ before: String, _ byte: UInt8, _ after: String) -> [UInt8] {
            let start: [UInt8] = Array(before.utf8)
            let end: [UInt8] = Array(after.utf8)
            return start + [byte] + end
        }
        let recipients = #"{"date": 0, "intent": {"conversationIdentifier": "c", "recipients": [{}, {"displayName": "x"#
        return [
            (text(#"{"date": 0, "intent": {"conversationIdentifier": "c"#, 0xFF, #""}}"#), "intent.conversationIdentifier"),
            (Array(#"{"date": 1e400, "intent": {"conversationIdentifier": "c"}}"#.utf8), "date"),
            (text(recipients, 0xC3, #""}]}}"#), "intent.recipients[1].displayName"),
            (text(#"{"date": 0, "intent": {"conversationIdentifier": "c"#, 0x01, #""}}"#), "intent.conversationIdentifier"),
            // In a member's name: the object holding it.
            (text(#"{"date": 0, "intent": {""#, 0xFF, #"": 1}}"#), "intent"),
            (Array(#"{"da\u0074e": 0, "x": [1, 2, -1e999]}"#.utf8), "x[2]"),
        ]
    }()

    @Test(arguments: InteractionValidationTests.errorsInsideValues)
    func anErrorInsideAValueNamesItsMember(bytes: [UInt8], field: String) {
        let named = field
        do {
            _ = try bytes.withUnsafeBufferPointer { buffer throws(InputError) in
                try Interaction(jsonBytes: buffer, defaultAccount: "default")
            }
            Issue.record("accepted \(bytes)")
        } catch {
            let prefixed = error.message.hasPrefix("invalid JSON: ")
            #expect(error.field == named, "\(error)")
            #expect(prefixed, "\(error)")
        }
    }

    @Test func refusesStringsOverTheLimit() throws {
        let long = String(repeating: "é", count: 2049)  // 4098 bytes
        let text = #"{"date": 0, "intent": {"conversationIdentifier": "c", "speakableGroupName": ""# + long + #""}}"#
        #expect(throws: InputError.self) { try parse(text) }
        let fits = String(repeating: "a", count: 4096)
        #expect(throws: Never.self) {
            try parse(#"{"date": 0, "intent": {"conversationIdentifier": ""# + fits + #""}}"#)
        }
    }

    @Test func keepsSQLLookingTextVerbatim() throws {
        let sql = "'); DROP TABLE donations; --"
        var writer = JSONWriter()
        writer.string(sql)
        let interaction = try parse(#"{"date": 0, "intent": {"conversationIdentifier": "#  + writer.text + "}}")
        #expect(interaction.conversationIdentifier == sql)
    }

    /// A date just past the 10 minutes allowed says by how much, to the millisecond rounded up: "10 minutes after"
    /// read as allowed (600.3 seconds ahead said just that).
    @Test func aDateAheadOfTheClockSaysByHowMuch() {
        let now = Timestamp(seconds: 1_800_000_000)
        for (ahead, words) in [
            (659.0, "10 minutes 59 seconds"), (601, "10 minutes 1 second"), (3_000, "50 minutes"),
            (3 * 3_600, "3 hours"), (5 * 86_400, "5 days"), (600.3, "10 minutes 0.3 seconds"),
            (600.0001, "10 minutes 0.001 seconds"), (659.9999, "11 minutes"), (601.25, "10 minutes 1.25 seconds"),
        ] {
            let interaction = Interaction(
                date: Timestamp(seconds: now.seconds + ahead), intent: SendMessageIntent(conversationIdentifier: "c"))
            #expect(throws: InputError.self) { try DonationAdmission.decide(interaction, now: now, oldestKept: nil) }
            #expect(DonationAdmission.describe(ahead) == words)
        }
    }

    /// A date outside the years 0001 to 9999 is quoted in its refusal, as an unreadable one is; a number that is a
    /// date in range as milliseconds (JavaScript's `Date.now()`) says so.
    @Test func aDateOutOfRangeIsQuoted() {
        for (date, message) in [
            (#""0000-12-31T23:59:59Z""#, #""0000-12-31T23:59:59Z" is outside the years 0001 to 9999"#),
            ("1e17", "1e+17 is outside the years 0001 to 9999"),
            // Before the year 0001: no hint (as milliseconds it was "1968-…", which no clock meant).
            ("-62135596801", "-62135596801 is outside the years 0001 to 9999"),
            (
                "1796474224000",
                "1796474224000 is outside the years 0001 to 9999; as milliseconds it would be 2026-12-05T12:37:04Z: "
                    + "give Unix seconds"
            ),
        ] {
            #expect(throws: InputError(field: "date", message: message)) {
                try parse(#"{"date": \#(date), "intent": {"conversationIdentifier": "c"}}"#)
            }
        }
    }

    /// A store's `record(_:)`, the way in for a donation built in code, holds it to the format's rules: an empty
    /// conversation identifier would leave its account unreadable, and nothing of it is recorded.
    @Test func aStoreRecordsADonationBuiltInCodeOnlyOnceItPassesTheRules() throws {
        let store = InMemoryDonationStore()
        let empty = Interaction(date: .now(), intent: SendMessageIntent(conversationIdentifier: ""))
        #expect(throws: InputError.self) { try store.record(empty) }
        var nul = empty
        nul.intent.conversationIdentifier = "c\u{0}d"
        #expect(throws: InputError.self) { try store.record(nul) }
        var recorded = 0
        try store.forEachDonation(account: Interaction.defaultAccount) { _ in recorded += 1 }
        #expect(recorded == 0)
        var valid = empty
        valid.intent.conversationIdentifier = "c"
        #expect(try store.record(valid) != .expired)
    }
}

/// Donations given in memory are checked before the store's transaction, as a file's lines are; a cancelled import
/// of 200,000 went on checking them all (seconds) before it looked at its cancellation.
@Suite struct ImportCheckingTests {
    struct Interrupted: Error {}

    @Test func checkingDonationsGivenInMemoryAsksForInterruption() throws {
        var donations = (0..<1_000).map { index in
            Interaction(
                date: Timestamp(seconds: 1_796_000_000 + Double(index)),
                intent: SendMessageIntent(conversationIdentifier: "c-\(index % 7)"))
        }
        // An invalid donation early on: met before any interruption if every donation is checked first.
        donations[10].date = Timestamp(seconds: .nan)
        var asked = 0
        #expect(throws: Interrupted.self) {
            try InMemoryDonationStore().importDonations(donations) {
                asked += 1
                throw Interrupted()
            }
        }
        #expect(asked == 1)
    }
}

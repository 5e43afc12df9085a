import SuggestCore
import SuggestTestSupport
import Testing

/// Donations from the future (issue 13, item 4): one dated more than 10 minutes after the store's clock is refused
/// and changes nothing; one dated just ahead is recorded as of the moment of recording; `share --send` records at
/// the real moment of sending whatever `--at` says. Before, a donation dated 2027 pinned itself first and put every
/// other score at 0, and `share --at 9999-12-31T23:59:59Z --pick 1 --send` recorded a donation dated 9999.
@Suite struct FutureDateTests {
    /// The export's dates, in order.
    func exportedDates(_ fixture: StoreFixture) throws -> [Timestamp] {
        try fixture.succeed(["export"]).split(separator: "\n").map { line in
            try Interaction(json: try JSONParser.parse(String(line))).date
        }
    }

    @Test(arguments: [
        "2099-06-01T00:00:00Z", "9999-12-31T23:59:59Z",
        // Unix seconds, May 2033. (Milliseconds read as seconds fall past the year 9999, refused as such.)
        "2000000000",
    ])
    func aDonationFromTheFutureIsRefusedAndChangesNothing(_ date: String) throws {
        let fixture = try StoreFixture("future")
        try fixture.succeed(["donate", "--conversation", "now"])
        let outcome = try fixture.run(["donate", "--conversation", "future", "--date", date])
        #expect(outcome.status == 64 && outcome.errorLines.count == 1, "\(outcome)")
        #expect(outcome.error.contains("after the store's clock"), "\(outcome)")
        #expect(outcome.error.contains("at most 10 minutes ahead"), "\(outcome)")
        #expect(try exportedDates(fixture).count == 1)
        // The one conversation there keeps its full score.
        #expect(try fixture.succeed(["list"]).contains("score 1 "))
    }

    @Test func anImportLineFromTheFutureIsNamedByItsNumber() throws {
        let fixture = try StoreFixture("future-import")
        try fixture.keepEverything()
        let lines = [
            #"{"account":"default","date":"2026-11-01T00:00:00Z","direction":"outgoing","intent":{"conversationIdentifier":"a"}}"#,
            #"{"account":"default","date":"2030-01-01T00:00:00Z","direction":"outgoing","intent":{"conversationIdentifier":"b"}}"#,
        ]
        let input = Array((lines.joined(separator: "\n") + "\n").utf8)
        let refused = try fixture.run(["import", "-"], input: input)
        #expect(refused.status == 64 && refused.error.contains("line 2: date: 2030-01-01T00:00:00Z"), "\(refused)")
        #expect(try exportedDates(fixture).isEmpty, "an import is all or nothing")
        let skipped = try fixture.run(["import", "-", "--skip-invalid"], input: input)
        #expect(skipped.status == 0 && skipped.output.contains("imported 1 donation"), "\(skipped)")
        #expect(try exportedDates(fixture) == [Timestamp(rfc3339: "2026-11-01T00:00:00Z")])
    }

    @Test func aDonationJustAheadIsRecordedAsOfNow() throws {
        let fixture = try StoreFixture("skew")
        let ahead = Timestamp.now().adding(300)
        try fixture.succeed(["donate", "--conversation", "skewed", "--date", ahead.rfc3339])
        let after = Timestamp.now()
        let dates = try exportedDates(fixture)
        #expect(dates.count == 1)
        #expect(dates.allSatisfy { $0 <= after }, "\(dates) recorded after \(after)")
    }

    @Test func shareSendRecordsTheRealMomentWhateverAtSays() throws {
        let fixture = try StoreFixture("share-at")
        try fixture.keepEverything()
        try fixture.succeed(["donate", "--conversation", "friend"])
        let outcome = try fixture.run([
            "share", "--attachment", "public.url=https://example.com", "--at", "9999-12-31T23:59:59Z", "--pick", "1",
            "--send",
        ])
        #expect(outcome.status == 0 && outcome.output.contains("Sent: recorded donation"), "\(outcome)")
        let after = Timestamp.now()
        let dates = try exportedDates(fixture)
        #expect(dates.count == 2)
        #expect(dates.allSatisfy { $0 <= after }, "\(dates) recorded after \(after)")
    }
}

import SuggestCore
import SuggestSQLiteStore
import SuggestTestSupport
import Testing

/// A conversation keeps at most `ContentSums.limit` content kinds besides the broad ones, the same ones in every
/// store, whether its donations came in one write or in several, and again after a deletion rebuilds it; a broad
/// kind stays whatever floods of invented types came after it (a review: a photo sent with 64 invented types, or
/// an hour before them, no longer lifted its conversation for a photo). Without the bound, one conversation
/// gathered any number of kinds (a hundred types a donation), and every donation to it rewrote every kind's keys:
/// 0.7 s a donation on SQLite at 80,000 kinds, and a Redis node blocked for 1.9 s.
@Suite struct ContentKindLimitTests {
    @Test func sqliteKeepsTheSameKindsAsTheReference() throws {
        let (sqlite, directory) = try StoreConformanceTests.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        let (reference, candidate) = try StoreConformance.keepingEverything(sqlite)
        try StoreConformance.keepsAtMostTheLimitOfKinds(reference: reference, candidate: candidate)
    }

    /// The index that apps keeping their own log rank with folds kinds as the stores do.
    @Test func theInMemoryIndexKeepsTheSameKinds() throws {
        let index = InMemoryRankingIndex()
        for donation in StoreConformance.kindLimitHistory where donation.identifier != "s" { index.apply(donation) }
        let big = try #require(index.conversation(identifiedBy: "big"))
        let held = (0..<150).filter { number in
            let candidate = index.candidate(big, contentKinds: [StoreConformance.customKind(number)])
            return candidate?.contentSums.first ?? LogSpace.zero > LogSpace.zero
        }
        #expect(Set(held) == StoreConformance.keptKinds.kept)
    }
}

extension StoreConformance {
    /// The kind named `number` of the history below: three digits, so that byte order is numeric order.
    static func customKind(_ number: Int) -> String {
        "org.example.k" + String(1000 + number).dropFirst()
    }

    /// The kinds `keepsAtMostTheLimitOfKinds` lets its conversation keep after all four donations, and after the
    /// last is deleted.
    ///
    /// Donations 0, 1 and 2 carry fifty new kinds each (0–49, 50–99, 100–149; the first a photo too), donation 3
    /// kinds 0–9 again. A later donation's kinds have the larger sums, and of equal sums the kinds first in byte
    /// order stay: after donation 1, kinds 50–99 and 0–13; after 2, 100–149 and 50–63; after 3, kinds 0–9 (new
    /// again), 100–149 and 50–53.
    static let keptKinds = (kept: Set(Array(0..<10) + Array(100..<150) + Array(50..<54)),
                            afterDeletion: Set(Array(100..<150) + Array(50..<64)))

    /// Four donations to "big" (`keptKinds`), then one to "small" of a broad kind.
    static var kindLimitHistory: [Interaction] {
        let end = StoreConformanceTests.end
        let kindsOfDonation = [Array(0..<50), Array(50..<100), Array(100..<150), Array(0..<10)]
        var donations = kindsOfDonation.enumerated().map { index, kinds in
            Interaction(
                account: "a", identifier: "d\(index)", date: end.adding(Double(100 * index - 500)),
                direction: .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: "big", recipients: [Person(customIdentifier: "u-1")],
                    contentTypes: kinds.map(customKind) + (index == 0 ? ["public.jpeg"] : [])))
        }
        donations.append(
            Interaction(
                account: "a", identifier: "s", date: end.adding(-50), direction: .outgoing,
                intent: SendMessageIntent(
                    conversationIdentifier: "small", recipients: [Person(customIdentifier: "u-2")],
                    contentTypes: ["public.jpeg"])))
        return donations
    }

    static func keepsAtMostTheLimitOfKinds(reference: some DonationStore, candidate: some DonationStore) throws {
        #expect(ContentSums.limit == 64, "the expected kinds below are worked out for 64")
        let end = StoreConformanceTests.end
        let donations = kindLimitHistory
        _ = try reference.importDonations(donations, options: ImportOptions(now: end))
        // The first two in one write (a fold past the limit in memory), the rest one by one (kinds let go of rows
        // and list entries already written).
        _ = try candidate.importDonations(Array(donations[0..<2]), options: ImportOptions(now: end))
        for donation in donations[2...] {
            _ = try candidate.importDonations([donation], options: ImportOptions(now: end))
        }

        /// The kinds whose context lifts "big" above its raw score with nothing shared, in each store, the same
        /// suggestions and explanations to the bit.
        func liftingKinds() throws -> Set<Int> {
            func bigScore(_ list: SuggestionList) -> Double? {
                list.suggestions.first { $0.conversationIdentifier == "big" }?.explanation?.logScore
            }
            let nothingShared = try reference.suggestions(account: "a", context: .init(at: end), explain: true)
            let plain = try #require(bigScore(nothingShared))
            var lifting: Set<Int> = []
            for number in 0..<150 {
                let context = RankingContext(at: end, contentTypes: [customKind(number)])
                let expected = try reference.suggestions(account: "a", context: context, explain: true)
                let actual = try candidate.suggestions(account: "a", context: context, explain: true)
                #expect(actual == expected, "\(customKind(number))")
                if try #require(bigScore(expected)) > plain { lifting.insert(number) }
            }
            // The photo of the first donation, under every flood since.
            let photo = RankingContext(at: end, contentTypes: ["public.png"])
            let photoLift = try reference.suggestions(account: "a", context: photo, explain: true)
            #expect(try candidate.suggestions(account: "a", context: photo, explain: true) == photoLift)
            #expect(try #require(bigScore(photoLift)) > plain, "the photo's kind was let go")
            return lifting
        }
        #expect(try liftingKinds() == keptKinds.kept)
        for store in [reference, candidate] as [any DonationStore] {
            #expect(try store.delete(.identifier("d3"), account: "a").donations == 1)
        }
        #expect(try liftingKinds() == keptKinds.afterDeletion)
    }
}

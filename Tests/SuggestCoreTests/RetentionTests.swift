import SuggestCore
import Testing

/// A store keeps only what it would admit: arrivals and expiry cut at the same moment, the start of a day. With a
/// cutoff to the second for arrivals, a store held the last day's hours that it refused, so its own export,
/// imported into a store with the same retention, lost them (counted "not kept", exit 0).
@Suite struct RetentionTests {
    let now = Timestamp(rfc3339: "2026-12-05T12:00:00Z")!

    @Test func theCutoffIsTheStartOfADay() {
        let retention = Retention(maximumAgeDays: 90, idleDays: 0)
        #expect(retention.oldestKept(at: now) == Timestamp(rfc3339: "2026-09-06T00:00:00Z"))
        #expect(retention.oldestKept(at: Timestamp(rfc3339: "2026-12-05T23:59:59.5Z")!)
            == Timestamp(rfc3339: "2026-09-06T00:00:00Z"))
        #expect(Retention(maximumAgeDays: 0, idleDays: 0).oldestKept(at: now) == nil)
    }

    @Test func aStoresExportImportsWholeWithTheSameRetention() throws {
        let kept = Retention(maximumAgeDays: 90, idleDays: 0)
        let donations = ["2026-09-06T06:00:00Z", "2026-09-05T23:59:59Z", "2026-12-01T12:00:00Z"].enumerated().map {
            Interaction(
                account: "a", identifier: "d\($0.offset)", date: Timestamp(rfc3339: $0.element)!, direction: .outgoing,
                intent: SendMessageIntent(conversationIdentifier: "c\($0.offset)"))
        }
        let first = InMemoryDonationStore()
        _ = try first.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: now)
        _ = try first.importDonations(donations, options: ImportOptions(now: now))
        // Expiry takes the day before the cutoff's, and keeps the hours after it.
        #expect(try first.setRetention(kept, now: now).donations == 1)
        var exported: [Interaction] = []
        try first.forEachDonation(account: "a") { exported.append($0) }
        #expect(exported.map(\.identifier) == ["d0", "d2"])
        let second = InMemoryDonationStore()
        _ = try second.setRetention(kept, now: now)
        let report = try second.importDonations(exported, options: ImportOptions(now: now))
        #expect(report.recorded == 2 && report.expired == 0)
        // One a second older than the cutoff is refused on arrival, as expiry would delete it.
        #expect(try second.record(donations[1], now: now) == .expired)
    }
}

import Dispatch
import SuggestCore
import SuggestSQLiteStore
import SuggestTestSupport
import Synchronization
import Testing

/// Every store's learned weights are a fold of the account's donations in recording order: after any deletion,
/// and after expiry, they are to the bit those of a store that was only ever given the donations that remain, and
/// expiry folds an account at most once a day. The checks are generic over a store (`LearnedWeightsCheck`); the
/// Redis store runs them in `RedisConformanceTests`.
@Suite struct LearnedWeightsConformanceTests {
    @Test(arguments: LearnedWeightsCheck.selectors)
    func sqliteDeletionLeavesTheWeightsOfTheRemainingHistory(selector: DeletionSelector) throws {
        let (store, directory) = try StoreConformanceTests.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        try LearnedWeightsCheck().deletion(selector, in: store)
    }

    @Test(arguments: LearnedWeightsCheck.selectors)
    func referenceDeletionLeavesTheWeightsOfTheRemainingHistory(selector: DeletionSelector) throws {
        try LearnedWeightsCheck().deletion(selector, in: InMemoryDonationStore())
    }

    @Test func sqliteExpiryFoldsOnceADay() throws {
        let (store, directory) = try StoreConformanceTests.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        try LearnedWeightsCheck().expiry(in: store, budget: .unbounded)
    }

    /// A server's small steps: expiry marks the weights, and the step that finishes it folds them.
    @Test func sqliteExpiryInSmallStepsFoldsWhenItIsComplete() throws {
        let (store, directory) = try StoreConformanceTests.sqliteStore()
        defer { withExtendedLifetime(directory) {} }
        try LearnedWeightsCheck().expiry(in: store, budget: MaintenanceBudget(conversations: 3))
    }

    @Test func referenceExpiryFoldsOnceADay() throws {
        try LearnedWeightsCheck().expiry(in: InMemoryDonationStore(), budget: .unbounded)
    }

    /// Two connections to one store record into one account in turn, each after the other's write: each reads the
    /// weights the other committed, so nothing learned is lost.
    @Test func twoConnectionsOfOneStoreLearnInTurn() throws {
        let directory = try TemporaryDirectory("conformance")
        let app = try SQLiteDonationStore.open(StoreLocation(directory: directory.path))
        let shareExtension = try SQLiteDonationStore.open(StoreLocation(directory: directory.path))
        try LearnedWeightsCheck().twoDonors(app, shareExtension)
    }

    /// Two processes' worth of connections (an app and its share extension) record into one account at once.
    @Test func twoConnectionsRecordingAtOnceLoseNothingLearned() throws {
        let directory = try TemporaryDirectory("conformance")
        let path = directory.path
        try LearnedWeightsCheck().concurrentDonors { try SQLiteDonationStore.open(StoreLocation(directory: path)) }
    }

    /// A store opened with fixed weights records without learning and marks the account; the next maintenance
    /// with learned weights folds it, so nothing it recorded is missing from the weights.
    @Test func aStoreWithFixedWeightsLeavesTheWeightsToBeFolded() throws {
        let directory = try TemporaryDirectory("conformance")
        let location = StoreLocation(directory: directory.path)
        let learned = try SQLiteDonationStore.open(location)
        let fixed = try SQLiteDonationStore.open(location, ranking: .fixed(LearnedPolicy.default.base))
        try LearnedWeightsCheck().fixedThenLearned(fixed: fixed, learned: learned)
    }
}

/// The checks of the learned weights that every store must pass.
struct LearnedWeightsCheck {
    static let policy = LearnedPolicy.default
    static let end = StoreConformanceTests.end
    static let day = 86_400.0

    /// One selector of each kind, each matching a part of `history()`.
    static let selectors: [DeletionSelector] = [
        .conversation("c3"), .conversation("c0"), .identifier("d250"), .groupIdentifier("g1"),
        .before(Timestamp(seconds: end.seconds - 20 * day)), .all,
    ]

    /// A history of one account over 60 days: people and groups, every direction, engaged shares, a few dates out
    /// of order, enough sends that the weights move far from the prior.
    static func history(seed: UInt64 = 21, donations: Int = 600) -> [Interaction] {
        var random = SeededRandom(seed: seed)
        return (0..<donations).map { index in
            let conversation = Int.random(in: 0..<14, using: &random)
            let isGroup = conversation % 4 == 0
            let roll = Int.random(in: 0..<10, using: &random)
            let direction: InteractionDirection = roll < 5 ? .outgoing : roll < 9 ? .incoming : .unspecified
            var offset = Double(donations - index) * 60 * day / Double(donations)
            if Int.random(in: 0..<20, using: &random) == 0 { offset += 3 * 3_600 }
            return Interaction(
                identifier: "d\(index)", groupIdentifier: Bool.random(using: &random) ? "g\(conversation % 3)" : nil,
                date: Timestamp(seconds: (end.seconds - offset).rounded()), direction: direction,
                intent: SendMessageIntent(
                    conversationIdentifier: "c\(conversation)",
                    speakableGroupName: isGroup ? "Group \(conversation)" : nil,
                    recipients: [Person(customIdentifier: "p\(conversation)")]),
                isEngagedSuggestion: direction == .outgoing && Int.random(in: 0..<6, using: &random) == 0)
        }
    }

    /// The weights of a store that was only ever given `donations`, in that order.
    static func fold(_ donations: [Interaction]) -> LearnedWeights {
        LearnedWeights.fold(
            donations.lazy.map { (conversation: $0.conversationIdentifier, event: ConversationState.Event($0)) },
            policy: policy
        ).weights
    }

    static func matches(_ selector: DeletionSelector, _ donation: Interaction) -> Bool {
        switch selector {
        case .conversation(let id): return donation.conversationIdentifier == id
        case .identifier(let id): return donation.identifier == id
        case .groupIdentifier(let id): return donation.groupIdentifier == id
        case .before(let date): return donation.date < date
        case .all, .account: return true
        }
    }

    func keepEverything(_ store: some DonationStore) throws {
        try store.setRetention(Retention(maximumAgeDays: 0, idleDays: 0), now: Self.end)
    }

    /// The check `LearnedWeightsTests.checkDeletion` runs on its store in memory, on a real store: after the
    /// deletion, the weights equal the fold of the remaining donations in recording order, and (so that the check
    /// can fail) differ from the weights before it; the store's suggestions, explained, show them.
    func deletion(_ selector: DeletionSelector, in store: some DonationStore) throws {
        try keepEverything(store)
        let history = Self.history()
        // In two batches and one by one, as an app and an import would.
        _ = try store.importDonations(Array(history[..<300]), options: ImportOptions(now: Self.end))
        for donation in history[300..<400] { _ = try store.record(donation, now: Self.end) }
        _ = try store.importDonations(Array(history[400...]), options: ImportOptions(now: Self.end))
        let before = try store.learnedWeights(account: "default")
        #expect(before == Self.fold(history))
        #expect(before.targets > 100)
        let report = try store.delete(selector, account: "default")
        let remaining = history.filter { !Self.matches(selector, $0) }
        #expect(report.donations == history.count - remaining.count)
        let after = try store.learnedWeights(account: "default")
        #expect(after == Self.fold(remaining), "\(selector)")
        #expect(after != before, "\(selector)")
        let listed = try store.suggestions(account: "default", context: RankingContext(at: Self.end), explain: true)
        if remaining.isEmpty {
            #expect(after == .empty && listed.isEmpty)
        } else {
            #expect(listed.learnedWeights == LearnedWeightsSummary(Self.fold(remaining), at: Self.end, policy: Self.policy))
            #expect(listed.first?.explanation?.learnedFrom == after.targets)
        }
    }

    /// Expiry in whole days: a maintenance step in the first moments of a day deletes what became older than the
    /// retention, and folds the weights to those of the rest; a step later the same day finds nothing to delete
    /// or fold, though donations it would have kept an hour earlier have crossed the age since; the next day's
    /// first step deletes those.
    func expiry(in store: some DonationStore, budget: MaintenanceBudget) throws {
        try keepEverything(store)
        let history = Self.history()
        _ = try store.importDonations(history, options: ImportOptions(now: Self.end))
        let retention = Retention(maximumAgeDays: 30, idleDays: 0)
        let start = Timestamp(seconds: (Self.end.seconds / Self.day).rounded(.down) * Self.day + 60)
        // Set as of a moment long before, so that setting it expires nothing: the steps below do.
        try store.setRetention(retention, now: Timestamp(seconds: start.seconds - 1_000 * Self.day))
        var expired = 0
        for (step, now) in [start, start.adding(10 * 3_600), start.adding(Self.day)].enumerated() {
            var report = MaintenanceReport()
            var steps = 0
            repeat {
                let one = try store.maintain(account: "default", now: now, budget: budget)
                report.expired.donations += one.expired.donations
                report.foldedAccounts += one.foldedAccounts
                report.isComplete = one.isComplete
                steps += 1
            } while !report.isComplete && steps < 1_000
            #expect(report.isComplete)
            let cutoff = try #require(retention.oldestKept(at: now))
            let remaining = history.filter { $0.date >= cutoff }
            expired += report.expired.donations
            #expect(expired == history.count - remaining.count, "step \(step)")
            switch step {
            case 1:
                #expect(report.expired.donations == 0 && report.foldedAccounts == 0, "later the same day")
            default:
                #expect(report.expired.donations > 0, "step \(step)")
            }
            #expect(try store.learnedWeights(account: "default") == Self.fold(remaining), "step \(step)")
        }
    }

    /// Two stores on the same data record in turn: the weights are those of every donation in recording order.
    func twoDonors(_ first: some DonationStore, _ second: some DonationStore) throws {
        try keepEverything(first)
        let history = Self.history(seed: 22, donations: 200)
        for (index, donation) in history.enumerated() {
            let donor: any DonationStore = index % 3 == 0 ? first : second
            _ = try donor.record(donation, now: Self.end)
        }
        #expect(try first.learnedWeights(account: "default") == Self.fold(history))
        #expect(try second.learnedWeights(account: "default") == Self.fold(history))
    }

    /// Two threads, each with its own store on the same data, record into one account at the same time, one by one
    /// and in batches: every donation is recorded, and the weights are the fold of the account's donations in the
    /// order the store recorded them (its export), so no update was lost and none was learned out of order.
    func concurrentDonors(_ open: @escaping @Sendable () throws -> any DonationStore) throws {
        try keepEverything(try open())
        let history = Self.history(seed: 24, donations: 400)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { worker in
            do {
                let store = try open()
                let mine = history.enumerated().filter { $0.offset % 2 == worker }.map(\.element)
                for (index, donation) in mine.enumerated() {
                    if index % 50 < 40 {
                        _ = try store.record(donation, now: Self.end)
                    } else if index % 50 == 40 {
                        _ = try store.importDonations(
                            Array(mine[index..<min(index + 10, mine.count)]), options: ImportOptions(now: Self.end))
                    }
                }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 } == [])
        let store = try open()
        var exported: [Interaction] = []
        try store.forEachDonation(account: "default") { exported.append($0) }
        #expect(exported.count == history.count)
        #expect(try store.learnedWeights(account: "default") == Self.fold(exported))
    }

    /// Donations recorded with fixed weights leave the account's weights marked; the learned store's maintenance
    /// folds them, and its ranking is then that of the whole history.
    func fixedThenLearned(fixed: some DonationStore, learned: some DonationStore) throws {
        try keepEverything(learned)
        let history = Self.history(seed: 23, donations: 300)
        _ = try learned.importDonations(Array(history[..<200]), options: ImportOptions(now: Self.end))
        _ = try fixed.importDonations(Array(history[200...]), options: ImportOptions(now: Self.end))
        #expect(try learned.learnedWeights(account: "default") == Self.fold(Array(history[..<200])))
        let report = try learned.maintain(account: "default", now: Self.end, budget: .unbounded)
        #expect(report.foldedAccounts == 1)
        #expect(try learned.learnedWeights(account: "default") == Self.fold(history))
    }
}

#if canImport(Glibc)
    import Glibc
#endif
import RedisCluster
import SuggestCore
import SuggestRedisStore
import SuggestSQLiteStore
import SuggestTestSupport
import Testing

/// The Redis Cluster store against the SQLite store on two real message histories, converted by `suggest convert`
/// from /work/shared/data (read in place, never copied; the suite is skipped on a machine without them):
/// CollegeMsg (Panzarasa, Opsahl & Carley 2009, via SNAP) and the Enron e-mail of 156 employees (Zhou et al.;
/// Perry & Wolfe 2013); see each directory's PROVENANCE.md.
///
/// Each history goes into both stores in three imports cut at a third and two thirds of its donations; after each,
/// both rank several contexts of the sampled accounts at several moments (the cut, an hour, a day and a month
/// later), and must give the same conversations in the same order with the same scores (relative 1e-9); after the
/// last, every sampled account exports the same bytes.
///
/// Sampled, to keep the suite's time: every Enron account (156; about 60k donations), and of CollegeMsg's 1,899
/// accounts the 5 busiest and every 12th of the rest in order of activity (about 160 accounts, each with its whole
/// history: an account's ranking depends on nothing outside it). Queries run on every 8th sampled account (20 of
/// each history).
@Suite(.enabled(if: RealHistories.arePresent), .serialized) struct RealHistoryEquivalenceTests {
    @Test func collegeMsgRanksAndExportsAlike() throws {
        try RealHistories.compare(
            name: "CollegeMsg", convert: ["convert", "collegemsg", RealHistories.collegeMsg], everyNthAccount: 12)
    }

    @Test func enronRanksAndExportsAlike() throws {
        try RealHistories.compare(name: "Enron", convert: ["convert", "enron", RealHistories.enron], everyNthAccount: 1)
    }
}

enum RealHistories {
    static let root = "/work/shared/data"
    static let collegeMsg = root + "/collegemsg/CollegeMsg.txt"
    static let enron = root + "/enron-perry-wolfe"

    static var arePresent: Bool { access(collegeMsg, R_OK) == 0 && access(enron + "/messages.tsv", R_OK) == 0 }

    /// Converts a history with the built `suggest`, samples its accounts, and runs the comparison.
    static func compare(name: String, convert: [String], everyNthAccount: Int) throws {
        let scratch = try TemporaryDirectory("real-history")
        let converted = try Suggest.run(convert, scratch: scratch.path, timeout: 120)
        try #require(converted.status == 0, "suggest \(convert.joined(separator: " ")): \(converted.error)")
        var all: [Interaction] = []
        let lines = MemoryJSONLines(bytes: converted.standardOutput)
        while let next = try lines.nextDonation(defaultAccount: Interaction.defaultAccount) {
            switch next.donation {
            case .success(let donation): all.append(donation)
            case .failure(let error): throw HarnessError("\(name), line \(next.line) of the conversion: \(error)")
            }
        }
        try #require(all.count > 10_000, "\(name) converted to only \(all.count) donations")
        let accounts = sample(all, everyNth: everyNthAccount)
        let chosen = Set(accounts)
        let history = all.filter { chosen.contains($0.account) }

        let cluster = try LocalRedisCluster.shared("real-histories")
        let client = try RedisClusterClient(url: cluster.url)
        for reply in try client.sendToEveryMaster(RedisCommand("FLUSHALL")) { _ = try reply.result.get() }
        let redis = try RedisDonationStore.open(url: cluster.url)
        let sqlite = try SQLiteDonationStore.open(StoreLocation(directory: scratch.path + "/sqlite"))
        let keepEverything = Retention(maximumAgeDays: 0, idleDays: 0)
        let end = history[history.count - 1].date
        let options = ImportOptions(now: end.adding(86_400))
        for store in [redis as any DonationStore, sqlite] { _ = try store.setRetention(keepEverything, now: options.now) }

        let queried = accounts.enumerated().filter { $0.offset % 8 == 0 }.map(\.element)
        var start = 0
        for cut in [history.count / 3, 2 * history.count / 3, history.count] {
            let stage = Array(history[start..<cut])
            start = cut
            let expected = try sqlite.importDonations(stage, options: options)
            let actual = try redis.importDonations(stage, options: options)
            try #require(expected == actual, "\(name): the stores report the import up to donation \(cut) differently")
            let moment = stage[stage.count - 1].date
            for account in queried {
                for context in contexts(of: account, in: history, at: moment) {
                    try expectSameRanking(
                        try sqlite.suggestions(account: account, context: context),
                        try redis.suggestions(account: account, context: context),
                        "\(name), account \(account), after \(cut) donations, \(context)")
                }
            }
        }
        for account in accounts {
            let expected = try exportBytes(sqlite, account)
            let actual = try exportBytes(redis, account)
            try #require(!expected.isEmpty, "\(name): account \(account) exported nothing")
            try #require(expected == actual, "\(name): account \(account) exports different bytes")
        }
    }

    /// The accounts to compare: the 5 busiest, then every `everyNth` of the rest from the busiest down.
    static func sample(_ history: [Interaction], everyNth: Int) -> [String] {
        var counts: [String: Int] = [:]
        for donation in history { counts[donation.account, default: 0] += 1 }
        let ranked = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.map(\.key)
        return Array(ranked.prefix(5)) + ranked.dropFirst(5).enumerated().filter { $0.offset % everyNth == 0 }.map(\.element)
    }

    /// Plain, longer, person and idle-cut contexts at the moment and after it; the person is the account's most
    /// frequent recipient.
    static func contexts(of account: String, in history: [Interaction], at moment: Timestamp) -> [RankingContext] {
        var recipients: [String: Int] = [:]
        for donation in history where donation.account == account && donation.date <= moment {
            for person in donation.intent.recipients { recipients[person.customIdentifier ?? "", default: 0] += 1 }
        }
        let person = recipients.max { $0.value != $1.value ? $0.value < $1.value : $0.key > $1.key }?.key ?? "nobody"
        var contexts: [RankingContext] = []
        for later: Double in [0, 3_600, 86_400, 30 * 86_400] {
            let at = moment.adding(later)
            contexts.append(RankingContext(at: at))
            contexts.append(RankingContext(at: at, limit: 30))
            contexts.append(RankingContext(at: at, limit: 8, people: [person]))
            contexts.append(RankingContext(at: at, limit: 8, notIdleSince: at.adding(-7 * 86_400)))
        }
        return contexts
    }

    /// Same conversations in the same order, same scores within a relative 1e-9.
    static func expectSameRanking(_ expected: SuggestionList, _ actual: SuggestionList, _ what: String) throws {
        let ids = expected.suggestions.map(\.conversationIdentifier)
        try #require(ids == actual.suggestions.map(\.conversationIdentifier), "\(what): different conversations")
        for (left, right) in zip(expected.suggestions, actual.suggestions) {
            let tolerance = 1e-9 * max(abs(left.score), abs(right.score))
            try #require(
                abs(left.score - right.score) <= tolerance,
                "\(what): \(left.conversationIdentifier) scores \(left.score) and \(right.score)")
        }
    }

    /// What `suggest export` writes for the account: every donation's line, in order.
    static func exportBytes(_ store: some DonationStore, _ account: String) throws -> [UInt8] {
        var bytes: [UInt8] = []
        try store.forEachDonation(account: account) { donation in
            bytes += Array(donation.jsonLine.utf8)
            bytes.append(0x0A)
        }
        return bytes
    }
}

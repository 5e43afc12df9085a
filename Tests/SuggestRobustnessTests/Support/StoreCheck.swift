import SuggestCore
import SuggestSQLiteStore

/// Checks that a store's derived ranking state is what its donations give, two ways.
enum StoreCheck {
    /// The contexts rankings are compared in: plain, a shared photo, a person in the shared content, one service;
    /// each with a small K (where the threshold algorithm stops early) and a K that takes everything.
    static func contexts(at: Timestamp) -> [RankingContext] {
        // Set `notIdleSince` so that `suggestions` and `suggestionsByBruteForce` filter idle conversations alike.
        let idle = at.adding(-30 * 86_400)
        var contexts: [RankingContext] = []
        for limit in [3, 1000] {
            contexts.append(RankingContext(at: at, limit: limit, notIdleSince: idle))
            contexts.append(RankingContext(at: at, limit: limit, contentTypes: ["public.jpeg"], notIdleSince: idle))
            contexts.append(
                RankingContext(at: at, limit: limit, people: ["p-3", "p7@example.com"], notIdleSince: idle))
            contexts.append(RankingContext(at: at, limit: limit, serviceName: "sms", notIdleSince: idle))
        }
        return contexts
    }

    /// Opens the store in this process (which must succeed) and compares the stored ranking (threshold algorithm
    /// over SQLite's indexes) with scoring every conversation. Returns the differences found, empty when none.
    static func rankingDifferences(store: String, accounts: [String] = ["default"], at: Timestamp = Donations.at)
        throws -> [String]
    {
        let opened = try SQLiteDonationStore.open(StoreLocation(directory: store))
        var problems: [String] = []
        for account in accounts {
            for context in contexts(at: at) {
                let fast = try opened.rankedConversations(account: account, context: context)
                let slow = try opened.suggestionsByBruteForce(account: account, context: context)
                if fast != slow {
                    problems.append(
                        "account \(account), limit \(context.limit), types \(context.contentTypes), people "
                            + "\(context.people): top K \(fast.map(\.conversationIdentifier)) but brute force "
                            + "\(slow.map(\.conversationIdentifier))")
                }
            }
        }
        return problems
    }

    /// Builds a fresh store from `export`'s output (and the same blocks and retention), then compares `export` and
    /// `list --json` of both. Returns the differences found, empty when none.
    static func rebuildDifferences(
        of fixture: StoreFixture, accounts: [String] = ["default"], at: Timestamp = Donations.at
    )
        throws -> [String]
    {
        let rebuilt = try StoreFixture("rebuild")
        try rebuilt.keepEverything()
        var problems: [String] = []
        for account in accounts {
            let exported = try fixture.succeed(["export", "--account", account])
            try rebuilt.succeed(["import", "-", "--quiet", "--account", account], input: Array(exported.utf8))
            for blocked in try fixture.succeed(["block", "--list", "--account", account]).split(separator: "\n") {
                try rebuilt.succeed(["block", "--conversation", String(blocked), "--account", account])
            }
            let again = try rebuilt.succeed(["export", "--account", account])
            if again != exported { problems.append("account \(account): export of the rebuilt store differs") }
            for extra in [[], ["--content-type", "public.jpeg"], ["--person", "p-3"]] {
                let arguments = ["list", "--json", "--limit", "1000", "--at", at.rfc3339, "--account", account] + extra
                let original = try fixture.succeed(arguments)
                let copy = try rebuilt.succeed(arguments)
                if original != copy {
                    problems.append(
                        "account \(account), list \(extra): stored state differs from a rebuild\n"
                            + "  stored:  \(original.prefix(600))\n  rebuilt: \(copy.prefix(600))")
                }
            }
        }
        return problems
    }

    /// How many donations the account holds, read in this process.
    static func count(store: String, account: String = "default") throws -> Int {
        try SQLiteDonationStore.open(StoreLocation(directory: store)).donationCount(account: account)
    }

    /// The account's stored donations, read in this process.
    static func donations(store: String, account: String = "default") throws -> [Interaction] {
        var donations: [Interaction] = []
        try SQLiteDonationStore.open(StoreLocation(directory: store)).forEachDonation(account: account) { donations.append($0) }
        return donations
    }

    /// The identifiers of the account's stored donations, read in this process.
    static func identifiers(store: String, account: String = "default") throws -> Set<String> {
        var identifiers: Set<String> = []
        try SQLiteDonationStore.open(StoreLocation(directory: store)).forEachDonation(account: account) { donation in
            if let identifier = donation.identifier { identifiers.insert(identifier) }
        }
        return identifiers
    }
}

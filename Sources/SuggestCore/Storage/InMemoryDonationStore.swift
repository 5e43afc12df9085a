/// A donation store held in memory: for tests, for apps that keep their own log elsewhere, and as the reference the
/// durable stores are checked against.
///
/// It keeps only the donations, in the order they were recorded, and derives everything else from them when a query
/// needs it (after a write, the next query folds the account's donations again): the simplest store that can be
/// right, at O(n) per query after a write. Identifiers, accounts and conversations are compared byte for byte, as
/// the durable stores compare them. Under a learned ranking the account's weights are part of that fold
/// (`LearnedWeights.record` at each donation, in recording order), so they are by construction those of the
/// donations that remain. Nothing is durable; `checkpoint()` does nothing.
public final class InMemoryDonationStore: DonationStore {
    /// Learned weights (folded with the donations) or a policy's fixed ones.
    public let ranking: StoreRanking
    /// The policy the conversations' state is built with: `ranking.base`.
    public let policy: FrecencyPolicy
    public let types: UniformTypeTree
    private var histories: [ByteKey: AccountHistory] = [:]
    private var preferences: [ByteKey: [ByteKey: Preference]] = [:]
    private var retentionSetting = Retention.default
    private var random = SystemRandomNumberGenerator()

    /// One account's donations in recording order, and what is derived from them (`nil` after a write).
    private struct AccountHistory {
        var donations: [Interaction] = []
        var identifiers: Set<ByteKey> = []
        var derived: DerivedState?
    }

    private struct Preference: Equatable {
        var blocked = false
        var lessFeedback = 0
        var isEmpty: Bool { !blocked && lessFeedback == 0 }
    }

    /// - Parameters:
    ///   - ranking: learned weights (the default) or a policy's fixed ones.
    ///   - types: the type tree content types are read with.
    public init(ranking: StoreRanking = .default, types: UniformTypeTree = .standard) {
        self.ranking = ranking
        policy = ranking.base
        self.types = types
    }

    // MARK: Recording

    public func conversation(ofDonation identifier: String, account: String) throws -> String? {
        histories[ByteKey(account)]?.donations.first { $0.identifier?.hasSameBytes(as: identifier) == true }?
            .conversationIdentifier
    }

    public func recordShare(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome? {
        // One pass over the account's donations: whether the conversation has one, and its group identifiers.
        var known = false
        var groups: [String] = []
        for stored in histories[ByteKey(donation.account)]?.donations ?? []
        where stored.conversationIdentifier.hasSameBytes(as: donation.conversationIdentifier) {
            known = true
            if let group = stored.groupIdentifier, !groups.contains(where: { $0.hasSameBytes(as: group) }) {
                groups.append(group)
                // Two are enough to know the share takes none (the SQLite store reads two at most too).
                if groups.count == 2 { break }
            }
        }
        guard known else { return nil }
        return try record(donation.inheritingGroup(of: groups), now: now)
    }

    public func record(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome {
        switch try DonationAdmission.decide(
            donation, now: now, oldestKept: retentionSetting.oldestKept(at: now))
        {
        case .expired: return .expired
        case .record(let interaction):
            var history = histories[ByteKey(interaction.account)] ?? AccountHistory()
            let outcome = append(interaction, to: &history)
            histories[ByteKey(interaction.account)] = history
            return outcome
        }
    }

    public func importDonations(
        _ options: ImportOptions, progress: (ImportProgress) -> Void, interruption: () throws -> Void,
        next: () throws -> NumberedDonation?
    ) throws -> ImportReport {
        let options = options.fixingNow()
        var staged = histories
        var report = ImportReport()
        let oldestKept = retentionSetting.oldestKept(at: options.now)
        while let numbered = try next() {
            let (line, parsed) = (numbered.line, numbered.donation)
            report.read += 1
            if report.read % 256 == 0 { try interruption() }
            if report.read % options.progressInterval == 0 {
                progress(ImportProgress(lines: report.read, bytesRead: 0, totalBytes: nil))
            }
            guard let interaction = try options.admit(parsed, line: line, oldestKept: oldestKept, into: &report) else {
                continue
            }
            var history = staged[ByteKey(interaction.account)] ?? AccountHistory()
            switch append(interaction, to: &history) {
            case .recorded: report.recorded += 1
            case .duplicate: report.duplicates += 1
            case .expired: report.expired += 1
            }
            staged[ByteKey(interaction.account)] = history
        }
        histories = staged
        return report
    }

    private func append(_ interaction: Interaction, to history: inout AccountHistory) -> DonationOutcome {
        var interaction = interaction
        if let identifier = interaction.identifier {
            guard history.identifiers.insert(ByteKey(identifier)).inserted else {
                return .duplicate(identifier: identifier)
            }
        } else {
            let identifier = generateIdentifier()
            interaction.identifier = identifier
            history.identifiers.insert(ByteKey(identifier))
        }
        history.donations.append(interaction)
        history.derived = nil
        return .recorded(identifier: interaction.identifier ?? "")
    }

    private func generateIdentifier() -> String {
        let high = random.next() as UInt64
        let low = random.next() as UInt64
        return "m-" + String(high, radix: 16) + String(low, radix: 16)
    }

    // MARK: Ranking

    public func withRankingSource<T>(account: String, _ body: (DerivedState) throws -> T) throws -> T {
        try body(derived(account))
    }

    private func derived(_ account: String) -> DerivedState {
        let key = ByteKey(account)
        guard var history = histories[key] else {
            return DerivedState(donations: [], preferences: [:], ranking: ranking, types: types)
        }
        if let derived = history.derived { return derived }
        let derived = DerivedState(
            donations: history.donations, preferences: (preferences[key] ?? [:]).mapValues { ($0.blocked, $0.lessFeedback) },
            ranking: ranking, types: types)
        history.derived = derived
        histories[key] = history
        return derived
    }

    public func isBlocked(conversation: String, account: String) throws -> Bool {
        preferences[ByteKey(account)]?[ByteKey(conversation)]?.blocked ?? false
    }

    // MARK: Reading

    public func forEachDonation(account: String, interruption: () throws -> Void, _ body: (Interaction) throws -> Void)
        throws
    {
        for (offset, donation) in (histories[ByteKey(account)]?.donations ?? []).enumerated() {
            if offset % 256 == 255 { try interruption() }
            try body(donation)
        }
    }

    public func donationCount(account: String) throws -> Int { histories[ByteKey(account)]?.donations.count ?? 0 }

    public func accounts() throws -> [String] {
        histories.values.compactMap(\.donations.first?.account).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    // MARK: Deleting

    public func delete(_ selector: DeletionSelector, account: String) throws -> DeletionReport {
        let matches: (Interaction) -> Bool
        switch selector {
        case .conversation(let id): matches = { $0.conversationIdentifier.hasSameBytes(as: id) }
        case .identifier(let id): matches = { $0.identifier?.hasSameBytes(as: id) == true }
        case .groupIdentifier(let id): matches = { $0.groupIdentifier?.hasSameBytes(as: id) == true }
        case .before(let date): matches = { $0.date < date }
        case .all, .account: matches = { _ in true }
        }
        var report = removeDonations(of: [ByteKey(account)], where: matches)
        switch selector {
        case .conversation(let id):
            report.preferencesForgotten = forgetSuggestLess(account: account) { $0 == ByteKey(id) }
        case .all: report.preferencesForgotten = forgetSuggestLess(account: account) { _ in true }
        case .account:
            report.preferencesForgotten = preferences[ByteKey(account)]?.isEmpty == false
            preferences[ByteKey(account)] = nil
            histories[ByteKey(account)]?.derived = nil
        case .identifier, .groupIdentifier, .before: break
        }
        return report
    }

    /// "Suggest Less" goes with a conversation, or an account, deleted as a whole, whether it had donations or not
    /// (it was about that conversation); a block is a standing choice and stays.
    /// - Returns: whether one was forgotten.
    private func forgetSuggestLess(account: String, of conversations: (ByteKey) -> Bool) -> Bool {
        let key = ByteKey(account)
        guard let kept = preferences[key] else { return false }
        var forgot = false
        for (conversation, preference) in kept where preference.lessFeedback != 0 && conversations(conversation) {
            var changed = preference
            changed.lessFeedback = 0
            preferences[key]?[conversation] = changed.isEmpty ? nil : changed
            histories[key]?.derived = nil
            forgot = true
        }
        return forgot
    }

    public func deleteEverything() throws -> DeletionReport {
        var report = DeletionReport()
        report.donations = histories.values.reduce(0) { $0 + $1.donations.count }
        histories = [:]
        preferences = [:]
        return report
    }

    /// Removes the matching donations of the accounts, with the preferences the contract says go with them.
    private func removeDonations(of accounts: [ByteKey], where matches: (Interaction) -> Bool) -> DeletionReport {
        var report = DeletionReport()
        for account in accounts {
            guard var history = histories[account] else { continue }
            var touched: Set<ByteKey> = []
            var kept: [Interaction] = []
            for donation in history.donations {
                if matches(donation) {
                    touched.insert(ByteKey(donation.conversationIdentifier))
                    report.donations += 1
                } else {
                    kept.append(donation)
                }
            }
            guard !touched.isEmpty else { continue }
            let remaining = Set(kept.map { ByteKey($0.conversationIdentifier) })
            history.donations = kept
            history.identifiers = Set(kept.compactMap(\.identifier).map(ByteKey.init))
            history.derived = nil
            histories[account] = kept.isEmpty ? nil : history
            for conversation in touched {
                report.conversations.append(conversation.string)
                guard !remaining.contains(conversation) else { continue }
                report.removedConversations.append(conversation.string)
                // "Suggest Less" was about the deleted conversation; a block is a standing choice and stays.
                preferences[account]?[conversation]?.lessFeedback = 0
                history.derived = nil
                if preferences[account]?[conversation]?.isEmpty == true { preferences[account]?[conversation] = nil }
            }
        }
        report.conversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        report.removedConversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return report
    }

    // MARK: Preferences

    public func setBlocked(_ blocked: Bool, conversation: String, account: String) throws {
        updatePreference(conversation: conversation, account: account) { $0.blocked = blocked }
    }

    public func blockedConversations(account: String) throws -> [String] {
        (preferences[ByteKey(account)] ?? [:]).filter(\.value.blocked).map(\.key.string)
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
    }

    public func suggestLess(conversation: String, account: String) throws -> Int {
        updatePreference(conversation: conversation, account: account) { $0.lessFeedback += 1 }
        return preferences[ByteKey(account)]?[ByteKey(conversation)]?.lessFeedback ?? 0
    }

    public func resetFeedback(conversation: String, account: String) throws {
        updatePreference(conversation: conversation, account: account) { $0.lessFeedback = 0 }
    }

    private func updatePreference(conversation: String, account: String, _ change: (inout Preference) -> Void) {
        var preference = preferences[ByteKey(account)]?[ByteKey(conversation)] ?? Preference()
        change(&preference)
        preferences[ByteKey(account), default: [:]][ByteKey(conversation)] = preference.isEmpty ? nil : preference
        histories[ByteKey(account)]?.derived = nil
    }

    // MARK: Retention and maintenance

    public func retention() throws -> Retention { retentionSetting }

    public func setRetention(_ retention: Retention, now: Timestamp) throws -> DeletionReport {
        try retention.validate()
        retentionSetting = retention
        return expire(accounts: Array(histories.keys), now: now)
    }

    public func maintain(account: String?, now: Timestamp, budget: MaintenanceBudget) throws -> MaintenanceReport {
        var report = MaintenanceReport()
        report.expired = expire(accounts: account.map { [ByteKey($0)] } ?? Array(histories.keys), now: now)
        return report
    }

    private func expire(accounts: [ByteKey], now: Timestamp) -> DeletionReport {
        guard let cutoff = retentionSetting.oldestKept(at: now) else { return DeletionReport() }
        return removeDonations(of: accounts) { $0.date < cutoff }
    }

    public func checkpoint() throws {}
}

extension InMemoryDonationStore {
    /// What one account's donations amount to, folded in recording order: a ranking source.
    public struct DerivedState: RankingSource {
        private var identifiers: [String] = []
        private var records: [ConversationRecord] = []
        /// The intent each conversation is shown by (`ShownDonation`), without its content types.
        private var latest: [SendMessageIntent?] = []
        private var shown: [ShownDonation] = []
        private var slots: [ByteKey: Int] = [:]
        /// By the people keys' bytes, as every store matches them: as `String`s, `josé` composed and decomposed would
        /// be one person, and the reference would raise the other spelling's conversation.
        private var people: [ByteKey: [Int]] = [:]
        private var weights = LearnedWeights.empty

        init(
            donations: [Interaction], preferences: [ByteKey: (blocked: Bool, less: Int)], ranking: StoreRanking,
            types: UniformTypeTree
        ) {
            let policy = ranking.base
            let learned = ranking.learnedPolicy
            var peopleSeen: [Set<ByteKey>] = []
            for donation in donations {
                let key = ByteKey(donation.conversationIdentifier)
                let slot: Int
                if let known = slots[key] {
                    slot = known
                } else {
                    slot = identifiers.count
                    slots[key] = slot
                    identifiers.append(donation.conversationIdentifier)
                    records.append(.empty)
                    latest.append(nil)
                    shown.append(ShownDonation())
                    peopleSeen.append([])
                }
                let before = records[slot].state
                let isLatest = records[slot].apply(
                    date: donation.date, direction: donation.direction,
                    isEngagedSuggestion: donation.isEngagedSuggestion, isGroup: donation.intent.isGroup,
                    contentKinds: types.contentKinds(of: donation.intent.contentTypes),
                    serviceName: donation.intent.serviceName, policy: policy)
                if let learned {
                    weights.record(
                        ConversationState.Event(donation), before: before, after: records[slot].state, policy: learned)
                }
                if shown[slot].takes(
                    date: donation.date, describes: donation.intent.describesConversation, isLatest: isLatest)
                {
                    var intent = donation.intent
                    intent.contentTypes = []
                    latest[slot] = intent
                }
                for person in donation.intent.participants {
                    for match in person.matchKeys.map(ByteKey.init) where peopleSeen[slot].insert(match).inserted {
                        people[match, default: []].append(slot)
                    }
                }
            }
            for (conversation, preference) in preferences {
                guard let slot = slots[conversation] else { continue }
                records[slot].state.isBlocked = preference.blocked
                records[slot].state.lessFeedback = preference.less
            }
        }

        /// Sorted access over a list copied when the query began.
        public struct Cursor: SortedAccessCursor {
            let entries: [SortedEntry]
            var position = 0

            public mutating func next() -> SortedEntry? {
                guard position < entries.count else { return nil }
                defer { position += 1 }
                return entries[position]
            }
        }

        public func sortedAccess(_ lists: [SortedList]) -> [Cursor] {
            lists.map { list in
                var entries: [SortedEntry] = []
                for slot in records.indices {
                    if let key = records[slot].key(in: list) { entries.append(SortedEntry(key: key, conversation: handle(slot))) }
                }
                // Best first; equal keys in slot order, as the other stores break them (any order is exact).
                entries.sort { $0.precedes($1) }
                return Cursor(entries: entries)
            }
        }

        private func handle(_ slot: Int) -> ConversationHandle { ConversationHandle(rawValue: Int64(slot)) }

        public func candidate(_ conversation: ConversationHandle, contentKinds: [String]) -> RankingCandidate? {
            let slot = Int(conversation.rawValue)
            guard records.indices.contains(slot) else { return nil }
            let record = records[slot]
            return RankingCandidate(
                conversation: conversation, conversationIdentifier: identifiers[slot], state: record.state,
                contentSums: contentKinds.map { record.contentSums[$0] ?? LogSpace.zero },
                serviceName: record.serviceName)
        }

        public func conversations(withPeople keys: [String]) -> [[ConversationHandle]] {
            keys.map { key in (people[ByteKey(key)] ?? []).map(handle) }
        }

        public func conversation(identifiedBy conversationIdentifier: String) -> ConversationHandle? {
            slots[ByteKey(conversationIdentifier)].map(handle)
        }

        public func latestIntents(_ conversations: [ConversationHandle]) -> [SendMessageIntent?] {
            conversations.map { latest.indices.contains(Int($0.rawValue)) ? latest[Int($0.rawValue)] : nil }
        }

        public func allConversations() -> [ConversationHandle] { records.indices.map(handle) }

        public func conversationCount() -> Int { records.count }

        /// Always: the state is folded from the donations under the store's policy for each query.
        public func keysFollowThePolicy() -> Bool { true }

        /// The fold of the account's donations in recording order (`.empty` under a fixed ranking).
        public func learnedWeights() -> LearnedWeights { weights }
    }
}

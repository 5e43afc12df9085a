/// A durable history of donations and the ranking state derived from it: what every front end (an app, the command
/// line, the server) talks to, whichever store holds the data.
///
/// Two stores implement it: the embedded SQLite store (`SQLiteDonationStore`, the default) and the Redis Cluster
/// store (`RedisDonationStore`); `InMemoryDonationStore` holds the same history in memory, for tests and as the
/// reference the others are checked against. Every one ranks with `RankingEngine` over its own `RankingSource`, and
/// folds donations with `ConversationRecord`, so all give the same suggestions to the bit from the same history.
///
/// A store value is one connection: not `Sendable`, used by one thread at a time. Several processes (an app and its
/// share extension) may each open their own on the same data. `SuggestionService` (module `Suggest`) wraps one for
/// async code.
///
/// Errors: `StoreError` when the store fails (nothing half-written), `InputError` for a donation or a query that
/// breaks the contract (nothing changed), `CancellationError` when a caller's `interruption` check throws it.
public protocol DonationStore: AnyObject {
    associatedtype Source: RankingSource

    /// How the store ranks: with each account's learned weights (`StoreRanking.default`) or a policy's fixed ones.
    var ranking: StoreRanking { get }
    /// The policy the ranking state is built with: `ranking.base`.
    var policy: FrecencyPolicy { get }
    /// The type tree content types are read with.
    var types: UniformTypeTree { get }

    // MARK: Recording

    /// Records one donation and updates its conversation's ranking state, atomically. The donation must pass the
    /// format's rules: one read from JSON does (the decoder applies them), one built in code must go through
    /// `Interaction.validated()` first, as `SuggestionService.donate` does (a round trip through the decoder, about
    /// 30 µs in a debug build, which a server's donations, decoded already, are spared).
    /// - Parameter now: the moment of recording: the future-date rule and retention are taken against it
    ///   (`DonationAdmission`).
    /// - Complexity: independent of the history's length.
    func record(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome

    /// Records the donation of a share sent to a suggested conversation, only if that conversation still has a
    /// donation when it is written, checked in the same transaction: the share copies the conversation's names from
    /// a suggestion read before, and a deletion that committed in between must not be undone by it (a send racing
    /// `delete --conversation` brought the deleted names back).
    ///
    /// A donation without a group identifier takes its conversation's, when the conversation's donations name
    /// exactly one (`Interaction.inheritingGroup(of:)`): an app that gives every donation of a thread the thread's
    /// group identifier deletes the thread by it, and the shares sent to it went with it no more.
    /// - Returns: `nil` when the conversation has no donation any more: nothing is recorded.
    func recordShare(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome?

    /// Records a batch of donations, all of them or, if anything fails, none (with `skipInvalid`, the valid ones).
    /// - Parameters:
    ///   - next: the next line's number and donation (or why the line is not one), `nil` at the end.
    ///   - interruption: asked every few hundred donations; throwing (`CancellationError`) abandons the batch,
    ///     recording nothing.
    /// - Throws: the first `InputError` (with its line) unless `skipInvalid`; `StoreError`.
    func importDonations(
        _ options: ImportOptions, progress: (ImportProgress) -> Void, interruption: () throws -> Void,
        next: () throws -> NumberedDonation?
    ) throws -> ImportReport

    /// Records a batch given as the contract's JSON Lines, as `importDonations`: a store may parse on another
    /// thread while it writes. The default decodes each line with `Interaction(jsonBytes:defaultAccount:)`.
    func importJSONLines(
        from lines: some JSONLineSource, options: ImportOptions, progress: (ImportProgress) -> Void,
        interruption: () throws -> Void
    ) throws -> ImportReport

    /// Records a batch of JSON Lines held in memory (a request's body), as `importDonations`. `parse` reads one
    /// non-blank line and may be called more than once for it: a store may check every line first and parse them
    /// again while it records them, so that what waits for its writer is the bytes, not the donations, which take
    /// several times their size. The default parses each line once (`importBatchReadingOnce`).
    func importBatch(
        _ body: [UInt8], options: ImportOptions,
        parse: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Result<Interaction, InputError>
    ) throws -> ImportReport

    // MARK: Ranking

    /// Runs `body` with one account's ranking state, read consistently (one snapshot, even while other processes
    /// write).
    func withRankingSource<T>(account: String, _ body: (Source) throws -> T) throws -> T

    /// Whether the person blocked the conversation (a block outlives its donations).
    func isBlocked(conversation: String, account: String) throws -> Bool

    // MARK: Reading

    /// Calls `body` with each stored donation of the account, oldest recorded first (the order they were recorded
    /// in), rebuilt as it was recorded, minus its message text: `export`.
    /// - Parameter interruption: asked every few hundred donations; throwing ends the read.
    func forEachDonation(account: String, interruption: () throws -> Void, _ body: (Interaction) throws -> Void) throws

    /// The account's donations in `forEachDonation`'s order, for a reader that takes them one at a time at its own
    /// pace. Unless a store keeps a read open between calls, it reads them all into memory first.
    func openDonationCursor(account: String) throws -> any DonationCursor

    /// Called before a read that may last minutes (a server's export through `openDonationCursor`): a store whose
    /// long reads keep a deletion's bytes on disk until they end settles that erasure first, and refuses the read
    /// while it cannot, so that reads that follow one another never keep deleted bytes for good.
    /// - Throws: `StoreError` `.busy` while the reads under way keep the erasure from being done.
    func admitLongRead() throws

    /// The conversation of the account's donation with this identifier (compared byte for byte), `nil` when the
    /// account has none: whether a repeated identifier is a retry of the same send or names something else.
    func conversation(ofDonation identifier: String, account: String) throws -> String?

    /// How many donations the account holds.
    func donationCount(account: String) throws -> Int

    /// The accounts that have donations, in byte-wise order.
    func accounts() throws -> [String]

    // MARK: Deleting

    /// Deletes the selected donations of one account and everything derived from them; the conversations they fed
    /// are recomputed from what remains, exactly as if the deleted ones had never been recorded, and conversations
    /// left empty lose their names, people and pictures. What is deleted leaves every byte the store keeps.
    func delete(_ selector: DeletionSelector, account: String) throws -> DeletionReport

    /// Deletes every donation of every account, every preference and every derived value: an empty store.
    func deleteEverything() throws -> DeletionReport

    // MARK: Preferences

    /// Never suggest a conversation (or suggest it again); a block outlives new donations and deletion.
    func setBlocked(_ blocked: Bool, conversation: String, account: String) throws

    /// The conversations of an account that the person blocked, in byte-wise order.
    func blockedConversations(account: String) throws -> [String]

    /// Records one "Suggest Less": the conversation's score is multiplied by the policy's `lessFactor` once more.
    /// - Returns: how many times it has now been asked.
    @discardableResult
    func suggestLess(conversation: String, account: String) throws -> Int

    /// Forgets "Suggest Less" for a conversation.
    func resetFeedback(conversation: String, account: String) throws

    // MARK: Retention and maintenance

    /// The store's retention settings (every account's).
    func retention() throws -> Retention

    /// Changes the retention settings and applies the new maximum age at once, to every account: the donations
    /// dated before `Retention.oldestKept(at:)` are deleted, and the learned weights of the accounts that lost
    /// any are folded again from what remains.
    /// - Returns: what the new maximum age deleted.
    @discardableResult
    func setRetention(_ retention: Retention, now: Timestamp) throws -> DeletionReport

    /// One bounded step of the upkeep reads never do: deleting the account's donations that have outlived the
    /// retention (whole days at a time: `Retention.oldestKept(at:)`), rebuilding state built under another policy
    /// (a release that retuned the default), and folding again the learned weights of accounts that lost donations
    /// or were learned under another `LearnedPolicy`. A command runs one unbounded step before its work; a server
    /// schedules small ones.
    /// - Parameter account: whose expired donations to delete and whose weights to fold; `nil` for every account's.
    func maintain(account: String?, now: Timestamp, budget: MaintenanceBudget) throws -> MaintenanceReport

    /// Whether the store's state was built under another policy than this version's (a release that changed
    /// how state is derived), so that the next `maintain` rebuilds every conversation: what a command says before
    /// that wait.
    func owesRebuild() throws -> Bool

    /// Makes everything recorded so far durable against a power loss, now (an embedded store copies its
    /// write-ahead log into the database; a server-backed store waits for its server).
    func checkpoint() throws

    /// Makes what this connection committed durable against a power loss, and nothing more (an embedded store
    /// flushes its write-ahead log; a server-backed store acknowledged it durable already): what a caller must
    /// know succeeded before it says that a large write need not be made again, whatever the checkpoint after it
    /// does.
    func flushCommitted() throws

    /// Throws when the store could not record a donation now: what a server's readiness asks. By default, a read
    /// of the settings.
    func checkHealth() throws

    /// Something only the store's operator can fix that makes work repeat without failing it (a deletion's marker
    /// that cannot be removed, so every process rewrites the whole file again); `nil` when there is none. A
    /// command says it, a server logs it. By default, none.
    var upkeepWarning: String? { get }
}

extension DonationStore {
    public func checkHealth() throws { _ = try retention() }

    public func flushCommitted() throws {}

    public var upkeepWarning: String? { nil }

    /// A store that keeps no derived state owes none.
    public func owesRebuild() throws -> Bool { false }

    public func importJSONLines(
        from lines: some JSONLineSource, options: ImportOptions, progress: (ImportProgress) -> Void,
        interruption: () throws -> Void
    ) throws -> ImportReport {
        try importDonations(options, progress: progress, interruption: interruption) {
            try lines.nextDonation(defaultAccount: options.defaultAccount)
        }
    }

    /// Parses each line once, as it is recorded (`importBatchReadingOnce`).
    public func importBatch(
        _ body: [UInt8], options: ImportOptions,
        parse: @escaping @Sendable (UnsafeBufferPointer<UInt8>) -> Result<Interaction, InputError>
    ) throws -> ImportReport {
        try importBatchReadingOnce(body, options: options, parse: parse)
    }

    /// `importBatch` reading each line once, as it is recorded.
    public func importBatchReadingOnce(
        _ body: [UInt8], options: ImportOptions,
        parse: (UnsafeBufferPointer<UInt8>) -> Result<Interaction, InputError>
    ) throws -> ImportReport {
        let lines = MemoryJSONLines(bytes: body)
        return try importDonations(options, progress: { _ in }, interruption: {}) {
            try lines.nextDonation(parse: parse)
        }
    }

    /// The top suggestions of an account at `context.at`, under the store's retention: conversations idle for
    /// longer than it allows are left out unless the context says otherwise.
    /// - Throws: `InputError` for a context over `RankingContext.Limits`; `StoreError`.
    /// - Complexity: independent of the history's length: a few index steps per suggestion (`TopKRanker`).
    public func suggestions(account: String, context: RankingContext, explain: Bool = false) throws -> SuggestionList {
        try context.validate()
        let engine = RankingEngine(ranking: ranking, types: types)
        return try withRankingSource(account: account) { source in
            var context = context
            if context.notIdleSince == nil {
                let settings = try source.retention() ?? self.retention()
                context.notIdleSince = settings.notIdleSince(at: context.at)
            }
            return try engine.suggestions(account: account, in: source, context: context, explain: explain)
        }
    }

    /// The exact top K by the threshold walk, as ranked conversations (no retention applied): what `suggestions`
    /// shows, in the form `suggestionsByBruteForce` is compared with.
    public func rankedConversations(account: String, context: RankingContext) throws -> [RankedConversation] {
        let engine = RankingEngine(ranking: ranking, types: types)
        return try withRankingSource(account: account) { source in try engine.ranked(in: source, context: context) }
    }

    /// The same ranking by scoring every conversation: the reference `suggestions` must equal.
    public func suggestionsByBruteForce(account: String, context: RankingContext) throws -> [RankedConversation] {
        let engine = RankingEngine(ranking: ranking, types: types)
        return try withRankingSource(account: account) { source in
            try engine.rankedByBruteForce(in: source, context: context)
        }
    }

    /// What the account has learned under a learned ranking, as its queries read it (`.empty` for an account with
    /// no donation; meaningless under a fixed ranking, which keeps no weights).
    public func learnedWeights(account: String) throws -> LearnedWeights {
        try withRankingSource(account: account) { source in try source.learnedWeights() }
    }

    /// Looks up one conversation as the share extension receives it in the intent: available only where `list`
    /// could show it (not blocked, not idle).
    /// - Parameter notIdleSince: the idle cutoff, as a `RankingContext` gives it; `nil` for the store's retention's,
    ///   as `suggestions` takes it.
    public func conversationStatus(
        account: String, conversationIdentifier: String, at: Timestamp, notIdleSince: Timestamp? = nil
    ) throws -> ConversationStatus {
        // Held to a query's rules: a NaN moment passed every comparison, and the conversation was available.
        try RankingContext(at: at, notIdleSince: notIdleSince).validate()
        let engine = RankingEngine(ranking: ranking, types: types)
        return try withRankingSource(account: account) { source in
            let status = try engine.status(of: conversationIdentifier, in: source, at: at) {
                try isBlocked(conversation: conversationIdentifier, account: account)
            }
            guard case .available(let suggestion) = status,
                let cutoff = try notIdleSince ?? (source.retention() ?? self.retention()).notIdleSince(at: at),
                suggestion.lastDate < cutoff
            else { return status }
            return .idle(suggestion)
        }
    }

    /// Records a donation built in code, at the current time: held to the format's rules first
    /// (`Interaction.validated()`), since one that breaks them (an empty conversation identifier) would leave its
    /// account unreadable. A donation read from JSON has passed them already: `record(_:now:)` takes it as it is.
    /// - Throws: `InputError` naming the field that breaks a rule (nothing is recorded); the store's errors.
    public func record(_ donation: Interaction) throws -> DonationOutcome {
        try record(donation.validated(), now: .now())
    }

    /// Nothing to settle: a store that keeps no read open between calls holds no deleted byte for one.
    public func admitLongRead() throws {}

    public func openDonationCursor(account: String) throws -> any DonationCursor {
        var donations: [Interaction] = []
        try forEachDonation(account: account) { donations.append($0) }
        return CollectedDonations(donations)
    }

    /// `forEachDonation` without interruption.
    public func forEachDonation(account: String, _ body: (Interaction) throws -> Void) throws {
        try forEachDonation(account: account, interruption: {}, body)
    }

    /// Records donations from memory as one batch (all or nothing; with `options.skipInvalid`, the valid ones).
    /// - Parameter interruption: called now and then; what it throws abandons the batch, and nothing is recorded.
    public func importDonations(
        _ donations: [Interaction], options: ImportOptions = ImportOptions(), interruption: () throws -> Void = {}
    ) throws -> ImportReport {
        // Held to the format's rules, each as the line of a file would be (`skipInvalid` skips it alike), before
        // the store's transaction: not while another process's writes wait for it. Interruptible as the recording
        // is: a cancelled import of 200,000 went on checking them for seconds.
        var checked: [Result<Interaction, InputError>] = []
        checked.reserveCapacity(donations.count)
        for donation in donations {
            if checked.count & 255 == 255 { try interruption() }
            checked.append(Result { () throws(InputError) in try donation.validated() })
        }
        var iterator = checked.enumerated().makeIterator()
        return try importDonations(options, progress: { _ in }, interruption: interruption) {
            iterator.next().map { NumberedDonation(line: $0.offset + 1, donation: $0.element) }
        }
    }
}

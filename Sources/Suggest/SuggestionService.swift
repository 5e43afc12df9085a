import Dispatch
import Synchronization

/// A donation store for async code: safe to share between tasks, every operation `async throws`, long ones
/// (imports, exports) cancelled with their task.
///
/// A store value is one connection, used by one thread at a time; the service owns one and runs every operation on
/// its own serial queue, so that a blocking SQLite call never holds a thread of Swift's cooperative pool, and tasks
/// never need an actor of their own around it (as GRDB's `DatabaseQueue` does for a `Database`). An app and its
/// share extension each make a service on the same store directory (the App Group container): SQLite's write-ahead
/// log lets them read and write at once, across processes.
///
///     // The App Group container's path (on iOS, `containerURL(forSecurityApplicationGroupIdentifier:)`'s);
///     // the directory's parent must exist, the directory is made if missing.
///     let suggest = try SuggestionService(directory: appGroupPath + "/suggest")
///     try await suggest.donate(Interaction(
///         date: .now(), direction: .outgoing,
///         intent: SendMessageIntent(conversationIdentifier: "thread-42", speakableGroupName: "Climbing crew")))
///     let row = try await suggest.suggestions(context: RankingContext(at: .now(), contentTypes: ["public.jpeg"]))
///
/// An account named to any operation is checked as a donation's account is (not empty, at most 4,096 bytes, no
/// NUL): `InputError`, as the command line refuses it, rather than preferences saved under a name no listing of
/// accounts would show.
///
/// Maintenance (expiry, rebuilding state after an upgrade that changed the policy) is never done behind a read:
/// call `maintain` when the app has time, for example when it comes to the foreground.
///
/// Two things to plan for. A service runs one operation at a time: a query waits behind an import or an export
/// of the same service (a second service on the same directory does not). And an import is one transaction: while
/// it writes, the other process's writes wait for it, as long as it goes on (a share extension's send waited 10 s
/// behind an import of 600,000 donations, and would wait a minute behind one of 10M, where the system may end the
/// extension first); only an import that stands still, waiting for its input, is given up on after 30 s, as
/// `busy`. Import a large history in batches (`importDonations` of some thousands at a time), or when the
/// extension is not in use.
public final class SuggestionService: Sendable {
    private let queue: DispatchQueue
    private let box: StoreBox

    /// The store, touched only on `queue`: the queue is its lock.
    private final class StoreBox: @unchecked Sendable {
        let store: any DonationStore
        init(_ store: any DonationStore) { self.store = store }
    }

    /// Wraps a store; the service owns it from now on.
    public init(store: sending any DonationStore, label: String = "suggest") {
        box = StoreBox(store)
        queue = DispatchQueue(label: label)
    }

    /// Opens (creating it if missing) the embedded store in `directory`.
    /// - Parameters:
    ///   - ranking: learned weights for each account (the default) or a policy's fixed ones.
    ///   - label: the name of the service's queue, as debuggers show it.
    /// - Throws: `InputError` for an empty path, or one with a NUL; `StoreError` when the directory or its database
    ///   cannot be used.
    public convenience init(directory: String, ranking: StoreRanking = .default, label: String = "suggest") throws {
        guard !directory.isEmpty else { throw InputError(field: "directory", message: "must not be empty") }
        // The system's calls read a path up to its first NUL: the directory made would be another one.
        guard !directory.utf8.contains(0) else {
            throw InputError(field: "directory", message: "must not contain NUL (U+0000)")
        }
        self.init(
            store: try SQLiteDonationStore.open(
                StoreLocation(directory: directory), ranking: ranking, checkpoints: .everyPages(100)),
            label: label)
    }

    /// Opens (creating it if missing) the embedded store in `directory`, off the caller's thread: opening may wait
    /// for the other process's writes (a migration, a rewrite a deletion left owed), which `init(directory:)`
    /// would do on the main thread or a thread of Swift's cooperative pool.
    public static func open(directory: String, ranking: StoreRanking = .default, label: String = "suggest")
        async throws -> SuggestionService
    {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue(label: label + ".open").async {
                continuation.resume(
                    with: Result { try SuggestionService(directory: directory, ranking: ranking, label: label) })
            }
        }
    }

    // MARK: Recording

    /// Records one donation (a message sent or received), now, once it passes the rules of the donation format
    /// (`Interaction.validated()`).
    /// - Throws: `InputError` naming the field that breaks a rule (nothing is recorded); `StoreError`.
    @discardableResult
    public func donate(_ donation: Interaction) async throws -> DonationOutcome {
        let donation = try donation.validated()
        return try await perform { store, _ in try store.record(donation, now: .now()) }
    }

    /// Records donations as one batch: all of them or none (with `options.skipInvalid`, the valid ones). Cancelling
    /// the task abandons the batch and records nothing.
    /// - Throws: `InputError` on `now` for an `options.now` later than the clock (`ImportOptions.checkMoment`), on
    ///   an account of `options` no donation could carry (`ImportOptions.checkAccounts`), or naming the first
    ///   invalid donation; `StoreError`.
    @discardableResult
    public func importDonations(_ donations: [Interaction], options: ImportOptions = ImportOptions()) async throws
        -> ImportReport
    {
        try options.checkMoment()
        try options.checkAccounts()
        // Counted, so that a batch of a few thousand is not taken for a large import (whose transaction gets a
        // page cache of 256 MiB: much for a share extension).
        var options = options
        if options.expectedDonations == nil { options.expectedDonations = donations.count }
        return try await perform { [options] store, flag in
            try store.importDonations(donations, options: options, interruption: flag.check)
        }
    }

    /// Records the contract's JSON Lines (one donation a line) as one batch, as `importDonations`.
    @discardableResult
    public func importJSONLines(_ bytes: [UInt8], options: ImportOptions = ImportOptions()) async throws -> ImportReport {
        try options.checkMoment()
        try options.checkAccounts()
        return try await perform { store, flag in
            try store.importJSONLines(
                from: MemoryJSONLines(bytes: bytes), options: options, progress: { _ in }, interruption: flag.check)
        }
    }

    // MARK: Ranking

    /// The top suggestions of an account under `context`.
    public func suggestions(
        account: String = Interaction.defaultAccount, context: RankingContext, explain: Bool = false
    ) async throws -> SuggestionList {
        try Interaction.checkName(account, field: "account")
        return try await perform { store, _ in
            try store.suggestions(account: account, context: context, explain: explain)
        }
    }

    /// What the store knows of the conversation a share extension's intent names.
    public func conversationStatus(
        account: String = Interaction.defaultAccount, conversationIdentifier: String, at: Timestamp = .now()
    ) async throws -> ConversationStatus {
        try Interaction.checkName(account, field: "account")
        // As every call that names a conversation: an empty name, or one with a NUL, was answered `.unknown`.
        try Interaction.checkName(conversationIdentifier, field: "conversation")
        return try await perform { store, _ in
            try store.conversationStatus(account: account, conversationIdentifier: conversationIdentifier, at: at)
        }
    }

    /// Runs the share flow (`ShareFlow`): activation, suggestions for the shared items, the preselected recipient,
    /// and, when sending, the engaged donation (under `identifier` when given: a retried send then records once).
    public func share(
        _ request: ShareRequest, target: ShareTarget = .acceptingAnything, choice: ShareFlow.Choice = .none,
        action: ShareFlow.Action = .preview, account: String = Interaction.defaultAccount, context: RankingContext,
        identifier: String? = nil
    ) async throws -> ShareResult {
        try Interaction.checkName(account, field: "account")
        return try await perform { store, _ in
            try ShareFlow(target: target).run(
                request, choice: choice, action: action, account: account, context: context, in: store,
                identifier: identifier)
        }
    }

    // MARK: Reading

    /// Calls `body` with each donation of the account in recording order, on the service's queue; cancelling the
    /// task ends the export.
    /// - Returns: how many donations were read.
    @discardableResult
    public func export(
        account: String = Interaction.defaultAccount, _ body: @escaping @Sendable (Interaction) throws -> Void
    ) async throws -> Int {
        try Interaction.checkName(account, field: "account")
        return try await perform { store, flag in
            var count = 0
            try store.forEachDonation(account: account, interruption: flag.check) { donation in
                try body(donation)
                count += 1
            }
            return count
        }
    }

    /// How many donations the account holds.
    public func donationCount(account: String = Interaction.defaultAccount) async throws -> Int {
        try Interaction.checkName(account, field: "account")
        return try await perform { store, _ in try store.donationCount(account: account) }
    }

    /// The accounts that have donations.
    public func accounts() async throws -> [String] { try await perform { store, _ in try store.accounts() } }

    // MARK: Deleting and preferences

    /// Deletes donations and everything derived from them (`DonationStore.delete`).
    /// - Throws: `InputError` for a selector that names nothing a donation could carry (an empty or overlong name, a
    ///   moment that is not finite: `.before(.nan)` deleted nothing, and said so by a report of none); `StoreError`.
    @discardableResult
    public func delete(_ selector: DeletionSelector, account: String = Interaction.defaultAccount) async throws
        -> DeletionReport
    {
        try Interaction.checkName(account, field: "account")
        switch selector {
        case .conversation(let name): try Interaction.checkName(name, field: "conversation")
        case .identifier(let name): try Interaction.checkName(name, field: "identifier")
        case .groupIdentifier(let name): try Interaction.checkName(name, field: "groupIdentifier")
        case .before(let moment) where !moment.seconds.isFinite:
            throw InputError(field: "before", message: "is not a finite moment (\(moment.seconds))")
        case .before, .all, .account: break
        }
        return try await perform { store, _ in try store.delete(selector, account: account) }
    }

    /// Deletes everything the store holds, every account's: donations, blocks and "suggest less" (to clear one
    /// account's history and keep its blocks, `delete(.all, account:)`). The report counts the donations; it lists
    /// no conversation.
    @discardableResult
    public func deleteEverything() async throws -> DeletionReport {
        try await perform { store, _ in try store.deleteEverything() }
    }

    /// Never suggest a conversation (or allow it again).
    public func setBlocked(_ blocked: Bool, conversation: String, account: String = Interaction.defaultAccount)
        async throws
    {
        try Interaction.checkName(account, field: "account")
        try Interaction.checkName(conversation, field: "conversation")
        try await perform { store, _ in try store.setBlocked(blocked, conversation: conversation, account: account) }
    }

    /// The blocked conversations of an account.
    public func blockedConversations(account: String = Interaction.defaultAccount) async throws -> [String] {
        try Interaction.checkName(account, field: "account")
        return try await perform { store, _ in try store.blockedConversations(account: account) }
    }

    /// "Suggest Less": returns how many times it has been asked for the conversation.
    @discardableResult
    public func suggestLess(conversation: String, account: String = Interaction.defaultAccount) async throws -> Int {
        try Interaction.checkName(account, field: "account")
        try Interaction.checkName(conversation, field: "conversation")
        return try await perform { store, _ in try store.suggestLess(conversation: conversation, account: account) }
    }

    /// Forgets "Suggest Less" for a conversation.
    public func resetFeedback(conversation: String, account: String = Interaction.defaultAccount) async throws {
        try Interaction.checkName(account, field: "account")
        try Interaction.checkName(conversation, field: "conversation")
        try await perform { store, _ in try store.resetFeedback(conversation: conversation, account: account) }
    }

    // MARK: Retention and maintenance

    /// The store's retention settings.
    public func retention() async throws -> Retention { try await perform { store, _ in try store.retention() } }

    /// Changes the retention settings and applies the new maximum age at once.
    @discardableResult
    public func setRetention(_ retention: Retention) async throws -> DeletionReport {
        try await perform { store, _ in try store.setRetention(retention, now: .now()) }
    }

    /// One step of upkeep (`DonationStore.maintain`); run steps until `isComplete`.
    @discardableResult
    public func maintain(account: String? = nil, budget: MaintenanceBudget = .step) async throws -> MaintenanceReport {
        if let account { try Interaction.checkName(account, field: "account") }
        return try await perform { store, _ in try store.maintain(account: account, now: .now(), budget: budget) }
    }

    /// Makes everything recorded so far durable against a power loss now.
    public func checkpoint() async throws { try await perform { store, _ in try store.checkpoint() } }

    // MARK: Running on the queue

    /// Runs `work` on the service's queue with the store, resuming the caller with its result. Cancelling the
    /// calling task sets the flag `work`'s long loops check (`interruption`); a job that has not started yet
    /// throws `CancellationError` at once and never starts (a dismissed share sheet's query waited for an import
    /// queued before it to end).
    private func perform<T: Sendable>(
        _ work: @escaping @Sendable (any DonationStore, CancellationFlag) throws -> T
    ) async throws -> T {
        let job = Job<T>()
        let box = self.box
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                job.wait(continuation)
                // Cancelled before it waited: the handler found no one to resume.
                if job.flag.isCancelled { job.abandon() }
                queue.async {
                    guard let continuation = job.start() else { return }
                    do {
                        try job.flag.check()
                        continuation.resume(returning: try work(box.store, job.flag))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            job.flag.cancel()
            job.abandon()
        }
    }

    /// One call's continuation, resumed exactly once: by the queue when the job starts and ends, or with
    /// `CancellationError` when the call is cancelled before it started.
    private final class Job<T: Sendable>: Sendable {
        let flag = CancellationFlag()
        private let waiting = Mutex<CheckedContinuation<T, any Error>?>(nil)

        func wait(_ continuation: CheckedContinuation<T, any Error>) { waiting.withLock { $0 = continuation } }

        /// The continuation to resume once the job has run, or `nil` when the call was abandoned.
        func start() -> CheckedContinuation<T, any Error>? { waiting.withLock { $0.take() } }

        /// Resumes the call with `CancellationError` if its job has not started.
        func abandon() { waiting.withLock { $0.take() }?.resume(throwing: CancellationError()) }
    }
}

/// Set when the task that asked for a job is cancelled; the job's loops ask it between donations.
final class CancellationFlag: Sendable {
    private let cancelled = Atomic(false)

    func cancel() { cancelled.store(true, ordering: .relaxed) }

    /// Whether the task was cancelled.
    var isCancelled: Bool { cancelled.load(ordering: .relaxed) }

    /// Throws `CancellationError` once the task is cancelled.
    @Sendable func check() throws {
        if isCancelled { throw CancellationError() }
    }
}

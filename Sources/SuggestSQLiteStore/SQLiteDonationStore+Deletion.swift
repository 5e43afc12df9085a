import CSystem
import SuggestCore

extension SQLiteDonationStore {
    /// Why the deleted bytes that a deletion, an unblock or a reset of feedback left in the store's files
    /// (`DeletionReport.logTruncated` false) are this process's to remove: it notes them for every other process in
    /// a file beside the database, and could not create it (a directory the user may not create files in). This
    /// process removes them at its next checkpoint or write that finds the log idle; a command that exits before
    /// leaves them until a later deletion. `nil` when nothing is owed or the note is made.
    public var cleanupLeftUnnoted: String? { database.unnotedCleanup }

    /// Why a deletion's marker (`suggest.sqlite-rewrite`, `-scrub`) that this process settled is still there: it
    /// could not be removed, so every process that opens the store does the work again (a whole rewrite of the
    /// file). An operator's to fix; `nil` when no marker was left.
    public var upkeepWarning: String? { database.stuckCleanupMarker }

    /// Settles what this process owes that no other process can learn of (`cleanupLeftUnnoted`): rewrites the file
    /// and cuts the log as soon as no other connection keeps them from it, trying for up to `limit`. For a process
    /// about to exit (a command), which would leave the debt to nobody; a long-running one settles it at its
    /// checkpoints.
    /// - Returns: whether nothing of it is owed any more.
    public func settleUnnotedCleanup(waitingUpTo limit: Duration) -> Bool {
        let started = ContinuousClock.now
        while database.unnotedCleanup != nil {
            if database.owesFileRewrite, !database.isReadOnly { _ = database.rewriteAfterDeletion(waiting: false) }
            if database.owesLogScrub { _ = try? truncateLogIfIdle() }
            guard database.unnotedCleanup != nil, ContinuousClock.now - started < limit else { break }
            var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
            _ = nanosleep(&pause, nil)
        }
        return database.unnotedCleanup == nil
    }

    /// Deletes the selected donations of one account, recomputes the conversations they fed from what remains,
    /// drops conversations left empty with their metadata, and truncates the WAL so that no deleted byte stays
    /// in the store's files (`secure_delete` overwrites the freed pages).
    ///
    /// The recomputed state equals that of a history that never had the deleted donations: the remaining ones
    /// are replayed in the order they were recorded, as they were applied the first time. So do the account's
    /// learned weights, folded again from all of its remaining donations in the same transaction
    /// (`LearnedWeights.fold`: one pass over the account's log).
    ///
    /// On a full disk it runs in the room of the store's `DeletionReserve`.
    public func delete(_ selector: DeletionSelector, account: String) throws -> DeletionReport {
        try reserve.run { try deleteTranslating(selector, account: account) }
    }

    private func deleteTranslating(_ selector: DeletionSelector, account: String) throws -> DeletionReport {
        try translating {
            // Identifiers and group identifiers are compared byte for byte, as SQL compares text: `==` would take
            // canonically equivalent spellings ("é" and "e" with a combining accent) for one. A unary `+` keeps
            // SQLite from reading every conversation of the account through its index when another term is narrower.
            switch selector {
            case .conversation(let id):
                return try deleteDonations(
                    inBlocksWhere: { "c.account = ?1 AND c.conversation_identifier = ?2" }, [.text(id)], account: account,
                    forgetting: .suggestLess(account: account, conversation: id)
                ) { _ in true }
            case .identifier(let id):
                // The blocks its key is listed for, read inside the transaction; the identifier's bytes decide.
                return try deleteDonations(
                    inBlocksWhere: {
                        let blocks = try IdentifierIndex(database: database).blocks(for: StableHash.key(account, id))
                        return "c.account = ?1 AND b.id IN (\(blocks.map(String.init).joined(separator: ",")))"
                    }, [], account: account
                ) { $0.identifier.hasSameBytes(as: id) }
            case .groupIdentifier(let id):
                // Through the conversations that have the group identifier (`conversation_groups`).
                return try deleteDonations(
                    inBlocksWhere: {
                        "+c.account = ?1 AND b.conversation_id IN (SELECT conversation_id FROM conversation_groups "
                            + "WHERE account = ?1 AND group_identifier = ?2)"
                    }, [.text(id)], account: account
                ) { $0.groupIdentifier?.hasSameBytes(as: id) == true }
            case .before(let date):
                // Through the blocks' dates: the account's every block would be read through its conversations.
                return try deleteDonations(
                    inBlocksWhere: { "+c.account = ?1 AND b.oldest_date < ?2" }, [.real(date.seconds)], account: account
                ) { $0.date < date.seconds }
            case .all:
                return try deleteDonations(
                    inBlocksWhere: { "c.account = ?1" }, [], account: account,
                    forgetting: .suggestLess(account: account, conversation: nil)
                ) { _ in true }
            case .account:
                return try deleteDonations(
                    inBlocksWhere: { "c.account = ?1" }, [], account: account, forgetting: .everything(account: account)
                ) { _ in true }
            }
        }
    }

    /// The preferences a deletion forgets besides those of the conversations it removes (in its transaction, after
    /// them, whether or not the conversations had donations).
    enum PreferencesForgotten {
        /// "Suggest Less" of the conversation, or of all the account's (`conversation` nil): it was about them. A
        /// block is a standing choice and stays.
        case suggestLess(account: String, conversation: String?)
        /// Every preference of the account, blocks too: the whole account goes.
        case everything(account: String)

        /// Runs the change (the rows it leaves with neither a block nor "suggest less" are for the caller to delete).
        /// - Returns: how many rows it changed.
        func apply(in database: Database) throws -> Int {
            switch self {
            case .suggestLess(let account, let conversation):
                try database.statement(
                    "UPDATE preferences SET less_feedback = 0 WHERE account = ?1 AND less_feedback != 0"
                        + (conversation == nil ? "" : " AND conversation_identifier = ?2")
                ).run([.text(account)] + (conversation.map { [.text($0)] } ?? []))
                return database.changes
            case .everything(let account):
                // Rows left with nothing (a removed conversation's "suggest less", set to 0 before) are gone all the
                // same, but are not counted: the removed conversation accounts for them.
                let choices = try database.statement(
                    "SELECT COUNT(*) FROM preferences WHERE account = ? AND (blocked != 0 OR less_feedback != 0)"
                ).scalarInt([.text(account)]) ?? 0
                try database.statement("DELETE FROM preferences WHERE account = ?").run([.text(account)])
                return Int(choices)
            }
        }
    }

    /// Deletes every donation of every account, every preference and every derived row: an empty store, vacuumed
    /// (when the rewrite cannot be done at once, on a full disk, behind another process's write or a server's
    /// pacing, the file keeps its size until a later command or checkpoint rewrites it: the freed pages are
    /// overwritten all the same).
    ///
    /// On a full disk, a store whose wipe does not fit in the reserve's room is wiped in steps (`wipeInSteps`).
    public func deleteEverything() throws -> DeletionReport {
        do {
            return try reserve.run { try deleteEverythingTranslating() }
        } catch let error as StoreError where error.kind == .diskFull {
            return try wipeInSteps()
        }
    }

    /// Every table of the store that holds donations, what was derived from them, or preferences, with the columns
    /// that name a row: what a wipe deletes (in steps, a few hundred rows at a time, on a full disk).
    private static let wipedTables: [(table: String, key: String)] = [
        ("donation_blocks", "rowid"), ("donation_identifiers", "rowid"), ("snapshots", "rowid"),
        ("conversation_content", "conversation_id, kind"),
        ("conversation_people", "account, person_key, conversation_id"),
        ("conversation_groups", "account, group_identifier, conversation_id"), ("conversations", "rowid"),
        ("preferences", "account, conversation_identifier"), ("learned_weights", "account"),
    ]

    /// Wipes the store a few hundred rows at a time, each step a transaction whose log is cut before the next, so
    /// that the log never needs more room than a step: what a full disk allows, where one transaction's log (the
    /// whole store's freed pages, overwritten) does not fit even in the reserve's room (a store of 21 MB is enough for that).
    /// Not all or nothing: a wipe cut short (a kill, another process's read holding the log) leaves part of the
    /// store, and running it again finishes it.
    private func wipeInSteps() throws -> DeletionReport {
        let total = Int(try translating { try donationsInBlocks() })
        do {
            return try wipeInSteps(of: total)
        } catch let error as StoreError where error.kind == .diskFull {
            let left = Int((try? donationsInBlocks()) ?? Int64(total))
            throw Self.wipe(stoppedBy: error, deleted: total - left, of: total)
        }
    }

    /// A full disk's error as a wipe in steps that stopped part-way says it: its steps are committed, so "nothing
    /// was changed" (the words of a transaction that failed) would be untrue; running it again finishes it.
    private static func wipe(stoppedBy error: StoreError, deleted: Int, of total: Int) -> StoreError {
        guard deleted > 0 else { return error }
        var stopped = error
        let done = "the wipe deleted \(deleted) of \(total) donations before it stopped"
        stopped.message =
            error.message.contains("nothing was changed")
            ? error.message.replacing("nothing was changed", with: done).replacing(
                "and retry", with: "and run it again to finish")
            : error.message + " (\(done); run it again to finish)"
        return stopped
    }

    private func donationsInBlocks() throws -> Int64 {
        try database.statement("SELECT COALESCE(SUM(count), 0) FROM donation_blocks").scalarInt() ?? 0
    }

    private func wipeInSteps(of total: Int) throws -> DeletionReport {
        try translating {
            var report = DeletionReport()
            report.donations = total
            // Owed from the first step: a wipe that fails part-way leaves deleted pages in the log, and the next
            // command to find the log free cuts it (and rewrites the file: copies of rows in pages' free space).
            database.owesLogScrub = true
            database.oweFileRewrite()
            // Passes until one finds nothing: a donation another process records meanwhile goes too, block and row.
            var removedInPass = 1
            while removedInPass > 0 {
                removedInPass = 0
                for (table, key) in Self.wipedTables {
                    while true {
                        let removed = try database.write {
                            try database.execute(
                                "DELETE FROM \(table) WHERE (\(key)) IN (SELECT \(key) FROM \(table) LIMIT 256)")
                            return database.changes
                        }
                        _ = try truncateLogIfIdle()
                        removedInPass += removed
                        if removed == 0 { break }
                    }
                }
            }
            report.logTruncated = eraseDeletedBytes()
            return report
        }
    }

    private func deleteEverythingTranslating() throws -> DeletionReport {
        try translating {
            // The log first, while there is room: a commit whose checkpoint failed on the full disk (an import
            // that filled it) leaves frames the database file must grow to take, and until they are copied no
            // log can be started over. Failing here hands the wipe to the reserve's room; failing again there,
            // to `wipeInSteps`, whose steps can cut the log only once it is copied (the step after an import that
            // filled the disk deleted 57,000 donations of 154,000, then stopped with the log at 12 MB).
            _ = try truncateLogIfIdle()
            var report = DeletionReport()
            report.donations = Int(try donationsInBlocks())
            try database.write {
                try database.execute(Self.wipedTables.map { "DELETE FROM \($0.table);" }.joined(separator: " "))
                // Before the commit, as every deletion does: a rewrite that cannot be done now (a full disk, another
                // process's write held past the busy timeout, a server's pacing, a kill) is left to the next command
                // or checkpoint, and the wipe, committed, is not reported as failed.
                database.oweFileRewrite()
            }
            // Only the file's shrinking waits on the rewrite: a wipe leaves no row whose copy a page could keep, and
            // `secure_delete` zeroed every page it freed. The log is what may hold deleted bytes.
            _ = database.rewriteAfterDeletion(paced: rewritePacing)
            report.logTruncated = scrubLog()
            return report
        }
    }

    /// What a deletion does to the learned weights of the accounts it took donations from.
    enum WeightsAfterDeletion {
        /// Folds them again from the remaining donations, in the deletion's transaction.
        case fold
        /// Marks them to be folded by a later maintenance step (an expiry step that stops part-way: the fold, a
        /// pass over the account's whole log, is done once, when the expiry is complete).
        case mark
    }

    /// Deletes the donations that `matches` selects in the blocks that `condition` selects (over `donation_blocks b`
    /// joined with their `conversations c`; parameters: `?1` the account when given, then `parameters`), rewriting
    /// each block without them, then recomputes the conversations they fed and the learned weights of their
    /// accounts.
    /// - Parameters:
    ///   - condition: made inside the write transaction, so that what it reads is what is deleted from.
    ///   - weights: fold the accounts' weights now, or mark them to be folded.
    ///   - preferences: what preferences go too, in the same transaction (one that goes takes its bytes out of the
    ///     log as a deleted donation does).
    func deleteDonations(
        inBlocksWhere condition: () throws -> String, _ parameters: [Statement.Value], account: String?,
        weights: WeightsAfterDeletion = .fold, forgetting preferences: PreferencesForgotten? = nil,
        rewritingFile: Bool = true, matching matches: (StoredDonation) -> Bool
    ) throws -> DeletionReport {
        let bound = (account.map { [Statement.Value.text($0)] } ?? []) + parameters
        var forgotten = 0
        let report = try database.write {
            // The preferences that go besides the removed conversations' (after theirs: what it counts is what no
            // deleted donation accounts for), then the rows left with nothing.
            func forgetPreferences() throws {
                forgotten = try preferences?.apply(in: database) ?? 0
                try database.execute("DELETE FROM preferences WHERE blocked = 0 AND less_feedback = 0")
            }
            var report = DeletionReport()
            // The blocks first, then each one read and rewritten: a cursor over the table would see its own writes.
            let candidates = try database.uncachedStatement(
                """
                SELECT b.id, b.conversation_id, c.account FROM donation_blocks b
                JOIN conversations c ON c.id = b.conversation_id WHERE \(try condition())
                """)
            try candidates.reset(bound)
            var blocks: [(id: Int64, conversation: Int64, account: String)] = []
            while try candidates.step() { blocks.append((candidates.int(0), candidates.int(1), candidates.text(2) ?? "")) }
            // Sorted here rather than by an ORDER BY, which would make SQLite walk the table in id order rather than
            // use the index that the condition names.
            blocks.sort { $0.id < $1.id }
            let identifiers = IdentifierIndex(database: database)
            let read = try database.statement("SELECT donations FROM donation_blocks WHERE id = ?")
            // The conversations that lost donations, in the order their first such block was met, and their
            // accounts, by the bytes of their names.
            var ids: [Int64] = []
            var met: Set<Int64> = []
            var accounts: [[UInt8]: String] = [:]
            for block in blocks {
                try read.reset([.integer(block.id)])
                guard try read.step() else { continue }
                let donations = try DonationBlock.decode(read.blob(0))
                try read.reset()
                // Each donation asked once.
                var kept: [StoredDonation] = []
                var removed = 0
                for donation in donations {
                    if matches(donation) {
                        removed += 1
                        try identifiers.remove(StableHash.key(block.account, donation.identifier), block: block.id)
                    } else {
                        kept.append(donation)
                    }
                }
                guard removed > 0 else { continue }
                if kept.isEmpty {
                    try database.statement("DELETE FROM donation_blocks WHERE id = ?").run([.integer(block.id)])
                } else {
                    var encoder = DonationBlock.Encoder()
                    for donation in kept { encoder.append(donation) }
                    try BlockLog.update(
                        block.id, oldestDate: kept.map(\.date).min()!, count: kept.count, donations: encoder.bytes,
                        in: database)
                }
                report.donations += removed
                if met.insert(block.conversation).inserted { ids.append(block.conversation) }
                accounts[Array(block.account.utf8)] = block.account
            }
            // Entries removed only: the store's size matters to additions alone.
            try identifiers.write(storeSize: 0)
            guard !ids.isEmpty else {
                if preferences != nil { try forgetPreferences() }
                if rewritingFile && forgotten > 0 { database.oweFileRewrite() }
                return report
            }
            let name = try database.statement("SELECT conversation_identifier, account FROM conversations WHERE id = ?")
            for id in ids {
                try name.reset([.integer(id)])
                let found = try name.step()
                let identifier = found ? name.text(0) ?? "" : ""
                let owner = found ? name.text(1) ?? "" : ""
                try name.reset()
                report.conversations.append(identifier)
                if try !recompute(conversationID: id) {
                    report.removedConversations.append(identifier)
                    // "Suggest Less" was about the deleted conversation; a block is a standing choice and stays.
                    try database.statement(
                        "UPDATE preferences SET less_feedback = 0 WHERE account = ? AND conversation_identifier = ?"
                    ).run([.text(owner), .text(identifier)])
                }
            }
            try forgetPreferences()
            for (_, name) in accounts.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                switch weights {
                case .fold: try refoldWeights(account: name)
                case .mark: try LearnedWeightsTable.mark(account: name, in: database)
                }
            }
            report.conversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            report.removedConversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            // Before the commit: a process killed after it leaves the rewrite, or the cut of the log, to the next one.
            if rewritingFile { database.oweFileRewrite() } else { database.owesLogScrub = true }
            return report
        }
        var finished = report
        finished.preferencesForgotten = forgotten > 0
        if report.donations > 0 || forgotten > 0 {
            finished.logTruncated = rewritingFile ? eraseDeletedBytes() : scrubLog()
        }
        return finished
    }

    /// Rewrites the database file after a deletion (`Database.rewriteAfterDeletion()`: no copy of a deleted row
    /// stays in a page's free space), then cuts the log (`scrubLog()`).
    /// - Returns: whether both were done: `false` leaves what is owed to the next command, checkpoint or deletion.
    func eraseDeletedBytes() -> Bool {
        let rewritten = database.rewriteAfterDeletion(paced: rewritePacing)
        return scrubLog() && rewritten
    }

    /// Does the rewrite a deletion owes (`Database.owesFileRewrite`), if one is owed and this connection may write,
    /// and if it can at once: without waiting for another process's write, and with one try at cutting the log;
    /// else leaves the debt for a later opener or checkpoint.
    /// - Returns: whether the file was rewritten and the log cut.
    @discardableResult
    func settleOwedRewrite() -> Bool {
        guard database.owesFileRewrite, !database.isReadOnly, database.rewriteAfterDeletion(waiting: false) else {
            return false
        }
        return (try? truncateLogIfIdle()) ?? false
    }

    /// Truncates the log if no other connection is using it at this moment; never waits for a reader, and this
    /// process's writers wait for it on their own lock, not in SQLite's busy handler.
    func truncateLogIfIdle() throws -> Bool {
        try database.excludingWriters { try database.withoutWaiting { try truncateLog() } }
    }

    /// Starts the log over (`Database.checkpointAndRestart()`) if no other connection is reading it at this moment
    /// and at most `restartRemainderFrames` of it are still to be copied into the database: those are copied and
    /// the database flushed while this process's writers wait, so they must be few. A server's group of requests
    /// commits tens of thousands of frames at once (bodies of 3,000 donations from 20 connections); when the
    /// restart copied such a group, the writer waited about 200 ms, an eighth of its time. Such a log is started
    /// over by the commit that takes it past the server's limit instead (`startLogOverAfterCommits`).
    /// - Returns: `false` when a reader keeps the log busy, or more is left to copy.
    func restartLogIfMostlyCopied() throws -> Bool {
        try database.excludingWriters {
            // Read from the log's index holding this process's writers out: every process's commits count, and a
            // log started over since the last copy counts from its new start. An index that cannot be read (being
            // rewritten by another process) leaves the restart to be tried.
            let remainder = WALIndexHeader(connection: database)?.framesNotCopied ?? 0
            guard remainder <= Self.restartRemainderFrames else { return false }
            return try database.withoutWaiting { try startLogOver(cutting: false) }
        }
    }

    /// The most frames of log a restart copies while this process's writers wait (`restartLogIfMostlyCopied`):
    /// 4 MB, a few milliseconds to copy and flush.
    static let restartRemainderFrames = 1_024

    /// Empties the write-ahead log, so that no deleted byte stays in it.
    /// - Returns: `false` when another process's read keeps the log busy: the deletion is committed all the same.
    func truncateLog() throws -> Bool { try startLogOver(cutting: true) }

    /// Empties the log after a deletion (`truncateLog()`), tried again for up to a second while another connection
    /// keeps it busy (a reader's snapshot, a server's passive copy each second). Each try refuses at once instead of
    /// waiting in SQLite's busy handler: the cut holds the log's write lock while it waits for readers, so one
    /// reader of a long export stalled every writer of the store for the handler's 30 seconds.
    /// - Returns: `false` when the log stayed busy, or the cut failed (a file that cannot be written): the deletion
    ///   is committed all the same, so its caller must not hear of a failure, and the scrub is owed
    ///   (`Database.owesLogScrub`), so that the next checkpoint, or commit past the limit, cuts the log rather than
    ///   write it over in place.
    func scrubLog() -> Bool {
        let started = ContinuousClock.now
        while true {
            do {
                // This process's writers wait for each try (milliseconds) rather than keep it from ever finding
                // the log free on a busy server.
                if try truncateLogIfIdle() { return true }
            } catch {
                break
            }
            guard ContinuousClock.now - started < .seconds(1) else { break }
            var pause = timespec(tv_sec: 0, tv_nsec: 50_000_000)
            _ = nanosleep(&pause, nil)
        }
        database.owesLogScrub = true
        return false
    }

    /// Copies the log into the database and cuts it to nothing, or has the next write start it over in place.
    /// - Returns: `false` when a reader keeps the log busy.
    private func startLogOver(cutting: Bool) throws -> Bool {
        do {
            if cutting { try database.checkpointAndTruncate() } else { try database.checkpointAndRestart() }
            return true
        } catch {
            guard error.primaryCode == 5 || error.primaryCode == 6 else { throw error }  // SQLITE_BUSY, SQLITE_LOCKED
            return false
        }
    }

    /// Rebuilds one conversation's derived rows from its remaining donations, in recorded order.
    /// - Returns: `false` when no donation was left and the conversation was removed with its metadata.
    @discardableResult
    func recompute(conversationID id: Int64) throws -> Bool {
        // A conversation's blocks in order hold its donations in recording order.
        let select = try database.uncachedStatement(
            "SELECT donations FROM donation_blocks WHERE conversation_id = ? ORDER BY id")
        try select.reset([.integer(id)])
        let snapshot = try database.statement("SELECT is_group, body FROM snapshots WHERE id = ?")
        try database.statement("DELETE FROM conversation_content WHERE conversation_id = ?").run([.integer(id)])
        try database.statement("DELETE FROM conversation_people WHERE conversation_id = ?").run([.integer(id)])
        try database.statement("DELETE FROM conversation_groups WHERE conversation_id = ?").run([.integer(id)])
        let account = try database.statement("SELECT account FROM conversations WHERE id = ?")
        try account.reset([.integer(id)])
        let accountName = try account.step() ? account.text(0) ?? "" : ""
        try account.reset()
        // The people of the remaining snapshots are written as each is decoded, not gathered: a conversation's
        // snapshots that each name a thousand people would be held all at once, decoded, while the writer waits.
        let people = try database.statement(DonationWriter.insertPersonSQL)
        var conversation = DonationWriter.WorkingConversation.empty
        var snapshotIDs: Set<Int64> = []
        var known: [Int64: (isGroup: Bool, describes: Bool, serviceName: String?)] = [:]
        // The group identifiers that remaining donations carry, and no other: a deleted donation's goes with it.
        var groups = DistinctStrings()
        while try select.step() {
            for donation in try DonationBlock.decode(select.blob(0)) {
                if let group = donation.groupIdentifier { groups.insert(group) }
                let snapshotOf: (isGroup: Bool, describes: Bool, serviceName: String?)
                if let seen = known[donation.snapshotID] {
                    snapshotOf = seen
                } else {
                    try snapshot.reset([.integer(donation.snapshotID)])
                    guard try snapshot.step() else {
                        throw StoreError.damaged("a donation's snapshot")
                    }
                    let intent = try SQLiteDonationStore.decodeSnapshot(snapshot.text(1) ?? "")
                    snapshotOf = (snapshot.int(0) != 0, intent.describesConversation, intent.serviceName)
                    known[donation.snapshotID] = snapshotOf
                    try snapshot.reset()
                    for person in intent.participants {
                        for key in person.matchKeys { try people.run([.text(accountName), .text(key), .integer(id)]) }
                    }
                }
                snapshotIDs.insert(donation.snapshotID)
                DonationWriter.apply(
                    date: Timestamp(seconds: donation.date), direction: donation.direction, engaged: donation.engaged,
                    contentKinds: types.contentKinds(of: StoredDonation.contentTypes(joined: donation.contentTypes)),
                    snapshotID: donation.snapshotID, isGroup: snapshotOf.isGroup, describes: snapshotOf.describes,
                    serviceName: snapshotOf.serviceName, to: &conversation, policy: policy)
            }
        }
        guard !snapshotIDs.isEmpty else {
            try database.statement("DELETE FROM snapshots WHERE conversation_id = ?").run([.integer(id)])
            try database.statement("DELETE FROM conversations WHERE id = ?").run([.integer(id)])
            return false
        }
        // Names and pictures that no remaining donation carries go with the donations that did.
        let snapshots = try database.uncachedStatement("SELECT id FROM snapshots WHERE conversation_id = ?")
        try snapshots.reset([.integer(id)])
        var stale: [Int64] = []
        while try snapshots.step() {
            if !snapshotIDs.contains(snapshots.int(0)) { stale.append(snapshots.int(0)) }
        }
        for snapshot in stale { try database.statement("DELETE FROM snapshots WHERE id = ?").run([.integer(snapshot)]) }
        let insertGroup = try database.statement(DonationWriter.insertGroupSQL)
        for group in groups.elements { try insertGroup.run([.text(accountName), .text(group), .integer(id)]) }
        let update = try database.statement(DonationWriter.updateConversationSQL)
        try DonationWriter.write(conversation, id: id, update: update)
        try DonationWriter.writeContent(
            conversation.record, id: id, account: accountName,
            with: try database.statement(DonationWriter.writeContentSQL))
        return true
    }
}

import CSQLite
import SuggestCore

/// The rows of `learned_weights`: each account's `LearnedWeights`, read and written inside the transaction that
/// uses them (a write transaction for a change: several processes may record into one account, and each reads the
/// weights the last one committed).
enum LearnedWeightsTable {
    /// The columns of one row's weights, in the order `weights(_:)` reads them.
    static let columns = massesAndShares + ", pz0, pz1, pz2, pz3, gz0, gz1, gz2, gz3, targets"

    /// The masses and the (fresh) shares, which every schema since migration 7 has.
    private static let massesAndShares =
        "pt0, pt1, pt2, pt3, gt0, gt1, gt2, gt3, ps0, ps1, ps2, ps3, gs0, gs1, gs2, gs3"

    /// The columns of a store before migration 11, which had one share per expert: read as both its fresh and its
    /// stale share, which ranks as the version that wrote them did.
    private static let columnsBeforeStaleShares = massesAndShares + ", ps0, ps1, ps2, ps3, gs0, gs1, gs2, gs3, targets"

    /// The account's weights, or `.empty` when it has no row (an account with no donation).
    ///
    /// A store of a schema before 11, read by a process that may not write it (and so cannot migrate it), has no
    /// stale shares: each expert's one share is read as both, until a writer migrates the store and folds the
    /// weights again.
    static func read(account: String, in database: Database) throws(SQLiteError) -> LearnedWeights {
        let select: Statement
        do {
            select = try database.statement("SELECT \(columns) FROM learned_weights WHERE account = ?")
        } catch where error.primaryCode == SQLITE_ERROR && error.message.hasPrefix("no such column: pz") {
            select = try database.statement("SELECT \(columnsBeforeStaleShares) FROM learned_weights WHERE account = ?")
        }
        try select.reset([.text(account)])
        defer { _ = try? select.reset() }
        guard try select.step() else { return .empty }
        func double(_ column: Int32) -> Double { select.double(column) }
        return LearnedWeights(
            personTotals: SIMD4(double(0), double(1), double(2), double(3)),
            groupTotals: SIMD4(double(4), double(5), double(6), double(7)),
            personShares: SIMD4(double(8), double(9), double(10), double(11)),
            groupShares: SIMD4(double(12), double(13), double(14), double(15)),
            personStaleShares: SIMD4(double(16), double(17), double(18), double(19)),
            groupStaleShares: SIMD4(double(20), double(21), double(22), double(23)), targets: Int(select.int(24)))
    }

    /// The values of a row's weights, in the order of `columns`. (A `Double` in a REAL column comes back to the
    /// bit, `-∞` included; the weights never hold a NaN.)
    private static func values(_ weights: LearnedWeights) -> [Statement.Value] {
        var values: [Statement.Value] = []
        values.reserveCapacity(columnCount)
        for vector in [
            weights.personTotals, weights.groupTotals, weights.personShares, weights.groupShares,
            weights.personStaleShares, weights.groupStaleShares,
        ] {
            for index in 0..<4 { values.append(.real(vector[index])) }
        }
        values.append(.integer(Int64(weights.targets)))
        return values
    }

    /// Writes the account's weights as a recording left them: a mark to fold them again stays.
    static func write(_ weights: LearnedWeights, account: String, in database: Database) throws(SQLiteError) {
        try database.statement(
            """
            INSERT INTO learned_weights(account, \(columns), fold) VALUES (?, \(placeholders), 0)
            ON CONFLICT(account) DO UPDATE SET \(assignments)
            """
        ).run([.text(account)] + values(weights))
    }

    /// Replaces the account's weights and its mark: the fold of its history (`fold` 0), or weights to be folded
    /// again (`fold` 1: `.empty` ones, after a deletion a store with fixed weights cannot fold).
    static func replace(_ weights: LearnedWeights, account: String, fold: Bool, in database: Database)
        throws(SQLiteError)
    {
        try database.statement("INSERT OR REPLACE INTO learned_weights(account, \(columns), fold) VALUES (?, \(placeholders), ?)")
            .run([.text(account)] + values(weights) + [.integer(fold ? 1 : 0)])
    }

    /// Marks the account's weights to be folded again, keeping them until then (a row of `.empty` weights when it
    /// has none): for a store with fixed weights, which records donations without learning from them, and for an
    /// expiry that stopped part-way.
    static func mark(account: String, in database: Database) throws(SQLiteError) {
        try database.statement(
            """
            INSERT INTO learned_weights(account, \(columns), fold) VALUES (?, \(placeholders), 1)
            ON CONFLICT(account) DO UPDATE SET fold = 1
            """
        ).run([.text(account)] + values(.empty))
    }

    /// Marks every account's weights to be folded again: learned under another `LearnedPolicy`.
    static func markAll(in database: Database) throws(SQLiteError) {
        try database.execute(
            """
            UPDATE learned_weights SET fold = 1;
            INSERT OR IGNORE INTO learned_weights(account, \(columns), fold)
                SELECT DISTINCT account, \(emptyValues), 1 FROM conversations;
            """)
    }

    /// Removes the account's row: it has no donation left.
    static func delete(account: String, in database: Database) throws(SQLiteError) {
        try database.statement("DELETE FROM learned_weights WHERE account = ?").run([.text(account)])
    }

    /// How many marked accounts the upkeep reads at a time (`marked(account:after:limit:in:)`).
    static let pageOfMarkedAccounts = 256

    /// The accounts whose weights are marked to be folded again, in byte-wise order: `account` alone (if marked),
    /// or, for `nil`, at most `limit` of every one, from the first after `after`.
    ///
    /// A page, not every name: a server's upkeep folds a few hundred accounts a step, and read all the marked names
    /// (a million after an upgrade) at each one, 73 accounts a second.
    static func marked(
        account: String?, after: String? = nil, limit: Int = .max, in database: Database
    ) throws(SQLiteError) -> [String] {
        let select: Statement
        if let account {
            select = try database.statement("SELECT account FROM learned_weights WHERE fold = 1 AND account = ?")
            try select.reset([.text(account)])
        } else {
            // Two statements, not `?1 IS NULL OR account > ?1`, which SQLite answers by scanning the whole index.
            let limit = Statement.Value.integer(Int64(min(limit, Int(Int64.max))))
            let from = "SELECT account FROM learned_weights INDEXED BY learned_weights_to_fold WHERE fold = 1"
            if let after {
                select = try database.statement(from + " AND account > ? ORDER BY account LIMIT ?")
                try select.reset([.text(after), limit])
            } else {
                select = try database.statement(from + " ORDER BY account LIMIT ?")
                try select.reset([limit])
            }
        }
        defer { _ = try? select.reset() }
        var accounts: [String] = []
        while try select.step() { if let name = select.text(0) { accounts.append(name) } }
        return accounts
    }

    private static let placeholders = Array(repeating: "?", count: columnCount).joined(separator: ", ")
    /// How many columns `columns` names.
    private static let columnCount = columns.split(separator: ",").count
    private static let assignments = """
        pt0 = excluded.pt0, pt1 = excluded.pt1, pt2 = excluded.pt2, pt3 = excluded.pt3, gt0 = excluded.gt0,
        gt1 = excluded.gt1, gt2 = excluded.gt2, gt3 = excluded.gt3, ps0 = excluded.ps0, ps1 = excluded.ps1,
        ps2 = excluded.ps2, ps3 = excluded.ps3, gs0 = excluded.gs0, gs1 = excluded.gs1, gs2 = excluded.gs2,
        gs3 = excluded.gs3, pz0 = excluded.pz0, pz1 = excluded.pz1, pz2 = excluded.pz2, pz3 = excluded.pz3,
        gz0 = excluded.gz0, gz1 = excluded.gz1, gz2 = excluded.gz2, gz3 = excluded.gz3, targets = excluded.targets
        """
    /// `.empty` weights as SQL literals, in the order of `columns` (`-9e999` is `-∞` to SQLite).
    private static let emptyValues =
        (Array(repeating: "-9e999", count: 8) + Array(repeating: "0", count: columnCount - 8)).joined(separator: ", ")
}

extension SQLiteDonationStore {
    /// The fold of the account's donations in recording order (`LearnedWeights.fold`): every block of the account
    /// decoded into what the ranking needs of each donation (its snapshot's kind, a person's or a group's
    /// conversation, included), sorted by sequence number, then folded.
    ///
    /// Sorting is faster than merging the blocks as `export` does (a heap of a cursor per open block, and an
    /// account of 100k conversations has about as many open at once): a deletion in an account of 1M donations
    /// took half the time, for about 30 MB more at its peak (Benchmarks/README.md, "The learned weights in the
    /// stores").
    /// - Returns: the weights, or `nil` when the account has no donation.
    /// - Complexity: O(n log n) for n donations, one read of the account's blocks and snapshots; memory for 32
    ///   bytes a donation and one state per conversation.
    func foldWeights(account: String, policy learned: LearnedPolicy) throws -> LearnedWeights? {
        let kinds = try database.uncachedStatement(
            """
            SELECT id, is_group FROM snapshots
            WHERE conversation_id IN (SELECT id FROM conversations WHERE account = ?)
            """)
        try kinds.reset([.text(account)])
        var isGroup: [Int64: Bool] = [:]
        while try kinds.step() { isGroup[kinds.int(0)] = kinds.int(1) != 0 }
        let select = try database.uncachedStatement(
            """
            SELECT conversation_id, donations FROM donation_blocks
            WHERE conversation_id IN (SELECT id FROM conversations WHERE account = ?)
            """)
        try select.reset([.text(account)])
        var events: [FoldEvent] = []
        var damaged = false
        while try select.step() {
            let conversation = select.int(0)
            try DonationBlock.forEachEvent(in: select.blob(1)) { sequence, snapshot, date, direction, engaged in
                guard let group = isGroup[snapshot] else {
                    damaged = true
                    return
                }
                events.append(
                    FoldEvent(
                        sequence: sequence, conversation: conversation,
                        event: ConversationState.Event(
                            date: Timestamp(seconds: date), direction: direction, isEngagedSuggestion: engaged,
                            isGroup: group)))
            }
            if damaged { throw StoreError.damaged("a donation's snapshot") }
        }
        guard !events.isEmpty else { return nil }
        events.sort { $0.sequence < $1.sequence }
        return LearnedWeights.fold(events.lazy.map { (conversation: $0.conversation, event: $0.event) }, policy: learned)
            .weights
    }

    /// One donation as a fold reads it.
    private struct FoldEvent {
        var sequence: Int64
        var conversation: Int64
        var event: ConversationState.Event
    }

    /// Sets the account's weights to those of its remaining donations, inside the caller's write transaction:
    /// folded under a learned ranking, its row removed when no donation is left; under fixed weights, which cannot
    /// be folded here, `.empty` weights marked to be folded (nothing learned from a deleted donation stays).
    func refoldWeights(account: String) throws {
        guard let learned = ranking.learnedPolicy else {
            let hasDonations =
                try database.statement("SELECT 1 FROM conversations WHERE account = ? LIMIT 1").scalarInt([.text(account)])
                != nil
            if hasDonations {
                try LearnedWeightsTable.replace(.empty, account: account, fold: true, in: database)
            } else {
                try LearnedWeightsTable.delete(account: account, in: database)
            }
            return
        }
        if let weights = try foldWeights(account: account, policy: learned) {
            try LearnedWeightsTable.replace(weights, account: account, fold: false, in: database)
        } else {
            try LearnedWeightsTable.delete(account: account, in: database)
        }
    }
}

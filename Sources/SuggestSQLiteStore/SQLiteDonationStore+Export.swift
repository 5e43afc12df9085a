import SuggestCore

extension SQLiteDonationStore {
    /// Through the index of identifiers (`IdentifierIndex`): the blocks its key is listed for, the donations there
    /// compared by bytes, in one read transaction (another process may move the key from its recent row into its
    /// bucket meanwhile).
    public func conversation(ofDonation identifier: String, account: String) throws -> String? {
        try translating {
            try database.read {
                let blocks = try IdentifierIndex(database: database).blocks(for: StableHash.key(account, identifier))
                let read = try database.statement(
                    """
                    SELECT b.donations, c.conversation_identifier FROM donation_blocks b
                    JOIN conversations c ON c.id = b.conversation_id WHERE b.id = ?1 AND c.account = ?2
                    """)
                for block in blocks {
                    try read.reset([.integer(block), .text(account)])
                    defer { _ = try? read.reset() }
                    guard try read.step() else { continue }
                    let donations = try DonationBlock.decode(read.blob(0))
                    if donations.contains(where: { $0.identifier.hasSameBytes(as: identifier) }) { return read.text(1) }
                }
                return nil
            }
        }
    }

    /// Calls `body` with each stored donation of the account, oldest recorded first (the order `import` read
    /// them in), rebuilt as the donation that was recorded, minus its message text.
    /// - Complexity: O(n log b) for n donations in b blocks; memory for the blocks whose runs overlap (a block spans
    ///   at most 2^20 sequence numbers) and a bounded cache of decoded snapshots.
    public func forEachDonation(
        account: String, interruption: () throws -> Void, _ body: (Interaction) throws -> Void
    ) throws {
        try translating {
            try database.read {
                var reader = try RecordingOrderReader(database: database, account: account)
                var count = 0
                while let donation = try reader.next() {
                    count += 1
                    if count & 255 == 0 { try interruption() }
                    try body(donation)
                }
            }
        }
    }

    /// The account's donations as `forEachDonation` gives them, read as the caller asks for them, in one read
    /// transaction that stays open until the cursor is closed: the store as it was when the cursor was opened,
    /// in the memory of `forEachDonation`'s.
    /// A deletion's scrub of the log that a reader kept it from (`Database.owesLogScrub`) is done now if no reader
    /// uses the log, and a long read waits until it is: every read of the log keeps the cut from happening, so
    /// exports that overlap one another, under a stream of donations, kept a deletion's bytes in the log for as
    /// long as they went on, well past any one export's time limit.
    public func admitLongRead() throws {
        try translating {
            guard database.owesLogScrub, !database.isReadOnly else { return }
            if (try? truncateLogIfIdle()) == true, !database.owesLogScrub { return }
            throw StoreError(
                .busy, "a deletion's bytes wait in the store's log for the reads under way to end, before a new one")
        }
    }

    public func openDonationCursor(account: String) throws -> any DonationCursor {
        try translating {
            try database.execute("BEGIN DEFERRED")
            do {
                return ExportCursor(store: self, reader: try RecordingOrderReader(database: database, account: account))
            } catch {
                database.endRead()
                throw error
            }
        }
    }

    /// A read transaction's `RecordingOrderReader`, committed when closed.
    private final class ExportCursor: DonationCursor {
        private let store: SQLiteDonationStore
        private var reader: RecordingOrderReader?

        init(store: SQLiteDonationStore, reader: RecordingOrderReader) {
            self.store = store
            self.reader = reader
        }

        func next() throws -> Interaction? {
            guard reader != nil else { return nil }
            return try store.translating { try reader!.next() }
        }

        func close() {
            guard reader != nil else { return }
            reader = nil
            store.database.endRead()
        }

        deinit { close() }
    }

    /// The intent stored in a snapshot row.
    static func decodeSnapshot(_ body: String) throws -> SendMessageIntent {
        var body = body
        do {
            return try body.withUTF8 { bytes in try SendMessageIntent(jsonBytes: bytes, path: "intent") }
        } catch {
            throw StoreError.damaged("a stored snapshot (\(error))")
        }
    }

    /// How many donations the account holds.
    public func donationCount(account: String) throws -> Int {
        try translating {
            Int(
                try database.statement(
                    """
                    SELECT COALESCE(SUM(count), 0) FROM donation_blocks
                    WHERE conversation_id IN (SELECT id FROM conversations WHERE account = ?)
                    """
                ).scalarInt([.text(account)]) ?? 0)
        }
    }

    /// The accounts that have donations, in byte-wise order.
    public func accounts() throws -> [String] {
        try translating {
            let select = try database.statement("SELECT DISTINCT account FROM conversations ORDER BY account")
            try select.reset()
            var accounts: [String] = []
            while try select.step() { if let account = select.text(0) { accounts.append(account) } }
            return accounts
        }
    }
}

/// An account's donations in recording order, rebuilt from its blocks, inside a read transaction the caller holds:
/// the blocks in the order of their first donation, each a run of its conversation's donations in recording order,
/// merged by sequence number.
struct RecordingOrderReader {
    private let account: String
    /// The account's blocks, by the sequence number of their first donation: 16 bytes a block.
    private let order: [(firstSequence: Int64, id: Int64)]
    private var position = 0
    private let block: Statement
    private let snapshot: Statement
    /// Decoded snapshots by row: most donations repeat one their conversation has had before. Bounded in number and
    /// in bytes (`decodedByteLimit`), so that an account with millions of distinct snapshots, or with snapshots that
    /// each name a thousand people (168 KB of JSON each), does not hold them all: an export of 4,000 of those took
    /// 400 MB.
    private var decoded: [Int64: SendMessageIntent] = [:]
    /// About how much memory `decoded` holds: its snapshots' JSON, counted twice for their decoded strings' headers.
    private var decodedBytes = 0
    static let decodedByteLimit = 8 << 20
    private var merge = SequenceMerge()

    init(database: Database, account: String) throws {
        self.account = account
        // The account's blocks found through its conversations, and put in order here, their ids alone: read in
        // order from the sequence index, every block of the store was walked for one account's (an account of one
        // donation in a store of a million took 0.17 s, and a server's exports held every tenant's reads back);
        // and ordered by SQLite, the blocks' contents would be sorted too.
        let found = try database.uncachedStatement(
            """
            SELECT b.first_sequence, b.id FROM conversations c JOIN donation_blocks b ON b.conversation_id = c.id
            WHERE c.account = ?
            """)
        try found.reset([.text(account)])
        var order: [(firstSequence: Int64, id: Int64)] = []
        while try found.step() { order.append((found.int(0), found.int(1))) }
        self.order = order.sorted { ($0.firstSequence, $0.id) < ($1.firstSequence, $1.id) }
        block = try database.uncachedStatement("SELECT donations FROM donation_blocks WHERE id = ?")
        snapshot = try database.uncachedStatement("SELECT body FROM snapshots WHERE id = ?")
    }

    /// The next donation, or `nil` after the last.
    mutating func next() throws -> Interaction? {
        // A block joins once its first donation may be the next one: no later block can hold an earlier one.
        while position < order.count, merge.nextSequence.map({ order[position].firstSequence <= $0 }) ?? true {
            try block.reset([.integer(order[position].id)])
            guard try block.step() else { throw StoreError.damaged("a donation block that was just listed") }
            merge.add(try DonationBlock.Cursor(Array(block.blob(0))))
            try block.reset()
            position += 1
        }
        guard let donation = try merge.next() else { return nil }
        var interaction = Interaction(
            account: account, identifier: donation.identifier, groupIdentifier: donation.groupIdentifier,
            date: Timestamp(seconds: donation.date), direction: donation.direction,
            intent: try intent(snapshot: donation.snapshotID), isEngagedSuggestion: donation.engaged)
        if let types = donation.contentTypes {
            interaction.intent.contentTypes = StoredDonation.contentTypes(joined: types)
        }
        return interaction
    }

    private mutating func intent(snapshot id: Int64) throws -> SendMessageIntent {
        if let known = decoded[id] { return known }
        try snapshot.reset([.integer(id)])
        guard try snapshot.step() else { throw StoreError.damaged("a donation's snapshot") }
        let body = snapshot.text(0) ?? ""
        let intent = try SQLiteDonationStore.decodeSnapshot(body)
        try snapshot.reset()
        if decoded.count >= 16_384 || decodedBytes >= Self.decodedByteLimit {
            decoded.removeAll(keepingCapacity: true)
            decodedBytes = 0
        }
        decoded[id] = intent
        decodedBytes += 2 * body.utf8.count
        return intent
    }
}

/// Blocks' runs of donations merged into one run by sequence number: a binary heap of block cursors by their next
/// donation.
struct SequenceMerge {
    private var runs: [DonationBlock.Cursor] = []

    /// The sequence number of the donation `next()` returns, if any.
    var nextSequence: Int64? { runs.first?.current?.sequence }

    mutating func add(_ run: DonationBlock.Cursor) {
        guard run.current != nil else { return }
        runs.append(run)
        var child = runs.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard sequence(child) < sequence(parent) else { break }
            runs.swapAt(child, parent)
            child = parent
        }
    }

    mutating func next() throws(StoreError) -> StoredDonation? {
        guard let donation = runs.first?.current else { return nil }
        try runs[0].advance()
        if runs[0].current == nil {
            runs.swapAt(0, runs.count - 1)
            runs.removeLast()
        }
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < runs.count && sequence(left) < sequence(smallest) { smallest = left }
            if right < runs.count && sequence(right) < sequence(smallest) { smallest = right }
            guard smallest != parent else { break }
            runs.swapAt(parent, smallest)
            parent = smallest
        }
        return donation
    }

    private func sequence(_ run: Int) -> Int64 { runs[run].current!.sequence }
}

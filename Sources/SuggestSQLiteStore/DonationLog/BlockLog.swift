import SuggestCore

/// The donation log as one write transaction appends to it: each conversation's donations go into its latest row
/// of `donation_blocks` while that block has room (`DonationBlock.closingSize`), then into a new one.
///
/// Donations carry a sequence number in recording order (the next one kept in `settings`), and each block the
/// number of its first one, so that `export` can merge every conversation's blocks back into the order they were
/// recorded in. A new block takes the highest block number yet, and a conversation's donations are appended to its
/// highest-numbered block: its blocks, read in number order, replay its donations in recording order.
final class BlockLog {
    let database: Database
    let identifiers: IdentifierIndex
    private var nextSequence: Int64?
    private var nextBlockID: Int64?
    /// Each conversation's latest block, while it has room, by conversation id.
    private var latest: [Int64: OpenBlock] = [:]
    /// The blocks with donations not written yet, by block id: a duplicate may have to be found in one.
    private var unwritten: [Int64: OpenBlock] = [:]
    /// The encoded donations not written yet, in bytes, for `DonationWriter.heldBytes`.
    private(set) var heldBytes = 0

    static let sequenceSetting = "donations.nextSequence"

    private final class OpenBlock {
        let id: Int64
        let conversationID: Int64
        let account: String
        let firstSequence: Int64
        var oldestDate: Double
        /// The oldest date its row holds (`nil` before it has one): a row is written without its date when the date
        /// stayed, since setting an indexed column, even to the value it has, rewrites its entry in the index.
        var storedOldestDate: Double?
        var count: Int
        /// The bytes its row holds already: a block is held by what it adds to them, not by its whole row, so that
        /// a transaction that adds to thousands of conversations holds about what it adds.
        var storedSize: Int
        /// The donations added since the row was last written, coded after its last one.
        var encoder: DonationBlock.Encoder
        /// Whether the block has a row already (updated when written) or not (inserted).
        var isStored: Bool
        /// Whether it holds donations its row does not have yet (it is then in `unwritten`).
        var isDirty = false

        init(
            id: Int64, conversationID: Int64, account: String, firstSequence: Int64, oldestDate: Double, count: Int,
            storedSize: Int, encoder: DonationBlock.Encoder, isStored: Bool
        ) {
            self.id = id
            self.conversationID = conversationID
            self.account = account
            self.firstSequence = firstSequence
            self.oldestDate = oldestDate
            storedOldestDate = isStored ? oldestDate : nil
            self.count = count
            self.storedSize = storedSize
            self.encoder = encoder
            self.isStored = isStored
        }

        /// Its size once written.
        var size: Int { storedSize + encoder.bytes.count }
    }

    init(database: Database) {
        self.database = database
        identifiers = IdentifierIndex(database: database)
    }

    /// Appends one donation to its conversation's latest block, and lists its identifier there.
    /// - Parameters:
    ///   - isNewConversation: created by this transaction, so that no stored block can be its latest.
    ///   - identifierKey: `StableHash.key(account, identifier)`.
    ///   - sequence: the donation's sequence number when it has one already (migration 4 keeps the row ids); by
    ///     default the next one. The next one is then past every sequence number given.
    /// - Returns: the block's id.
    @discardableResult
    func append(
        conversationID: Int64, account: String, isNewConversation: Bool, identifier: String, identifierKey: Int64,
        snapshotID: Int64, groupIdentifier: String?, date: Double, direction: InteractionDirection, engaged: Bool,
        contentTypes: [String], sequence given: Int64? = nil
    ) throws -> Int64 {
        let sequence: Int64
        if let given {
            sequence = given
            nextSequence = max(try nextSequence ?? storedNextSequence(), given + 1)
        } else {
            sequence = try takeSequence()
        }
        var block = latest[conversationID]
        if block == nil && !isNewConversation {
            block = try storedLatestBlock(of: conversationID, account: account)
        }
        if let full = block, !DonationBlock.takes(sequence, size: full.size, firstSequence: full.firstSequence) {
            try write(full)
            block = nil
        }
        let open: OpenBlock
        if let block {
            open = block
        } else {
            open = OpenBlock(
                id: try takeBlockID(), conversationID: conversationID, account: account, firstSequence: sequence,
                oldestDate: date, count: 0, storedSize: 0, encoder: DonationBlock.Encoder(),
                isStored: false)
            latest[conversationID] = open
        }
        let sizeBefore = open.encoder.bytes.count
        open.encoder.append(
            sequence: sequence, identifier: identifier, snapshotID: snapshotID, groupIdentifier: groupIdentifier,
            date: date, direction: direction, engaged: engaged, contentTypes: contentTypes)
        heldBytes += open.encoder.bytes.count - sizeBefore
        open.count += 1
        open.oldestDate = min(open.oldestDate, date)
        if !open.isDirty {
            open.isDirty = true
            unwritten[open.id] = open
        }
        identifiers.add(identifierKey, block: open.id)
        return open.id
    }

    /// Writes the conversation's latest block if it has unwritten donations, and forgets it: for a caller that
    /// appends conversation after conversation (migration 4), so that only one block is held at a time. Its next
    /// donation in this transaction would start a new block.
    func finish(conversationID: Int64) throws(SQLiteError) {
        guard let block = latest.removeValue(forKey: conversationID) else { return }
        try write(block)
    }

    /// Whether `block` holds a donation of `account` with this identifier: unwritten donations included.
    func holds(identifier: String, account: String, block: Int64) throws -> Bool {
        if let open = unwritten[block] {
            guard open.account.hasSameBytes(as: account) else { return false }
            if try open.encoder.contains(identifier: identifier) { return true }
            guard open.isStored else { return false }
        }
        let select = try database.statement(
            """
            SELECT b.donations, c.account FROM donation_blocks b JOIN conversations c ON c.id = b.conversation_id
            WHERE b.id = ?
            """)
        try select.reset([.integer(block)])
        defer { _ = try? select.reset() }
        // Accounts compared byte for byte, as SQL compares them: `==` would take canonically equivalent ones as one.
        guard try select.step(), select.text(1)?.hasSameBytes(as: account) == true else { return false }
        return try DonationBlock.contains(identifier: identifier, in: select.blob(0))
    }

    /// Writes every block with unwritten donations, the identifiers added and the next sequence number, and
    /// forgets the blocks: a conversation's next donation reads its latest block back. Call before committing.
    func flush() throws(SQLiteError) {
        for block in unwritten.values.sorted(by: { $0.id < $1.id }) { try write(block) }
        latest.removeAll()
        heldBytes = 0
        try writeIdentifiers()
        if let nextSequence { try database.setSetting(Self.sequenceSetting, String(nextSequence)) }
    }

    /// Writes the identifiers added (`IdentifierIndex.write`), for a store of as many donations as were ever
    /// recorded in it: what retention and deletion removed only makes the estimate high.
    func writeIdentifiers() throws(SQLiteError) {
        // Read, not kept in `nextSequence`: a transaction that recorded nothing (a duplicate) writes nothing.
        var next = nextSequence
        if next == nil { next = try storedNextSequence() }
        try identifiers.write(storeSize: Int(next! - 1))
    }

    private func write(_ block: OpenBlock) throws(SQLiteError) {
        guard block.isDirty else { return }
        block.isDirty = false
        unwritten[block.id] = nil
        if block.isStored {
            let date = block.oldestDate == block.storedOldestDate ? nil : block.oldestDate
            try append(block.encoder.bytes, to: block.id, oldestDate: date, count: block.count)
            block.storedOldestDate = block.oldestDate
        } else {
            try database.statement(
                """
                INSERT INTO donation_blocks(id, conversation_id, first_sequence, oldest_date, count, donations)
                VALUES (?, ?, ?, ?, ?, ?)
                """
            ).run([
                .integer(block.id), .integer(block.conversationID), .integer(block.firstSequence),
                .real(block.oldestDate), .integer(Int64(block.count)), .blob(block.encoder.bytes),
            ])
            block.isStored = true
            block.storedOldestDate = block.oldestDate
        }
        heldBytes -= block.encoder.bytes.count
        block.storedSize = block.size
        block.encoder.removeWritten()
    }

    /// Appends donations to a stored block's row, with its new count (and oldest date, unless `nil`).
    ///
    /// SQLite's `||` joins the row's bytes and these where the row lies, without a copy in the writer. Of two blobs
    /// it makes text of the same bytes (a blob is not transcoded), which the `CAST` gives back as a blob.
    private func append(_ donations: [UInt8], to id: Int64, oldestDate: Double?, count: Int) throws(SQLiteError) {
        if let oldestDate {
            try database.statement(
                """
                UPDATE donation_blocks SET oldest_date = ?2, count = ?3, donations = CAST(donations || ?4 AS BLOB)
                WHERE id = ?1
                """
            ).run([.integer(id), .real(oldestDate), .integer(Int64(count)), .blob(donations)])
        } else {
            try database.statement(
                "UPDATE donation_blocks SET count = ?2, donations = CAST(donations || ?3 AS BLOB) WHERE id = ?1"
            ).run([.integer(id), .integer(Int64(count)), .blob(donations)])
        }
    }

    /// Rewrites a stored block's donations after a deletion took some of them: its number and first sequence number
    /// stay.
    static func update(
        _ id: Int64, oldestDate: Double, count: Int, donations: [UInt8], in database: Database
    ) throws(SQLiteError) {
        try database.statement("UPDATE donation_blocks SET oldest_date = ?2, count = ?3, donations = ?4 WHERE id = ?1")
            .run([.integer(id), .real(oldestDate), .integer(Int64(count)), .blob(donations)])
    }

    /// The conversation's highest-numbered stored block, which its next donation joins if it has room.
    private func storedLatestBlock(of conversationID: Int64, account: String) throws -> OpenBlock? {
        let select = try database.statement(
            """
            SELECT id, first_sequence, oldest_date, count, donations FROM donation_blocks WHERE conversation_id = ?
            ORDER BY id DESC LIMIT 1
            """)
        try select.reset([.integer(conversationID)])
        defer { _ = try? select.reset() }
        guard try select.step() else { return nil }
        let stored = select.blob(4)
        let block = OpenBlock(
            id: select.int(0), conversationID: conversationID, account: account, firstSequence: select.int(1),
            oldestDate: select.double(2), count: Int(select.int(3)), storedSize: stored.count,
            encoder: try DonationBlock.Encoder(following: stored), isStored: true)
        latest[conversationID] = block
        return block
    }

    private func takeSequence() throws(SQLiteError) -> Int64 {
        if nextSequence == nil { nextSequence = try storedNextSequence() }
        defer { nextSequence! += 1 }
        return nextSequence!
    }

    private func storedNextSequence() throws(SQLiteError) -> Int64 {
        try database.setting(Self.sequenceSetting).flatMap { Int64($0) } ?? 1
    }

    private func takeBlockID() throws -> Int64 {
        if nextBlockID == nil {
            nextBlockID =
                try database.statement("SELECT COALESCE(MAX(id), 0) + 1 FROM donation_blocks").scalarInt() ?? 1
        }
        guard nextBlockID! <= IdentifierIndex.largestBlock else {
            throw StoreError(.failed, "the store has used every block number; export and import it into a new store")
        }
        defer { nextBlockID! += 1 }
        return nextBlockID!
    }
}

/// Migration 4: the rows of `donations` into blocks (`DonationBlock`) and their identifiers into buckets
/// (`IdentifierIndex`), with memory that does not grow with the store: the first command of a new version may be a
/// share extension, which is killed at about 120 MB.
///
/// One pass over the rows by conversation, then recording order (`donations_by_conversation`): each
/// conversation's blocks are written as they fill, and the identifiers are merged into their buckets every
/// `identifiersPerWrite` donations. A donation keeps its row id as its sequence number: row ids are the recording
/// order.
enum BlockMigration {
    /// Identifier entries collected between two writes of the buckets: 16 MB, and as much again while `write()`
    /// groups them by bucket (a store of 1M donations moves with a peak of 44 MB).
    static let identifiersPerWrite = 1 << 20

    static func run(_ database: Database) throws {
        let identifiers = IdentifierIndex(database: database)
        identifiers.collectAdditions(expected: identifiersPerWrite)
        let select = try database.uncachedStatement(
            """
            SELECT id, conversation_id, identifier, snapshot_id, group_identifier, date, direction, engaged,
                content_types, identifier_key
            FROM donations ORDER BY conversation_id, id
            """)
        let insert = try database.statement(
            """
            INSERT INTO donation_blocks(id, conversation_id, first_sequence, oldest_date, count, donations)
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        var block: (id: Int64, conversation: Int64, firstSequence: Int64, oldestDate: Double, count: Int)?
        var encoder = DonationBlock.Encoder()
        var nextID: Int64 = 1
        var lastSequence: Int64 = 0
        func write() throws {
            guard let open = block else { return }
            try insert.run([
                .integer(open.id), .integer(open.conversation), .integer(open.firstSequence), .real(open.oldestDate),
                .integer(Int64(open.count)), .blob(encoder.bytes),
            ])
            block = nil
            encoder = DonationBlock.Encoder()
        }
        while try select.step() {
            let sequence = select.int(0)
            let conversation = select.int(1)
            let date = select.double(5)
            lastSequence = max(lastSequence, sequence)
            if let open = block,
                open.conversation != conversation
                    || !DonationBlock.takes(sequence, size: encoder.bytes.count, firstSequence: open.firstSequence)
            {
                try write()
            }
            if block == nil {
                guard nextID <= IdentifierIndex.largestBlock else {
                    throw StoreError(.failed, "the store has too many donations to move into blocks")
                }
                block = (nextID, conversation, sequence, date, 0)
                nextID += 1
            }
            block!.count += 1
            block!.oldestDate = min(block!.oldestDate, date)
            encoder.append(
                StoredDonation(
                    sequence: sequence, identifier: select.text(2) ?? "", snapshotID: select.int(3),
                    groupIdentifier: select.text(4), date: date, direction: DonationWriter.direction(select.int(6)),
                    engaged: select.int(7) != 0, contentTypes: select.text(8)))
            try identifiers.add(select.int(9), block: block!.id)
            if identifiers.collectedAdditions >= identifiersPerWrite { try identifiers.write() }
        }
        try write()
        try identifiers.write()
        try database.statement("INSERT OR REPLACE INTO settings(name, value) VALUES (?, ?)")
            .run([.text(BlockLog.sequenceSetting), .text(String(lastSequence + 1))])
    }
}

/// Migration 4: the rows of `donations` into blocks (`DonationBlock`) and their identifiers into buckets
/// (`IdentifierIndex`), with memory that does not grow with the store: the first command of a new version may be a
/// share extension, which is killed at about 120 MB.
///
/// Two passes over the rows, each in the order of one of their indexes:
/// 1. by conversation, then recording order (`donations_by_conversation`): each conversation's blocks are written
///    as they fill, numbered as they are made, and the block of every donation is noted, 4 bytes a donation;
/// 2. by identifier key (`donations_by_identifier_key`), which is bucket order: each bucket is written once whole.
///
/// A donation keeps its row id as its sequence number: row ids are the recording order.
enum BlockMigration {
    static func run(_ database: Database) throws {
        let last = try database.statement("SELECT COALESCE(MAX(id), 0) FROM donations").scalarInt() ?? 0
        let blockOf = try writeBlocks(database, rows: Int(last))
        try writeIdentifiers(database, blockOf: blockOf)
        try database.statement("INSERT OR REPLACE INTO settings(name, value) VALUES (?, ?)")
            .run([.text(BlockLog.sequenceSetting), .text(String(last + 1))])
    }

    /// Pass 1. - Returns: the block of each donation, by row id.
    private static func writeBlocks(_ database: Database, rows: Int) throws -> [UInt32] {
        var blockOf = [UInt32](repeating: 0, count: rows + 1)
        let select = try database.uncachedStatement(
            """
            SELECT id, conversation_id, identifier, snapshot_id, group_identifier, date, direction, engaged,
                content_types
            FROM donations ORDER BY conversation_id, id
            """)
        let insert = try database.statement(
            """
            INSERT INTO donation_blocks(id, conversation_id, first_sequence, oldest_date, count, donations)
            VALUES (?, ?, ?, ?, ?, ?)
            """)
        var block: (id: Int64, conversation: Int64, firstSequence: Int64, oldestDate: Double, count: Int)?
        var bytes: [UInt8] = []
        var nextID: Int64 = 1
        func write() throws {
            guard let open = block else { return }
            try insert.run([
                .integer(open.id), .integer(open.conversation), .integer(open.firstSequence), .real(open.oldestDate),
                .integer(Int64(open.count)), .blob(bytes),
            ])
            block = nil
            bytes.removeAll(keepingCapacity: true)
        }
        while try select.step() {
            let id = select.int(0)
            let conversation = select.int(1)
            let date = select.double(5)
            if let open = block, open.conversation != conversation || bytes.count >= DonationBlock.closingSize {
                try write()
            }
            if block == nil {
                block = (nextID, conversation, id, date, 0)
                nextID += 1
            }
            block!.count += 1
            block!.oldestDate = min(block!.oldestDate, date)
            DonationBlock.append(
                StoredDonation(
                    sequence: id, identifier: select.text(2) ?? "", snapshotID: select.int(3),
                    groupIdentifier: select.text(4), date: date, direction: DonationWriter.direction(select.int(6)),
                    engaged: select.int(7) != 0, contentTypes: select.text(8)),
                to: &bytes)
            guard id >= 0, Int(id) < blockOf.count, block!.id <= Int64(UInt32.max) else {
                throw StoreError(.failed, "a donation row or block number is out of range for the move into blocks")
            }
            blockOf[Int(id)] = UInt32(block!.id)
        }
        try write()
        return blockOf
    }

    /// Pass 2.
    private static func writeIdentifiers(_ database: Database, blockOf: [UInt32]) throws {
        let select = try database.uncachedStatement("SELECT identifier_key, id FROM donations ORDER BY identifier_key")
        let insert = try database.statement("INSERT INTO donation_identifiers(bucket, entries) VALUES (?, ?)")
        var bucket: Int64 = -1
        var entries: [IdentifierIndex.Entry] = []
        func write() throws {
            guard !entries.isEmpty else { return }
            entries.sort { ($0.key, $0.block) < ($1.key, $1.block) }
            try insert.run([.integer(bucket), .blob(IdentifierIndex.encode(entries))])
            entries.removeAll(keepingCapacity: true)
        }
        while try select.step() {
            let key = select.int(0)
            if IdentifierIndex.bucket(of: key) != bucket {
                try write()
                bucket = IdentifierIndex.bucket(of: key)
            }
            entries.append(IdentifierIndex.Entry(key: key, block: Int64(blockOf[Int(select.int(1))])))
        }
        try write()
    }
}

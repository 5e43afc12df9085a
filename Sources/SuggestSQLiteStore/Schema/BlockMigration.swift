import SuggestCore

/// Migration 4: the rows of `donations` into blocks (`DonationBlock`, through `BlockLog`) and their identifiers into
/// their index (`IdentifierIndex`), with memory that does not grow with the store: the first command of a new version
/// may be a share extension, which is killed at about 120 MB.
///
/// One pass over the rows by conversation, then recording order (`donations_by_conversation`): each conversation's
/// blocks are written as they fill and when the next conversation begins, and the identifiers are written into
/// the index every `identifiersPerWrite` donations. A donation keeps its row id as its sequence number: row ids
/// are the recording order.
enum BlockMigration {
    /// Identifier entries collected between two writes of the index: 16 MB, and as much again while `write()`
    /// groups them by range (a store of 1M donations moved with a peak of 44 MB).
    static let identifiersPerWrite = 1 << 20

    static func run(_ database: Database) throws {
        let log = BlockLog(database: database)
        log.identifiers.collectAdditions(expected: identifiersPerWrite)
        let select = try database.uncachedStatement(
            """
            SELECT id, conversation_id, account, identifier, identifier_key, snapshot_id, group_identifier, date,
                direction, engaged, content_types
            FROM donations ORDER BY conversation_id, id
            """)
        var conversation: Int64?
        while try select.step() {
            if let previous = conversation, previous != select.int(1) { try log.finish(conversationID: previous) }
            conversation = select.int(1)
            // No block exists before this migration: every conversation starts a new one.
            try log.append(
                conversationID: select.int(1), account: select.text(2) ?? "", isNewConversation: true,
                identifier: select.text(3) ?? "", identifierKey: select.int(4), snapshotID: select.int(5),
                groupIdentifier: select.text(6), date: select.double(7),
                direction: InteractionDirection(storedCode: UInt8(clamping: select.int(8))),
                engaged: select.int(9) != 0,
                contentTypes: StoredDonation.contentTypes(joined: select.text(10)),
                sequence: select.int(0))
            if log.identifiers.collectedAdditions >= identifiersPerWrite { try log.writeIdentifiers() }
        }
        try log.flush()
    }
}

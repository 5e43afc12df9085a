import SuggestCore

/// Migration 9: `conversations.display_date`, and each conversation pointed at the snapshot `ShownDonation` picks:
/// the latest donation that describes the conversation, where the store had pointed it at its latest donation
/// (which, for a message received with its sender only, showed no name, picture or people).
///
/// A conversation shown by a describing snapshot keeps it, dated by its latest donation; the others fold their
/// blocks in recording order. A thousand conversations are read at a time, and each one's snapshots alone, so
/// that memory does not grow with the store (the first command of a new version may be a share extension).
enum ShownSnapshotMigration {
    static let conversationsPerRead = 1_000

    static func run(_ database: Database) throws {
        let page = try database.uncachedStatement(
            "SELECT id, latest_snapshot_id, latest_date FROM conversations WHERE id > ? ORDER BY id LIMIT ?")
        let snapshots = try database.uncachedStatement("SELECT id, body FROM snapshots WHERE conversation_id = ?")
        let blocks = try database.uncachedStatement(
            "SELECT donations FROM donation_blocks WHERE conversation_id = ? ORDER BY id")
        let update = try database.uncachedStatement(
            "UPDATE conversations SET latest_snapshot_id = ?, display_date = ? WHERE id = ?")
        var after: Int64 = 0
        while true {
            try page.reset([.integer(after), .integer(Int64(conversationsPerRead))])
            var conversations: [(id: Int64, shown: Int64?, date: Double)] = []
            while try page.step() {
                conversations.append((page.int(0), page.isNull(1) ? nil : page.int(1), page.double(2)))
            }
            guard let last = conversations.last else { return }
            after = last.id
            for conversation in conversations {
                var describing: Set<Int64> = []
                try snapshots.reset([.integer(conversation.id)])
                while try snapshots.step() {
                    if try SQLiteDonationStore.decodeSnapshot(snapshots.text(1) ?? "").describesConversation {
                        describing.insert(snapshots.int(0))
                    }
                }
                if let shown = conversation.shown, describing.contains(shown) {
                    try update.run([.integer(shown), .real(conversation.date), .integer(conversation.id)])
                    continue
                }
                guard !describing.isEmpty else { continue }
                var fold = ShownDonation()
                var chosen: Int64?
                try blocks.reset([.integer(conversation.id)])
                while try blocks.step() {
                    for donation in try DonationBlock.decode(blocks.blob(0)) where describing.contains(donation.snapshotID) {
                        if fold.takes(date: Timestamp(seconds: donation.date), describes: true, isLatest: false) {
                            chosen = donation.snapshotID
                        }
                    }
                }
                if let chosen, let date = fold.describedAt {
                    try update.run([.integer(chosen), .real(date.seconds), .integer(conversation.id)])
                }
            }
        }
    }
}

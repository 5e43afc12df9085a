import SuggestCore

/// What a deletion removed.
public struct DeletionReport: Sendable, Equatable {
    /// Donations deleted.
    public var donations = 0
    /// Conversations that lost donations, in byte-wise order.
    public var conversations: [String] = []
    /// Of those, the ones with no donation left: their names, people and pictures are gone too.
    public var removedConversations: [String] = []
    /// Whether the write-ahead log was emptied at once. It is not while another process holds a long read: the
    /// deletion is committed all the same, and the log's old pages go at the next checkpoint.
    public var logTruncated = true

    public init() {}
}

/// Which donations of an account to delete (`INInteraction.delete(with:)` and friends).
public enum DeletionSelector: Sendable, Equatable {
    case conversation(String)
    case identifier(String)
    case groupIdentifier(String)
    /// Donations dated before this moment.
    case before(Timestamp)
    /// Every donation of the account.
    case all
}

extension DonationStore {
    /// Deletes the selected donations of one account, recomputes the conversations they fed from what remains,
    /// drops conversations left empty with their metadata, and truncates the WAL so that no deleted byte stays
    /// in the store's files.
    ///
    /// The recomputed state equals that of a history that never had the deleted donations: the remaining ones
    /// are replayed in the order they were recorded, as they were applied the first time.
    public func delete(_ selector: DeletionSelector, account: String) throws -> DeletionReport {
        try translating {
            let report: DeletionReport
            switch selector {
            case .conversation(let id):
                report = try deleteDonations(
                    where: "conversation_id IN (SELECT id FROM conversations WHERE account = ?1 AND "
                        + "conversation_identifier = ?2)", [.text(id)], account: account)
            case .identifier(let id):
                report = try deleteDonations(
                    where: "identifier_key = ?3 AND account = ?1 AND identifier = ?2",
                    [.text(id), .integer(StableHash.key(account, id))], account: account)
            case .groupIdentifier(let id):
                // Through the conversations that have the group identifier (`conversation_groups`), then their
                // donations: no index covers every donation's group identifier.
                report = try deleteDonations(
                    where: "conversation_id IN (SELECT conversation_id FROM conversation_groups WHERE account = ?1 AND "
                        + "group_identifier = ?2) AND account = ?1 AND group_identifier = ?2", [.text(id)],
                    account: account)
            case .before(let date):
                report = try deleteDonations(where: "account = ?1 AND date < ?2", [.real(date.seconds)], account: account)
            case .all:
                report = try deleteDonations(where: "account = ?1", [], account: account)
            }
            return report
        }
    }

    /// Deletes every donation of every account, every preference and every derived row: an empty store.
    public func wipe() throws -> DeletionReport {
        try translating {
            var report = DeletionReport()
            report.donations = Int(try database.statement("SELECT COUNT(*) FROM donations").scalarInt() ?? 0)
            try database.write {
                try database.execute(
                    """
                    DELETE FROM donations; DELETE FROM snapshots; DELETE FROM conversation_content;
                    DELETE FROM conversation_people; DELETE FROM conversation_groups; DELETE FROM conversations;
                    DELETE FROM preferences;
                    """)
            }
            try database.execute("VACUUM")
            report.logTruncated = try truncateLog()
            return report
        }
    }

    /// Deletes donations matching `condition` (parameters: `?1` the account when given, then `parameters`).
    func deleteDonations(where condition: String, _ parameters: [Statement.Value], account: String?) throws
        -> DeletionReport
    {
        let bound = (account.map { [Statement.Value.text($0)] } ?? []) + parameters
        let report = try database.write {
            var report = DeletionReport()
            let affected = try database.uncachedStatement(
                "SELECT conversation_id, COUNT(*) FROM donations WHERE \(condition) GROUP BY conversation_id")
            try affected.reset(bound)
            var ids: [Int64] = []
            while try affected.step() {
                ids.append(affected.int(0))
                report.donations += Int(affected.int(1))
            }
            guard !ids.isEmpty else { return report }
            try database.uncachedStatement("DELETE FROM donations WHERE \(condition)").run(bound)
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
            try database.execute("DELETE FROM preferences WHERE blocked = 0 AND less_feedback = 0")
            report.conversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            report.removedConversations.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            return report
        }
        var finished = report
        if report.donations > 0 { finished.logTruncated = try truncateLog() }
        return finished
    }

    /// Empties the write-ahead log, so that no deleted byte stays in it.
    /// - Returns: `false` when another process's read keeps the log busy: the deletion is committed all the same.
    func truncateLog() throws -> Bool {
        do {
            try database.checkpointAndTruncate()
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
        let select = try database.uncachedStatement(
            """
            SELECT d.date, d.direction, d.engaged, d.content_types, d.snapshot_id, s.is_group, s.body,
                d.group_identifier
            FROM donations d JOIN snapshots s ON s.id = d.snapshot_id
            WHERE d.conversation_id = ? ORDER BY d.id
            """)
        try select.reset([.integer(id)])
        var conversation = DonationWriter.WorkingConversation.empty
        var snapshotIDs: Set<Int64> = []
        var services: [Int64: String?] = [:]
        // The group identifiers that remaining donations carry, and no other: a deleted donation's goes with it.
        var groups: [String] = []
        while try select.step() {
            if let group = select.text(7), !groups.contains(group) { groups.append(group) }
            let snapshotID = select.int(4)
            if services[snapshotID] == nil {
                services[snapshotID] = try DonationStore.decodeSnapshot(select.text(6) ?? "").serviceName
            }
            snapshotIDs.insert(snapshotID)
            DonationWriter.apply(
                date: Timestamp(seconds: select.double(0)), direction: DonationWriter.direction(select.int(1)),
                engaged: select.int(2) != 0,
                contentKinds: types.contentKinds(of: select.text(3).map { $0.split(separator: "\n").map(String.init) } ?? []),
                snapshotID: snapshotID, isGroup: select.int(5) != 0, serviceName: services[snapshotID] ?? nil,
                to: &conversation, policy: policy)
        }
        try database.statement("DELETE FROM conversation_content WHERE conversation_id = ?").run([.integer(id)])
        try database.statement("DELETE FROM conversation_people WHERE conversation_id = ?").run([.integer(id)])
        try database.statement("DELETE FROM conversation_groups WHERE conversation_id = ?").run([.integer(id)])
        guard !snapshotIDs.isEmpty else {
            try database.statement("DELETE FROM snapshots WHERE conversation_id = ?").run([.integer(id)])
            try database.statement("DELETE FROM conversations WHERE id = ?").run([.integer(id)])
            return false
        }
        // Names and pictures that no remaining donation carries go with the donations that did.
        let snapshots = try database.uncachedStatement("SELECT id, body FROM snapshots WHERE conversation_id = ?")
        try snapshots.reset([.integer(id)])
        var stale: [Int64] = []
        var kept: [SendMessageIntent] = []
        while try snapshots.step() {
            if snapshotIDs.contains(snapshots.int(0)) {
                kept.append(try DonationStore.decodeSnapshot(snapshots.text(1) ?? ""))
            } else {
                stale.append(snapshots.int(0))
            }
        }
        for snapshot in stale { try database.statement("DELETE FROM snapshots WHERE id = ?").run([.integer(snapshot)]) }
        let account = try database.statement("SELECT account FROM conversations WHERE id = ?")
        try account.reset([.integer(id)])
        let accountName = try account.step() ? account.text(0) ?? "" : ""
        try account.reset()
        let people = try database.statement(DonationWriter.insertPersonSQL)
        for intent in kept {
            for person in intent.recipients {
                for key in person.matchKeys { try people.run([.text(accountName), .text(key), .integer(id)]) }
            }
        }
        let insertGroup = try database.statement(DonationWriter.insertGroupSQL)
        for group in groups { try insertGroup.run([.text(accountName), .text(group), .integer(id)]) }
        let update = try database.statement(DonationWriter.updateConversationSQL)
        try DonationWriter.write(conversation, id: id, update: update)
        let content = try database.statement(
            "INSERT INTO conversation_content(conversation_id, account, kind, sum) VALUES (?, ?, ?, ?)")
        for (kind, sum) in conversation.contentSums.sorted(by: { $0.key < $1.key }) {
            try content.run([.integer(id), .text(accountName), .text(kind), .real(sum)])
        }
        return true
    }
}

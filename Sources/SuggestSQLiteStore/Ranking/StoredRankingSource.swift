import SuggestCore

/// One account's ranking state in the store, seen through `RankingSource`: SQLite's indexes give sorted access (one
/// per channel and scope), primary-key look-ups give random access. `TopKRanker` runs on it exactly as on any other
/// source. Used inside one read transaction (`SQLiteDonationStore.withRankingSource`), which resets its cursors'
/// statements when it ends: a walk stops part-way down its lists, and a statement left stepping would hold the
/// read open, and with it the write-ahead log, which a deletion must empty.
public final class StoredRankingSource: RankingSource {
    let database: Database
    let account: String
    private var cursorStatements: [Statement] = []

    init(database: Database, account: String) {
        self.database = database
        self.account = account
    }

    /// Ends every cursor the source opened.
    func finish() {
        for statement in cursorStatements { _ = try? statement.reset() }
        cursorStatements.removeAll()
    }

    public func sortedAccess(_ lists: [SortedList]) throws -> [Cursor] {
        var cursors: [Cursor] = []
        cursors.reserveCapacity(lists.count)
        var used: [String: Int] = [:]
        for list in lists {
            // The column and index names come from an integer below 4, never from input.
            let channel = list.channel
            guard (0..<FrecencyPolicy.maximumChannels).contains(channel) else {
                throw StoreError(.failed, "the store keeps \(FrecencyPolicy.maximumChannels) channels; channel \(channel) was asked for")
            }
            let sql: String
            let values: [Statement.Value]
            switch list.scope {
            case .all:
                sql = "SELECT id, c\(channel) FROM conversations INDEXED BY conversations_by_c\(channel) "
                    + "WHERE account = ? ORDER BY c\(channel) DESC"
                values = [.text(account)]
            case .service(let service):
                sql = "SELECT id, c\(channel) FROM conversations INDEXED BY conversations_by_service_c\(channel) "
                    + "WHERE account = ? AND service_name = ? ORDER BY c\(channel) DESC"
                values = [.text(account), .text(service)]
            case .contentKind(let kind):
                sql = "SELECT conversation_id, c\(channel) FROM conversation_content "
                    + "INDEXED BY conversation_content_by_c\(channel) WHERE account = ? AND kind = ? ORDER BY c\(channel) DESC"
                values = [.text(account), .text(kind)]
            }
            // Cursors step side by side: two lists of one shape (two content kinds) need two statements.
            let instance = used[sql, default: 0]
            used[sql] = instance + 1
            let statement = try database.statement(sql, instance: instance)
            try statement.reset(values)
            cursorStatements.append(statement)
            cursors.append(Cursor(statement: statement))
        }
        return cursors
    }

    public struct Cursor: SortedAccessCursor {
        let statement: Statement

        public mutating func next() throws -> SortedEntry? {
            guard try statement.step() else { return nil }
            return SortedEntry(key: statement.double(1), conversation: ConversationHandle(rawValue: statement.int(0)))
        }
    }

    public func candidate(_ conversation: ConversationHandle, contentKinds: [String]) throws -> RankingCandidate? {
        let select = try database.statement(
            """
            SELECT c.conversation_identifier, c.c0, c.c1, c.c2, c.c3, c.last_date, c.last_outgoing_date,
                c.outgoing_count, c.incoming_count, c.engaged_count, c.is_group, c.service_name,
                COALESCE(p.blocked, 0), COALESCE(p.less_feedback, 0), c.content_total
            FROM conversations c LEFT JOIN preferences p
                ON p.account = c.account AND p.conversation_identifier = c.conversation_identifier
            WHERE c.id = ? AND c.account = ?
            """)
        try select.reset([.integer(conversation.rawValue), .text(account)])
        defer { _ = try? select.reset() }
        guard try select.step(), let identifier = select.text(0) else { return nil }
        let state = ConversationState(
            channels: SIMD4(select.double(1), select.double(2), select.double(3), select.double(4)),
            contentTotal: select.double(14), lastDate: Timestamp(seconds: select.double(5)),
            lastOutgoingDate: select.isNull(6) ? nil : Timestamp(seconds: select.double(6)),
            outgoingCount: Int(select.int(7)), incomingCount: Int(select.int(8)), engagedCount: Int(select.int(9)),
            lessFeedback: Int(select.int(13)), isBlocked: select.int(12) != 0, isGroup: select.int(10) != 0)
        let service = select.text(11)
        var sums: [Double] = []
        if !contentKinds.isEmpty {
            // One look-up for all of the conversation's kinds (a handful), not one per kind asked for (up to 32).
            sums = Array(repeating: LogSpace.zero, count: contentKinds.count)
            let content = try database.statement("SELECT kind, sum FROM conversation_content WHERE conversation_id = ?")
            try content.reset([.integer(conversation.rawValue)])
            defer { _ = try? content.reset() }
            while try content.step() {
                guard let kind = content.text(0) else { continue }
                for (index, asked) in contentKinds.enumerated() where asked.hasSameBytes(as: kind) {
                    sums[index] = content.double(1)
                }
            }
        }
        return RankingCandidate(
            conversation: conversation, conversationIdentifier: identifier, state: state, contentSums: sums,
            serviceName: service)
    }

    public func conversations(withPeople keys: [String]) throws -> [[ConversationHandle]] {
        let select = try database.statement(
            "SELECT conversation_id FROM conversation_people WHERE account = ? AND person_key = ?")
        return try keys.map { key in
            try select.reset([.text(account), .text(key)])
            var conversations: [ConversationHandle] = []
            while try select.step() { conversations.append(ConversationHandle(rawValue: select.int(0))) }
            return conversations
        }
    }

    public func conversation(identifiedBy conversationIdentifier: String) throws -> ConversationHandle? {
        try database.statement("SELECT id FROM conversations WHERE account = ? AND conversation_identifier = ?")
            .scalarInt([.text(account), .text(conversationIdentifier)]).map(ConversationHandle.init)
    }

    public func latestIntents(_ conversations: [ConversationHandle]) throws -> [SendMessageIntent?] {
        let select = try database.statement(
            "SELECT s.body FROM conversations c JOIN snapshots s ON s.id = c.latest_snapshot_id WHERE c.id = ?")
        return try conversations.map { conversation in
            try select.reset([.integer(conversation.rawValue)])
            defer { _ = try? select.reset() }
            guard try select.step(), let body = select.text(0) else { return nil }
            return try SQLiteDonationStore.decodeSnapshot(body)
        }
    }

    public func conversationCount() throws -> Int {
        Int(try database.statement("SELECT COUNT(*) FROM conversations WHERE account = ?").scalarInt([.text(account)]) ?? 0)
    }

    /// The account's row of `learned_weights`, in the query's read transaction (`.empty` without one).
    public func learnedWeights() throws -> LearnedWeights {
        try LearnedWeightsTable.read(account: account, in: database)
    }

    public func allConversations() throws -> [ConversationHandle] {
        let select = try database.statement("SELECT id FROM conversations WHERE account = ?")
        try select.reset([.text(account)])
        var conversations: [ConversationHandle] = []
        while try select.step() { conversations.append(ConversationHandle(rawValue: select.int(0))) }
        return conversations
    }
}

import SuggestCore

/// The store's ranking state seen through `RankingSource`: SQLite's indexes give sorted access, a primary-key
/// look-up gives random access. `TopKRanker` runs on it exactly as on `InMemoryRankingIndex`.
struct StoredRankingSource: RankingSource {
    let database: Database
    let account: String

    func sortedAccess(channel: Int) throws -> any SortedAccessCursor {
        // The column name comes from an integer below 4, never from input.
        precondition((0..<FrecencyPolicy.maximumChannels).contains(channel))
        let statement = try database.statement(
            "SELECT id, c\(channel) FROM conversations INDEXED BY conversations_by_c\(channel) "
                + "WHERE account = ? ORDER BY c\(channel) DESC")
        try statement.reset([.text(account)])
        return Cursor(statement: statement)
    }

    struct Cursor: SortedAccessCursor {
        let statement: Statement

        mutating func next() throws -> (key: Double, reference: Int64)? {
            guard try statement.step() else { return nil }
            return (statement.double(1), statement.int(0))
        }
    }

    func candidate(_ reference: Int64, contentKinds: [String]) throws -> RankingCandidate? {
        let select = try database.statement(
            """
            SELECT c.conversation_identifier, c.c0, c.c1, c.c2, c.c3, c.last_date, c.last_outgoing_date,
                c.outgoing_count, c.incoming_count, c.engaged_count, c.is_group, c.service_name,
                COALESCE(p.blocked, 0), COALESCE(p.less_feedback, 0), c.content_total
            FROM conversations c LEFT JOIN preferences p
                ON p.account = c.account AND p.conversation_identifier = c.conversation_identifier
            WHERE c.id = ? AND c.account = ?
            """)
        try select.reset([.integer(reference), .text(account)])
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
            let content = try database.statement(
                "SELECT sum FROM conversation_content WHERE conversation_id = ? AND kind = ?")
            for kind in contentKinds {
                try content.reset([.integer(reference), .text(kind)])
                sums.append(try content.step() ? content.double(0) : LogSpace.zero)
                try content.reset()
            }
        }
        return RankingCandidate(
            reference: reference, conversationIdentifier: identifier, state: state, contentSums: sums,
            serviceName: service)
    }

    func conversations(withPerson key: String) throws -> [Int64] {
        let select = try database.statement(
            "SELECT conversation_id FROM conversation_people WHERE account = ? AND person_key = ?")
        try select.reset([.text(account), .text(key)])
        var references: [Int64] = []
        while try select.step() { references.append(select.int(0)) }
        return references
    }

    func conversationCount() throws -> Int {
        Int(try database.statement("SELECT COUNT(*) FROM conversations WHERE account = ?").scalarInt([.text(account)]) ?? 0)
    }

    func allReferences() throws -> [Int64] {
        let select = try database.statement("SELECT id FROM conversations WHERE account = ?")
        try select.reset([.text(account)])
        var references: [Int64] = []
        while try select.step() { references.append(select.int(0)) }
        return references
    }
}

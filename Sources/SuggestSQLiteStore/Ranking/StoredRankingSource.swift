import SuggestCore

/// One account's ranking state in the store, seen through `RankingSource`: SQLite's indexes give sorted access (one
/// per channel and scope), primary-key look-ups give random access. `TopKRanker` runs on it exactly as on any other
/// source. Used inside one read transaction (`SQLiteDonationStore.withRankingSource`), which resets its cursors'
/// statements when it ends: a walk stops part-way down its lists, and a statement left stepping would hold the
/// read open, and with it the write-ahead log, which a deletion must empty.
///
/// On a store opened with a `RankingMirror`, a source may instead read the account's mirror, which holds the same
/// rows as of the store's current version: sorted and random access then read memory, and what the mirror does not
/// hold (the latest intents, the people) is read from SQLite in a read transaction that is checked to be at that
/// same version; if it is not, the query is answered again from SQLite alone (`MirrorWentStale`).
public final class StoredRankingSource: RankingSource {
    let database: Database
    let account: String
    /// The fingerprint of the store's policy (`FrecencyPolicy.stateFingerprint`): the rows follow it unless a rebuild
    /// is owed.
    let policyFingerprint: String
    private var cursorStatements: [Statement] = []
    /// The account's mirror, when the query ranks from memory; handles are then the mirror's slots.
    let mirrored: MirroredAccount?
    let mirror: RankingMirror?
    /// The content kinds of the last random access, and their indices in the mirror.
    private var askedKinds: [String] = []
    private var askedKindIndices: [Int32?] = []
    /// The account's services, once `accountServices()` has read them.
    private var services: AccountServices?

    /// What `accountServices()` found.
    private enum AccountServices {
        /// The services, `nil` for conversations without one: few enough to merge their lists.
        case few([String?])
        /// More than `mergedServicesLimit`.
        case many
    }

    /// The most services whose lists a list of all the account's conversations merges. Each is a statement stepping
    /// beside the others, and SQLite walks a connection's open cursors as it opens or closes one: 10,000 services
    /// (an app that names a service per conversation, or a hostile tenant) took a query 7.5 s and 150 MB.
    static let mergedServicesLimit = 32

    init(
        database: Database, account: String, policyFingerprint: String, mirrored: MirroredAccount? = nil,
        mirror: RankingMirror? = nil
    ) {
        self.database = database
        self.account = account
        self.policyFingerprint = policyFingerprint
        self.mirrored = mirrored
        self.mirror = mirror
    }

    /// Ends every cursor the source opened.
    func finish() {
        for statement in cursorStatements { _ = try? statement.reset() }
        cursorStatements.removeAll()
    }

    /// The columns random access reads of a conversation, with `rowSource`, in the order `row(_:)` decodes them.
    static let rowColumns = """
        c.id, c.conversation_identifier, c.c0, c.c1, c.c2, c.c3, c.last_date, c.last_outgoing_date,
            c.outgoing_count, c.incoming_count, c.engaged_count, c.is_group, c.service_name,
            COALESCE(p.blocked, 0), COALESCE(p.less_feedback, 0), c.content_total
        """

    /// The tables `rowColumns` come from.
    static let rowSource = """
        FROM conversations c LEFT JOIN preferences p
            ON p.account = c.account AND p.conversation_identifier = c.conversation_identifier
        """

    /// One conversation's row, as random access reads it.
    struct Row {
        var rowID: Int64
        var identifier: String
        var state: ConversationState
        var serviceName: String?
    }

    /// Decodes a row of `rowColumns`; the one decoding random access and the mirror share, so that both hold the
    /// same bits. `nil` for a row without an identifier (none is stored).
    static func row(_ select: Statement) -> Row? {
        guard let identifier = select.text(1) else { return nil }
        let state = ConversationState(
            channels: SIMD4(select.double(2), select.double(3), select.double(4), select.double(5)),
            contentTotal: select.double(15), lastDate: Timestamp(seconds: select.double(6)),
            lastOutgoingDate: select.isNull(7) ? nil : Timestamp(seconds: select.double(7)),
            outgoingCount: Int(select.int(8)), incomingCount: Int(select.int(9)), engagedCount: Int(select.int(10)),
            lessFeedback: Int(select.int(14)), isBlocked: select.int(13) != 0, isGroup: select.int(11) != 0)
        return Row(rowID: select.int(0), identifier: identifier, state: state, serviceName: select.text(12))
    }

    /// Runs `body`, which reads from SQLite what the mirror does not hold, in a read transaction at the mirror's
    /// version.
    /// - Throws: `MirrorWentStale` when something was committed since the mirror was checked.
    private func consistentRead<T>(_ mirrored: MirroredAccount, _ body: () throws -> T) throws -> T {
        try database.read {
            // The snapshot begins with the first read of the transaction: this one. The version is asked after it,
            // so an equal version means the snapshot holds what the mirror holds.
            _ = try database.statement("PRAGMA data_version").scalarInt()
            guard let mirror, mirror.isCurrent(mirrored) else { throw MirrorWentStale() }
            return try body()
        }
    }

    /// The slot of a row of the mirror.
    private func slot(_ mirrored: MirroredAccount, rowID: Int64) throws -> Int32 {
        // Every row the snapshot holds is in the mirror, since both are the same version.
        guard let slot = mirrored.slotsByRowID[rowID] else { throw MirrorWentStale() }
        return slot
    }

    public func sortedAccess(_ lists: [SortedList]) throws -> [Cursor] {
        if let mirrored {
            return try lists.map { list in
                guard let entries = mirrored.entries(list) else { throw MirrorWentStale() }
                return Cursor(entries: entries)
            }
        }
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
                // Each of the account's services in its own order, merged (schema 8 keeps no index of all of them);
                // past a few, every conversation of the account at once, sorted here.
                guard case .few(let services) = try accountServices() else {
                    cursors.append(Cursor(sorted: try everyConversation(inOrderOf: channel)))
                    continue
                }
                var statements: [Statement] = []
                for service in services {
                    let sql = Self.serviceListSQL(channel: channel, serviceIsNull: service == nil)
                    let instance = used[sql, default: 0]
                    used[sql] = instance + 1
                    let statement = try database.statement(sql, instance: instance)
                    try statement.reset(service.map { [.text(account), .text($0)] } ?? [.text(account)])
                    cursorStatements.append(statement)
                    statements.append(statement)
                }
                cursors.append(Cursor(merging: statements))
                continue
            case .service(let service):
                sql = Self.serviceListSQL(channel: channel, serviceIsNull: false)
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

    /// One service's conversations (or those without a service) in the order of a channel: `account`, then the
    /// service unless `serviceIsNull`, are its parameters.
    static func serviceListSQL(channel: Int, serviceIsNull: Bool) -> String {
        "SELECT id, c\(channel) FROM conversations INDEXED BY conversations_by_service_c\(channel) WHERE account = ? AND "
            + (serviceIsNull ? "service_name IS NULL" : "service_name = ?") + " ORDER BY c\(channel) DESC"
    }

    /// The account's conversations in the order of `channel`: read through a service index in one pass (its rows in
    /// the order of their services), then sorted as one index of them all would order them, equal keys lowest row id
    /// first.
    private func everyConversation(inOrderOf channel: Int) throws -> [SortedEntry] {
        let select = try database.statement(
            "SELECT id, c\(channel) FROM conversations INDEXED BY conversations_by_service_c\(channel) "
                + "WHERE account = ?")
        try select.reset([.text(account)])
        defer { _ = try? select.reset() }
        var entries: [SortedEntry] = []
        while try select.step() {
            let conversation = ConversationHandle(rawValue: select.int(0))
            entries.append(SortedEntry(key: select.double(1), conversation: conversation))
        }
        entries.sort { $0.precedes($1) }
        return entries
    }

    /// The account's services, `nil` for conversations without one, read once per source: one look-up in a service
    /// index each, stepping from one service to the next, rather than a walk of all the account's conversations;
    /// the walk stops past `mergedServicesLimit`.
    private func accountServices() throws -> AccountServices {
        if let services { return services }
        let index = "FROM conversations INDEXED BY conversations_by_service_c0 WHERE account = ?"
        var found: [String?] = []
        if try database.statement("SELECT 1 \(index) AND service_name IS NULL LIMIT 1").scalarInt([.text(account)])
            != nil
        {
            found.append(nil)
        }
        let first = try database.statement(
            "SELECT service_name \(index) AND service_name IS NOT NULL ORDER BY service_name LIMIT 1")
        let following = try database.statement(
            "SELECT service_name \(index) AND service_name > ? ORDER BY service_name LIMIT 1")
        try first.reset([.text(account)])
        var next = try first.step() ? first.text(0) : nil
        _ = try first.reset()
        while let service = next {
            found.append(service)
            guard found.count <= Self.mergedServicesLimit else {
                services = .many
                return .many
            }
            try following.reset([.text(account), .text(service)])
            next = try following.step() ? following.text(0) : nil
            _ = try following.reset()
        }
        services = .few(found)
        return .few(found)
    }

    /// Sorted access into one list: an index's rows, several indexes' rows merged, or a mirror's list.
    public struct Cursor: SortedAccessCursor {
        private enum Source {
            case statement(Statement)
            /// Lists of the same rows split by service, each in the list's order: their next entries (`nil` once
            /// one is done), read when the first entry is asked for.
            case merged([Statement], heads: [SortedEntry?]?)
            case mirror(MirroredList.Cursor)
            /// Entries read and sorted already, and the position of the next one.
            case sorted([SortedEntry], next: Int)
        }

        private var source: Source

        init(statement: Statement) { source = .statement(statement) }

        /// The entries of `statements` as one list. An index orders equal keys by row id, so equal keys are taken
        /// lowest row id first: the merged list is in exactly the order one index of all of them would give.
        init(merging statements: [Statement]) {
            source = statements.count == 1 ? .statement(statements[0]) : .merged(statements, heads: nil)
        }

        init(entries: MirroredList) { source = .mirror(MirroredList.Cursor(entries)) }

        init(sorted entries: [SortedEntry]) { source = .sorted(entries, next: 0) }

        public mutating func next() throws -> SortedEntry? {
            switch source {
            case .statement(let statement):
                return try Self.step(statement)
            case .mirror(var cursor):
                defer { source = .mirror(cursor) }
                return cursor.next()
            case .sorted(let entries, let next):
                guard next < entries.count else { return nil }
                source = .sorted(entries, next: next + 1)
                return entries[next]
            case .merged(let statements, let read):
                var heads = try read ?? statements.map { try Self.step($0) }
                var best: Int?
                for (index, head) in heads.enumerated() {
                    guard let head else { continue }
                    guard let chosen = best, let current = heads[chosen] else {
                        best = index
                        continue
                    }
                    if head.precedes(current) { best = index }
                }
                guard let best else {
                    source = .merged(statements, heads: heads)
                    return nil
                }
                let entry = heads[best]
                heads[best] = try Self.step(statements[best])
                source = .merged(statements, heads: heads)
                return entry
            }
        }

        private static func step(_ statement: Statement) throws -> SortedEntry? {
            guard try statement.step() else { return nil }
            return SortedEntry(key: statement.double(1), conversation: ConversationHandle(rawValue: statement.int(0)))
        }
    }

    public func candidate(_ conversation: ConversationHandle, contentKinds: [String]) throws -> RankingCandidate? {
        if let mirrored {
            guard conversation.rawValue >= 0, conversation.rawValue < Int64(mirrored.count) else { return nil }
            if askedKinds.count != contentKinds.count
                || !zip(askedKinds, contentKinds).allSatisfy({ $0.hasSameBytes(as: $1) })
            {
                askedKinds = contentKinds
                askedKindIndices = mirrored.kindIndices(contentKinds)
            }
            return mirrored.candidate(Int32(conversation.rawValue), handle: conversation, kinds: askedKindIndices)
        }
        let select = try database.statement(
            "SELECT \(Self.rowColumns) \(Self.rowSource) WHERE c.id = ? AND c.account = ?")
        try select.reset([.integer(conversation.rawValue), .text(account)])
        defer { _ = try? select.reset() }
        guard try select.step(), let row = Self.row(select) else { return nil }
        let state = row.state
        let identifier = row.identifier
        let service = row.serviceName
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
        if let mirrored {
            var found = keys.map { mirrored.cache.people($0) }
            let missing = found.indices.filter { found[$0] == nil }
            if !missing.isEmpty {
                let read = try consistentRead(mirrored) {
                    try missing.map { index in
                        try peopleRows(keys[index]).map { try slot(mirrored, rowID: $0) }
                    }
                }
                for (index, slots) in zip(missing, read) {
                    found[index] = slots
                    mirrored.cache.keepPeople(keys[index], slots)
                }
            }
            return found.map { ($0 ?? []).map { ConversationHandle(rawValue: Int64($0)) } }
        }
        return try keys.map { key in try peopleRows(key).map(ConversationHandle.init) }
    }

    private func peopleRows(_ key: String) throws -> [Int64] {
        let select = try database.statement(
            "SELECT conversation_id FROM conversation_people WHERE account = ? AND person_key = ?")
        try select.reset([.text(account), .text(key)])
        var rows: [Int64] = []
        while try select.step() { rows.append(select.int(0)) }
        return rows
    }

    public func conversation(identifiedBy conversationIdentifier: String) throws -> ConversationHandle? {
        let select = try database.statement("SELECT id FROM conversations WHERE account = ? AND conversation_identifier = ?")
        if let mirrored {
            return try consistentRead(mirrored) {
                try select.scalarInt([.text(account), .text(conversationIdentifier)]).map {
                    ConversationHandle(rawValue: Int64(try slot(mirrored, rowID: $0)))
                }
            }
        }
        return try select.scalarInt([.text(account), .text(conversationIdentifier)]).map(ConversationHandle.init)
    }

    public func latestIntents(_ conversations: [ConversationHandle]) throws -> [SendMessageIntent?] {
        guard let mirrored else { return try conversations.map { try latestIntent(row: $0.rawValue) } }
        var slots: [Int32] = []
        slots.reserveCapacity(conversations.count)
        for conversation in conversations {
            guard conversation.rawValue >= 0, conversation.rawValue < Int64(mirrored.count) else {
                throw MirrorWentStale()
            }
            slots.append(Int32(conversation.rawValue))
        }
        let cached = mirrored.cache.intents(slots)
        let missing = cached.indices.filter { cached[$0] == nil }
        guard !missing.isEmpty else { return cached.map { $0 ?? nil } }
        let read = try consistentRead(mirrored) {
            try missing.map { try latestIntent(row: mirrored.rowIDs[Int(slots[$0])]) }
        }
        mirrored.cache.keepIntents(zip(missing, read).map { (slots[$0], $1) })
        var intents = cached.map { $0 ?? nil }
        for (index, intent) in zip(missing, read) { intents[index] = intent }
        return intents
    }

    private func latestIntent(row: Int64) throws -> SendMessageIntent? {
        let select = try database.statement(
            "SELECT s.body FROM conversations c JOIN snapshots s ON s.id = c.latest_snapshot_id WHERE c.id = ?")
        try select.reset([.integer(row)])
        defer { _ = try? select.reset() }
        guard try select.step(), let body = select.text(0) else { return nil }
        return try SQLiteDonationStore.decodeSnapshot(body)
    }

    public func conversationCount() throws -> Int {
        if let mirrored { return mirrored.count }
        return Int(try database.statement("SELECT COUNT(*) FROM conversations WHERE account = ?").scalarInt([.text(account)]) ?? 0)
    }

    /// The account's row of `learned_weights`, in the query's read transaction (`.empty` without one).
    public func learnedWeights() throws -> LearnedWeights {
        if let mirrored { return mirrored.weights }
        return try LearnedWeightsTable.read(account: account, in: database)
    }

    /// The retention the mirror was built with, or the stored one in the query's read transaction.
    public func retention() throws -> Retention? {
        if let mirrored { return mirrored.retention }
        return try database.storedRetention()
    }

    /// Whether the mirror was built from rows of the store's policy, or the rows in the query's read transaction are.
    public func keysFollowThePolicy() throws -> Bool {
        if let mirrored { return mirrored.keysFollowThePolicy }
        return try !database.owesRebuild(to: policyFingerprint)
    }

    /// The answers kept with the mirror, when the query ranks from one: they hold for the mirror's version.
    public var rankedAnswers: RankedAnswers? { mirrored?.cache.answers }

    public func allConversations() throws -> [ConversationHandle] {
        if let mirrored { return (0..<Int64(mirrored.count)).map { ConversationHandle(rawValue: $0) } }
        let select = try database.statement("SELECT id FROM conversations WHERE account = ?")
        try select.reset([.text(account)])
        var conversations: [ConversationHandle] = []
        while try select.step() { conversations.append(ConversationHandle(rawValue: select.int(0))) }
        return conversations
    }
}

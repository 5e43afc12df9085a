import SuggestCore

/// Records donations inside one write transaction, keeping the conversations they touch in memory and writing
/// each one's state back once, at `flush()`.
///
/// One code path for `donate` (one donation) and `import` (millions): the state arithmetic is
/// `ConversationState.apply`, the same as in memory, and donations are applied in insertion order, which is the
/// order a recomputation after a deletion replays them in, so both give the same bits.
final class DonationWriter {
    private let database: Database
    private let policy: FrecencyPolicy
    private let types: UniformTypeTree
    /// The conversation rows this writer has met, by `PreparedDonation.conversationKey`. A key that two conversations
    /// share (a hash collision) sends the second one to `collidingConversationIDs`, found by its strings.
    private var conversationIDs: [Int64: KnownConversation] = [:]
    private var collidingConversationIDs: [ConversationKey: Int64] = [:]
    /// The snapshot rows this writer has met, by conversation: a repeated intent (minus content types) costs a
    /// comparison of its prepared body with the few versions its conversation has had, not a look-up.
    private var snapshots: [Int64: [KnownSnapshot]] = [:]
    /// During a large import, the identifier key of every donation in the store, with its row (or
    /// `DonationWriter.sharedKey` when two rows have the key): duplicates are found here instead of through
    /// `donations_by_identifier_key`, which the import then builds once at its end. A key that is not here cannot
    /// be a duplicate; one that is, is checked against its row's strings.
    private var knownIdentifiers: [Int64: Int64]?
    private static let sharedKey: Int64 = -1
    private var working: [Int64: WorkingConversation] = [:]
    /// Conversations this writer created: none of their snapshots can predate it, so they need no look-up.
    private var createdConversations: Set<Int64> = []
    /// The `conversation_people` rows written by this writer: a group's every new snapshot names the same people.
    private var writtenPeople: Set<PersonRow> = []
    /// The `conversation_groups` rows written by this writer, by conversation: its donations repeat one or a few
    /// group identifiers, so this compares a string or two where a set would hash one for every donation.
    private var writtenGroups: [Int64: [String]] = [:]
    private var random = SystemRandomNumberGenerator()

    private struct ConversationKey: Hashable {
        var account: String
        var conversation: String
    }

    private struct PersonRow: Hashable {
        var conversationID: Int64
        var key: String
    }


    private struct KnownConversation {
        var account: String
        var conversation: String
        var id: Int64
    }

    private struct KnownSnapshot {
        var key: Int64
        var body: [UInt8]
        var id: Int64
        var isGroup: Bool
    }

    /// A conversation's state while the transaction runs.
    struct WorkingConversation {
        var state: ConversationState
        var contentSums: [String: Double]
        var latestSnapshotID: Int64?
        var latestDate: Double
        var serviceName: String?
    }

    /// The two statements every donation runs, held here rather than found by their SQL in the connection's
    /// cache for each of millions of donations.
    private let findDuplicate: Statement
    private let insertDonation: Statement

    init(database: Database, policy: FrecencyPolicy, types: UniformTypeTree) throws(SQLiteError) {
        self.database = database
        self.policy = policy
        self.types = types
        findDuplicate = try database.statement(
            "SELECT 1 FROM donations WHERE identifier_key = ?1 AND account = ?2 AND identifier = ?3")
        insertDonation = try database.statement(
            """
            INSERT INTO donations(account, identifier, identifier_key, conversation_id, snapshot_id, group_identifier,
                date, direction, engaged, content_types) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
    }

    /// Reads the identifier key and row of every stored donation, so that `record` finds duplicates in memory and
    /// needs no index on the keys; the caller drops `donations_by_identifier_key` and builds it after the import.
    /// For an import that is large against the store: 16 bytes (and a little) a donation, and the look-up that
    /// finds nothing, which almost every donation of an import needs, costs a hash instead of a B-tree search.
    /// - Parameter capacity: how many keys the import will end with, made room for at once (growing a table of
    ///   millions of keys rehashes them all each time).
    func loadIdentifierKeys(capacity: Int) throws {
        let select = try database.uncachedStatement("SELECT identifier_key, id FROM donations")
        var known: [Int64: Int64] = [:]
        known.reserveCapacity(capacity)
        while try select.step() {
            let key = select.int(0)
            known[key] = known[key] == nil ? select.int(1) : DonationWriter.sharedKey
        }
        knownIdentifiers = known
    }

    /// Whether `identifier` is already in the account.
    private func isRecorded(_ identifier: String, key: Int64, account: String) throws -> Bool {
        // SQLite compares every row that has the key.
        func lookUp() throws -> Bool {
            try findDuplicate.scalarInt([.integer(key), .text(account), .text(identifier)]) != nil
        }
        guard let known = knownIdentifiers else { return try lookUp() }
        guard let row = known[key] else { return false }
        // Two rows share the key (a hash collision, once in billions): SQLite compares them all.
        if row == DonationWriter.sharedKey { return try lookUp() }
        let select = try database.statement("SELECT account, identifier FROM donations WHERE id = ?")
        try select.reset([.integer(row)])
        defer { _ = try? select.reset() }
        return try select.step() && select.text(0) == account && select.text(1) == identifier
    }

    /// Records one donation unless its identifier is already in the account.
    /// - Returns: the identifier recorded, or `nil` for a duplicate (a no-op, as the contract says: nothing of it
    ///   is written).
    func record(_ interaction: Interaction) throws -> String? {
        try record(DonationPreparer(types: types).prepare(interaction))
    }

    /// Records one prepared donation unless its identifier is already in the account.
    func record(_ donation: PreparedDonation) throws -> String? {
        let interaction = donation.interaction
        // Look for a duplicate before anything is written: the conversation and snapshot rows below would
        // otherwise stay behind it, names, people and all, with no donation that a deletion could find them by.
        // (Identifiers are unique by this check, inside the write transaction, not by a unique index.)
        let identifier = interaction.identifier ?? generateIdentifier()
        let identifierKey = donation.identifierKey ?? StableHash.key(interaction.account, identifier)
        if interaction.identifier != nil, try isRecorded(identifier, key: identifierKey, account: interaction.account) {
            return nil
        }
        let conversationID = try conversationID(
            key: donation.conversationKey, account: interaction.account,
            conversation: interaction.conversationIdentifier)
        let snapshot = try snapshotID(conversationID: conversationID, account: interaction.account, donation)
        let contentTypes = interaction.intent.contentTypes
        // Bound one by one: an array of ten values for each of millions of rows was an allocation and its
        // retains and releases each time.
        let insert = insertDonation
        try insert.reset()
        try insert.bind(.text(interaction.account), at: 1)
        try insert.bind(.text(identifier), at: 2)
        try insert.bind(.integer(identifierKey), at: 3)
        try insert.bind(.integer(conversationID), at: 4)
        try insert.bind(.integer(snapshot.id), at: 5)
        try insert.bind(interaction.groupIdentifier.map { .text($0) } ?? .null, at: 6)
        try insert.bind(.real(interaction.date.seconds), at: 7)
        try insert.bind(.integer(DonationWriter.code(interaction.direction)), at: 8)
        try insert.bind(.integer(interaction.isEngagedSuggestion ? 1 : 0), at: 9)
        try insert.bind(contentTypes.isEmpty ? .null : .text(contentTypes.joined(separator: "\n")), at: 10)
        while try insert.step() {}
        if let group = interaction.groupIdentifier, writtenGroups[conversationID]?.contains(group) != true {
            writtenGroups[conversationID, default: []].append(group)
            try database.statement(
                "INSERT OR IGNORE INTO conversation_groups(account, group_identifier, conversation_id) VALUES (?, ?, ?)"
            ).run([.text(interaction.account), .text(group), .integer(conversationID)])
        }
        if knownIdentifiers != nil {
            // A key already known here belongs to another identifier (it was not a duplicate): now two rows share it.
            let taken = knownIdentifiers?[identifierKey] != nil
            knownIdentifiers?[identifierKey] = taken ? DonationWriter.sharedKey : database.lastInsertRowID
        }
        if working[conversationID] == nil {
            working[conversationID] = try DonationWriter.loadConversation(conversationID, database: database)
        }
        // In place: a copy taken out and put back would copy its content sums each time they change.
        DonationWriter.apply(
            date: interaction.date, direction: interaction.direction, engaged: interaction.isEngagedSuggestion,
            contentKinds: donation.contentKinds, snapshotID: snapshot.id, isGroup: snapshot.isGroup,
            serviceName: interaction.intent.serviceName, to: &working[conversationID]!, policy: policy)
        return identifier
    }

    /// Folds one donation into a working conversation: the ranking state, the content sums and the latest
    /// metadata (a rename or a new picture shows at once; an older donation arriving late does not undo it).
    /// - Parameter contentKinds: the distinct kinds of the donation's content types (`UniformTypeTree.contentKinds`).
    static func apply(
        date: Timestamp, direction: InteractionDirection, engaged: Bool, contentKinds: [String], snapshotID: Int64,
        isGroup: Bool, serviceName: String?, to conversation: inout WorkingConversation, policy: FrecencyPolicy
    ) {
        conversation.state.apply(
            .init(date: date, direction: direction, isEngagedSuggestion: engaged, isGroup: isGroup), policy: policy)
        for kind in contentKinds {
            conversation.contentSums[kind] = ConversationState.applyContent(
                conversation.contentSums[kind] ?? LogSpace.zero, at: date, policy: policy)
        }
        if date.seconds >= conversation.latestDate {
            conversation.latestDate = date.seconds
            conversation.latestSnapshotID = snapshotID
            conversation.serviceName = serviceName
        }
    }

    /// Writes every touched conversation's state back. Call once before committing.
    func flush() throws {
        let update = try database.statement(DonationWriter.updateConversationSQL)
        let content = try database.statement(
            "INSERT OR REPLACE INTO conversation_content(conversation_id, account, kind, sum) "
                + "SELECT ?1, account, ?2, ?3 FROM conversations WHERE id = ?1")
        for (id, conversation) in working.sorted(by: { $0.key < $1.key }) {
            try DonationWriter.write(conversation, id: id, update: update)
            for (kind, sum) in conversation.contentSums.sorted(by: { $0.key < $1.key }) {
                try content.run([.integer(id), .text(kind), .real(sum)])
            }
        }
        working.removeAll()
    }

    /// Writes a conversation's derived state back; bound by `write(_:id:update:)`.
    static let updateConversationSQL = """
        UPDATE conversations SET latest_snapshot_id = ?2, latest_date = ?3, service_name = ?4,
            c0 = ?5, c1 = ?6, c2 = ?7, c3 = ?8, last_date = ?9, last_outgoing_date = ?10,
            outgoing_count = ?11, incoming_count = ?12, engaged_count = ?13, is_group = ?14, content_total = ?15
        WHERE id = ?1
        """

    static func write(_ conversation: WorkingConversation, id: Int64, update: Statement) throws {
        let state = conversation.state
        try update.run([
            .integer(id), conversation.latestSnapshotID.map { .integer($0) } ?? .null, .real(conversation.latestDate),
            conversation.serviceName.map { .text($0) } ?? .null,
            .real(state.channels[0]), .real(state.channels[1]), .real(state.channels[2]), .real(state.channels[3]),
            .real(state.lastDate.seconds), state.lastOutgoingDate.map { .real($0.seconds) } ?? .null,
            .integer(Int64(state.outgoingCount)), .integer(Int64(state.incomingCount)),
            .integer(Int64(state.engagedCount)), .integer(state.isGroup ? 1 : 0), .real(state.contentTotal),
        ])
    }

    private func conversationID(key: Int64, account: String, conversation: String) throws -> Int64 {
        if let known = conversationIDs[key] {
            if known.account == account && known.conversation == conversation { return known.id }
            if let id = collidingConversationIDs[ConversationKey(account: account, conversation: conversation)] {
                return id
            }
        }
        let select = try database.statement(
            "SELECT id FROM conversations WHERE account = ? AND conversation_identifier = ?")
        let id: Int64
        if let existing = try select.scalarInt([.text(account), .text(conversation)]) {
            id = existing
        } else {
            let empty = ConversationState.empty
            try database.statement(
                """
                INSERT INTO conversations(account, conversation_identifier, latest_date, c0, c1, c2, c3, content_total,
                    last_date, outgoing_count, incoming_count, engaged_count, is_group)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0)
                """
            ).run([
                .text(account), .text(conversation), .real(-.infinity), .real(empty.channels[0]),
                .real(empty.channels[1]), .real(empty.channels[2]), .real(empty.channels[3]),
                .real(empty.contentTotal), .real(-.infinity),
            ])
            id = database.lastInsertRowID
            createdConversations.insert(id)
            working[id] = WorkingConversation(
                state: .empty, contentSums: [:], latestSnapshotID: nil, latestDate: -.infinity, serviceName: nil)
        }
        if conversationIDs[key] == nil {
            conversationIDs[key] = KnownConversation(account: account, conversation: conversation, id: id)
        } else {
            collidingConversationIDs[ConversationKey(account: account, conversation: conversation)] = id
        }
        return id
    }

    /// The snapshot row holding what this intent (without its content types) says of its conversation, created
    /// (with its people) if new.
    private func snapshotID(conversationID: Int64, account: String, _ donation: PreparedDonation) throws -> (
        id: Int64, isGroup: Bool
    ) {
        // The latest version first: a conversation's next donation usually says what its last one said.
        let bodyKey = donation.snapshotKey
        if let known = snapshots[conversationID]?.last(where: { $0.key == bodyKey && $0.body == donation.snapshotBody }) {
            return (known.id, known.isGroup)
        }
        let intent = donation.interaction.intent
        let body = String(decoding: donation.snapshotBody, as: UTF8.self)
        let result: (id: Int64, isGroup: Bool)
        if !createdConversations.contains(conversationID),
            let existing = try database.statement(
                "SELECT id FROM snapshots WHERE conversation_id = ?1 AND body_key = ?2 AND body = ?3"
            ).scalarInt([.integer(conversationID), .integer(bodyKey), .text(body)])
        {
            result = (existing, intent.isGroup)
        } else {
            try database.statement(
                "INSERT INTO snapshots(conversation_id, body, is_group, body_key) VALUES (?, ?, ?, ?)"
            )
            .run([.integer(conversationID), .text(body), .integer(intent.isGroup ? 1 : 0), .integer(bodyKey)])
            result = (database.lastInsertRowID, intent.isGroup)
            let people = try database.statement(
                "INSERT OR IGNORE INTO conversation_people(account, person_key, conversation_id) VALUES (?, ?, ?)")
            for person in intent.recipients {
                for key in person.matchKeys
                where writtenPeople.insert(PersonRow(conversationID: conversationID, key: key)).inserted {
                    try people.run([.text(account), .text(key), .integer(conversationID)])
                }
            }
        }
        snapshots[conversationID, default: []].append(
            KnownSnapshot(key: bodyKey, body: donation.snapshotBody, id: result.id, isGroup: result.isGroup))
        return result
    }

    static func loadConversation(_ id: Int64, database: Database) throws -> WorkingConversation {
        let select = try database.statement(
            """
            SELECT c0, c1, c2, c3, last_date, last_outgoing_date, outgoing_count, incoming_count, engaged_count,
                is_group, latest_snapshot_id, latest_date, service_name, content_total FROM conversations WHERE id = ?
            """)
        try select.reset([.integer(id)])
        defer { _ = try? select.reset() }
        guard try select.step() else {
            return WorkingConversation(
                state: .empty, contentSums: [:], latestSnapshotID: nil, latestDate: -.infinity, serviceName: nil)
        }
        let state = ConversationState(
            channels: SIMD4(select.double(0), select.double(1), select.double(2), select.double(3)),
            contentTotal: select.double(13), lastDate: Timestamp(seconds: select.double(4)),
            lastOutgoingDate: select.isNull(5) ? nil : Timestamp(seconds: select.double(5)),
            outgoingCount: Int(select.int(6)), incomingCount: Int(select.int(7)), engagedCount: Int(select.int(8)),
            lessFeedback: 0, isBlocked: false, isGroup: select.int(9) != 0)
        let latestSnapshot = select.isNull(10) ? nil : select.int(10)
        let latestDate = select.double(11)
        let service = select.text(12)
        var sums: [String: Double] = [:]
        let content = try database.statement("SELECT kind, sum FROM conversation_content WHERE conversation_id = ?")
        try content.reset([.integer(id)])
        while try content.step() { if let kind = content.text(0) { sums[kind] = content.double(1) } }
        return WorkingConversation(
            state: state, contentSums: sums, latestSnapshotID: latestSnapshot, latestDate: latestDate,
            serviceName: service)
    }

    static func code(_ direction: InteractionDirection) -> Int64 {
        switch direction {
        case .unspecified: return 0
        case .outgoing: return 1
        case .incoming: return 2
        }
    }

    static func direction(_ code: Int64) -> InteractionDirection {
        switch code {
        case 1: return .outgoing
        case 2: return .incoming
        default: return .unspecified
        }
    }

    /// A random identifier in UUID form, for donations that come without one.
    private func generateIdentifier() -> String {
        let high = random.next() as UInt64
        let low = random.next() as UInt64
        let hex =
            String(high, radix: 16, uppercase: true).leftPadded(16)
            + String(low, radix: 16, uppercase: true).leftPadded(16)
        let characters = Array(hex)
        return String(characters[0..<8]) + "-" + String(characters[8..<12]) + "-" + String(characters[12..<16]) + "-"
            + String(characters[16..<20]) + "-" + String(characters[20..<32])
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}

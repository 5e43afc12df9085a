import CSystem
import SuggestCore

/// Records donations inside one write transaction, keeping the conversations they touch in memory and writing
/// each one's state back once, at `flush()`.
///
/// One code path for `donate` (one donation) and `import` (millions): the state arithmetic is
/// `ConversationState.apply`, the same as in memory, and donations are applied in insertion order, which is the
/// order a recomputation after a deletion replays them in, so both give the same bits. Under a learned ranking each
/// donation also updates its account's `LearnedWeights` (`LearnedWeights.record`, with its conversation's state just
/// before and just after it), read from `learned_weights` when the writer first meets the account and written back
/// at `flush()`, in the same transaction.
final class DonationWriter {
    private let database: Database
    private let policy: FrecencyPolicy
    private let learned: LearnedPolicy?
    private let types: UniformTypeTree
    /// Every conversation this writer has met, by `PreparedDonation.conversationKey`: one look-up per donation
    /// finds its row, working state, snapshots and group identifiers. A key that two conversations share (a hash
    /// collision) sends the second one to `collidingConversations`, found by its strings.
    private var conversations: [Int64: ConversationEntry] = [:]
    private var collidingConversations: [ConversationKey: ConversationEntry] = [:]
    /// During a large import, the identifier key of every donation in the store, with its block (or
    /// `DonationWriter.sharedKey` when two donations have the key): duplicates are found here instead of in the
    /// rows of `IdentifierIndex`. A key that is not here cannot be a duplicate; one that is, is checked against
    /// its block's identifiers.
    private var knownIdentifiers: Int64KeyTable?
    private static let sharedKey: Int64 = -1
    /// The accounts this writer has met, by the bytes of their names (as SQL compares them), each with its weights.
    private var accounts: [[UInt8]: AccountWeights] = [:]
    /// The donation log this transaction appends to, with its identifier index.
    private let log: BlockLog
    /// About how much memory the conversations met since the last `flush()` hold: their entries, names, snapshot
    /// bodies, people and group keys and content kinds (`ConversationEntry.baseBytes` and the bytes of each).
    private var entryBytes = 0
    private var random = SystemRandomNumberGenerator()
    /// How many times this writer has begun to record a donation (duplicates not counted) or written what it
    /// holds: a caller that shares the writer between pieces of work learns whether a piece that failed left
    /// anything in it, or wrote other pieces' work inside its own savepoint.
    private(set) var changeCount = 0

    /// Strings compared by their bytes, as SQL compares them.
    private struct ConversationKey: Hashable {
        var account: ByteKey
        var conversation: ByteKey

        init(account: String, conversation: String) {
            self.account = ByteKey(account)
            self.conversation = ByteKey(conversation)
        }
    }

    /// One account's learned weights while the transaction runs, shared by the entries of its conversations.
    private final class AccountWeights {
        let account: String
        var weights: LearnedWeights

        init(account: String, weights: LearnedWeights) {
            self.account = account
            self.weights = weights
        }
    }

    /// What the writer keeps of one conversation until `flush()`.
    private final class ConversationEntry {
        /// What an entry costs beyond its strings and collections: the object, its working state, the tables' slots.
        static let baseBytes = 512
        /// What each key, body or kind it holds costs beyond its bytes: an array's header and a set's slot.
        static let itemBytes = 64

        let account: String
        let conversation: String
        let id: Int64
        /// Its account's weights.
        let learning: AccountWeights
        /// Created by this writer: none of its snapshots can predate it, so they need no look-up.
        let isNew: Bool
        var working: WorkingConversation
        /// The snapshot rows met so far: a repeated intent (minus content types) costs a comparison of its
        /// prepared body with the latest version, else a look-up by its key here, not a query.
        var snapshots: [KnownSnapshot] = []
        /// Where each body key's snapshots are in `snapshots`: a group chat of thousands of senders, or a name that
        /// changes with every message, has as many versions as donations, and scanning them all made an import of
        /// 80,000 such donations take 30 s (quadratic) while it held the write lock.
        var snapshotsByKey: [Int64: [Int]] = [:]
        /// The `conversation_groups` rows written: a conversation's donations repeat one or a few identifiers, or
        /// (an app's id of each message) carry one each.
        var groups: Set<ByteKey> = []
        /// The person keys of its `conversation_people` rows written, as bytes (as SQL compares them; a `String`
        /// set would take canonically equivalent keys for one): a group's every new snapshot names the same people.
        var people: Set<[UInt8]> = []

        init(
            account: String, conversation: String, id: Int64, learning: AccountWeights, isNew: Bool,
            working: WorkingConversation
        ) {
            self.account = account
            self.conversation = conversation
            self.id = id
            self.learning = learning
            self.isNew = isNew
            self.working = working
        }
    }

    private struct KnownSnapshot {
        var body: [UInt8]
        var id: Int64
        var isGroup: Bool
        var describes: Bool
    }

    /// A conversation's state while the transaction runs: its record, and the snapshot it is shown by
    /// (`ShownDonation`), in the columns `latest_snapshot_id` and `display_date`.
    struct WorkingConversation {
        var record: ConversationRecord
        var latestSnapshotID: Int64?
        var shown = ShownDonation()
        /// The kinds of the record as it was read: those it no longer has (`ContentSums.limit`) are deleted.
        var storedKinds: [String] = []

        static let empty = WorkingConversation(record: .empty, latestSnapshotID: nil)
    }

    /// - Parameter ranking: the store's: its `base` builds the states, a learned one the accounts' weights.
    init(database: Database, ranking: StoreRanking, types: UniformTypeTree) {
        self.database = database
        policy = ranking.base
        learned = ranking.learnedPolicy
        self.types = types
        log = BlockLog(database: database)
    }

    /// Reads the identifier key and block of every stored donation, so that `record` finds duplicates in memory.
    /// For an import that is large against the store: 16 bytes (and a little) a donation, and the look-up that
    /// finds nothing, which almost every donation of an import needs, costs one probe of memory.
    /// - Parameters:
    ///   - stored, expected: how many donations the store holds, and roughly how many the import brings: room is
    ///     made for them at once (growing a table of millions of keys rehashes them all each time).
    func loadIdentifierKeys(stored: Int, expected: Int) throws {
        var known = Int64KeyTable(capacity: stored + expected)
        try log.identifiers.loadAll(expectedAdditions: expected) { entry in
            known.set(known.value(for: entry.key) == nil ? entry.block : DonationWriter.sharedKey, for: entry.key)
        }
        knownIdentifiers = known
    }

    /// Whether `identifier` is already in the account.
    /// - Parameter knownBlock: `knownIdentifiers[key]`, when the writer holds the keys (looked up once by the
    ///   caller, which updates the same entry after the append).
    private func isRecorded(_ identifier: String, key: Int64, account: String, knownBlock: Int64??) throws -> Bool {
        let candidates: [Int64]
        if let knownBlock {
            guard let block = knownBlock else { return false }
            // Two donations share the key (a hash collision, once in billions): every block listed for it is read.
            candidates = block == DonationWriter.sharedKey ? try log.identifiers.blocks(for: key) : [block]
        } else {
            candidates = try log.identifiers.blocks(for: key)
        }
        for block in candidates where try log.holds(identifier: identifier, account: account, block: block) {
            return true
        }
        return false
    }

    /// Records one donation unless its identifier is already in the account.
    /// - Returns: the identifier recorded, or `nil` for a duplicate (a no-op, as the contract says: nothing of it
    ///   is written).
    func record(_ interaction: Interaction) throws -> String? {
        try record(PreparedDonation(interaction, types: types))
    }

    /// Records one prepared donation unless its identifier is already in the account.
    func record(_ donation: borrowing PreparedDonation) throws -> String? {
        // Look for a duplicate before anything is written: the conversation and snapshot rows below would
        // otherwise stay behind it, names, people and all, with no donation that a deletion could find them by.
        // (Identifiers are unique by this check, inside the write transaction, not by a unique index.)
        let account = donation.interaction.account
        let identifier = donation.interaction.identifier ?? Interaction.generatedIdentifier(using: &random)
        let identifierKey = donation.identifierKey ?? StableHash.key(account, identifier)
        // One probe of a table of millions of keys (a cache miss), read here and written once below.
        let knownBlock: Int64?? = knownIdentifiers.map { $0.value(for: identifierKey) }
        if donation.interaction.identifier != nil,
            try isRecorded(identifier, key: identifierKey, account: account, knownBlock: knownBlock)
        {
            return nil
        }
        changeCount += 1
        let entry = try conversation(
            key: donation.conversationKey, account: account, identifier: donation.interaction.conversationIdentifier)
        let snapshot = try snapshotID(of: entry, donation)
        let block = try log.append(
            conversationID: entry.id, account: account, isNewConversation: entry.isNew, identifier: identifier,
            identifierKey: identifierKey, snapshotID: snapshot.id,
            groupIdentifier: donation.interaction.groupIdentifier,
            date: donation.interaction.date.seconds, direction: donation.interaction.direction,
            engaged: donation.interaction.isEngagedSuggestion, contentTypes: donation.interaction.intent.contentTypes)
        // Compared byte for byte: `==` takes canonically equivalent spellings for one, and the second would have no
        // row for deletion by group identifier to find its conversation by.
        if let group = donation.interaction.groupIdentifier, entry.groups.insert(ByteKey(group)).inserted {
            try database.statement(DonationWriter.insertGroupSQL).run([
                .text(account), .text(group), .integer(entry.id),
            ])
            entryBytes += group.utf8.count + ConversationEntry.itemBytes
        }
        if let knownBlock {
            // A key already known here belongs to another identifier (it was not a duplicate): now two share it.
            knownIdentifiers?.set(knownBlock == nil ? block : DonationWriter.sharedKey, for: identifierKey)
        }
        let before = entry.working.record.state
        let kindsBefore = entry.working.record.contentSums.count
        // In place: a copy taken out and put back would copy its content sums each time they change.
        DonationWriter.apply(
            date: donation.interaction.date, direction: donation.interaction.direction,
            engaged: donation.interaction.isEngagedSuggestion, contentKinds: donation.contentKinds,
            snapshotID: snapshot.id, isGroup: snapshot.isGroup, describes: snapshot.describes,
            serviceName: donation.interaction.intent.serviceName, to: &entry.working, policy: policy)
        entryBytes += (entry.working.record.contentSums.count - kindsBefore) * ConversationEntry.itemBytes
        if let learned {
            // The event `ConversationRecord.apply` built, with the snapshot's kind, as a fold of the log rebuilds it.
            entry.learning.weights.record(
                ConversationState.Event(
                    date: donation.interaction.date, direction: donation.interaction.direction,
                    isEngagedSuggestion: donation.interaction.isEngagedSuggestion, isGroup: snapshot.isGroup),
                before: before, after: entry.working.record.state, policy: learned)
        }
        return identifier
    }

    /// The weights of an account, read when the writer first meets it.
    private func learning(of account: String) throws -> AccountWeights {
        let key = Array(account.utf8)
        if let known = accounts[key] { return known }
        let weights = learned == nil ? .empty : try LearnedWeightsTable.read(account: account, in: database)
        let entry = AccountWeights(account: account, weights: weights)
        accounts[key] = entry
        return entry
    }

    /// Folds one donation into a working conversation (`ConversationRecord.apply`, the fold every store uses), and
    /// points it at the donation's snapshot when the conversation is shown by it from now on (`ShownDonation`): a
    /// rename or a new picture shows at once; a message received with its sender only leaves the name and people.
    /// - Parameters:
    ///   - contentKinds: the distinct kinds of the donation's content types (`UniformTypeTree.contentKinds`).
    ///   - describes: the snapshot's `SendMessageIntent.describesConversation`.
    static func apply(
        date: Timestamp, direction: InteractionDirection, engaged: Bool, contentKinds: [String], snapshotID: Int64,
        isGroup: Bool, describes: Bool, serviceName: String?, to conversation: inout WorkingConversation,
        policy: FrecencyPolicy
    ) {
        let isLatest = conversation.record.apply(
            date: date, direction: direction, isEngagedSuggestion: engaged, isGroup: isGroup,
            contentKinds: contentKinds,
            serviceName: serviceName, policy: policy)
        if conversation.shown.takes(date: date, describes: describes, isLatest: isLatest) {
            conversation.latestSnapshotID = snapshotID
        }
    }

    /// About how much memory the writer holds for what it has not written yet: the conversations met since the
    /// last `flush()`, the donations added to their blocks and the identifiers added to the index. An import
    /// flushes when this passes its budget (`SQLiteDonationStore.importMemoryBudget`), so that a history whose every
    /// line brings new people, kinds or names, or a piped import of millions, needs no more memory than an ordinary
    /// one. (A large import's table of identifier keys is not counted: 16 bytes a donation, kept to the end.)
    var heldBytes: Int { entryBytes + log.heldBytes + log.identifiers.heldBytes }

    /// Writes the donation log and every touched conversation's state back, and forgets them: the next donation of
    /// a conversation reads it back, as a new writer would. Call before committing, and whenever `heldBytes` is
    /// more than the caller can spare; the result is the same bits either way.
    func flush() throws {
        changeCount += 1
        try log.flush()
        let update = try database.statement(DonationWriter.updateConversationSQL)
        let content = try database.statement(DonationWriter.writeContentSQL)
        let deleteContent = try database.statement(DonationWriter.deleteContentSQL)
        let touched = Array(conversations.values) + Array(collidingConversations.values)
        for entry in touched.sorted(by: { $0.id < $1.id }) {
            try DonationWriter.write(entry.working, id: entry.id, update: update)
            let letGo = entry.working.storedKinds.filter { entry.working.record.contentSums[$0] == nil }
            for kind in letGo.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                try deleteContent.run([.integer(entry.id), .text(kind)])
            }
            try DonationWriter.writeContent(entry.working.record, id: entry.id, account: entry.account, with: content)
        }
        // Accounts in byte-wise order, so that a transaction writes its rows in one order whatever the hashing.
        for (_, account) in accounts.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            if learned != nil {
                try LearnedWeightsTable.write(account.weights, account: account.account, in: database)
            } else {
                // Recorded without learning: whoever ranks with learned weights folds them again.
                try LearnedWeightsTable.mark(account: account.account, in: database)
            }
        }
        conversations.removeAll()
        collidingConversations.removeAll()
        accounts.removeAll()
        entryBytes = 0
    }

    /// Records that a conversation includes a person, by one of their keys; bound account, key, conversation. The
    /// writer runs it for each new snapshot's people, recomputation for the snapshots that remain.
    static let insertPersonSQL =
        "INSERT OR IGNORE INTO conversation_people(account, person_key, conversation_id) VALUES (?, ?, ?)"

    /// Records that a conversation has a donation with a group identifier; bound account, group, conversation.
    static let insertGroupSQL =
        "INSERT OR IGNORE INTO conversation_groups(account, group_identifier, conversation_id) VALUES (?, ?, ?)"

    /// Writes a conversation's derived state back; bound by `write(_:id:update:)`.
    static let updateConversationSQL = """
        UPDATE conversations SET latest_snapshot_id = ?2, latest_date = ?3, service_name = ?4,
            c0 = ?5, c1 = ?6, c2 = ?7, c3 = ?8, last_date = ?9, last_outgoing_date = ?10,
            outgoing_count = ?11, incoming_count = ?12, engaged_count = ?13, is_group = ?14, content_total = ?15,
            display_date = ?16
        WHERE id = ?1
        """

    /// Writes a conversation's content sum of one kind, with its keys in that kind's lists
    /// (`ConversationState.contentListKey`): the sorted lists of a content kind (`conversation_content_by_c0`...)
    /// are an index of these rows; bound conversation, account, kind, sum, keys.
    static let writeContentSQL = """
        INSERT OR REPLACE INTO conversation_content(conversation_id, account, kind, sum, c0, c1, c2, c3)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Deletes a conversation's content sum of a kind it no longer keeps; bound conversation, kind.
    static let deleteContentSQL = "DELETE FROM conversation_content WHERE conversation_id = ? AND kind = ?"

    /// Writes every content sum of a conversation, kinds in byte-wise order.
    static func writeContent(_ record: ConversationRecord, id: Int64, account: String, with statement: Statement) throws
    {
        let state = record.state
        for (kind, sum) in record.contentSums.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            var values: [Statement.Value] = [.integer(id), .text(account), .text(kind), .real(sum)]
            for channel in 0..<4 { values.append(.real(state.contentListKey(channel: channel, kindSum: sum))) }
            try statement.run(values)
        }
    }

    static func write(_ conversation: WorkingConversation, id: Int64, update: Statement) throws {
        let state = conversation.record.state
        try update.run([
            .integer(id), conversation.latestSnapshotID.map { .integer($0) } ?? .null, .real(state.lastDate.seconds),
            conversation.record.serviceName.map { .text($0) } ?? .null,
            .real(state.channels[0]), .real(state.channels[1]), .real(state.channels[2]), .real(state.channels[3]),
            .real(state.lastDate.seconds), state.lastOutgoingDate.map { .real($0.seconds) } ?? .null,
            .integer(Int64(state.outgoingCount)), .integer(Int64(state.incomingCount)),
            .integer(Int64(state.engagedCount)), .integer(state.isGroup ? 1 : 0), .real(state.contentTotal),
            conversation.shown.describedAt.map { .real($0.seconds) } ?? .null,
        ])
    }

    /// The writer's entry for a conversation: found, or read from the store, or created there.
    private func conversation(key: Int64, account: String, identifier: String) throws -> ConversationEntry {
        if let known = conversations[key] {
            if known.account.hasSameBytes(as: account) && known.conversation.hasSameBytes(as: identifier) {
                return known
            }
            if let colliding = collidingConversations[ConversationKey(account: account, conversation: identifier)] {
                return colliding
            }
        }
        let select = try database.statement(
            "SELECT id FROM conversations WHERE account = ? AND conversation_identifier = ?")
        let entry: ConversationEntry
        if let existing = try select.scalarInt([.text(account), .text(identifier)]) {
            entry = ConversationEntry(
                account: account, conversation: identifier, id: existing, learning: try learning(of: account),
                isNew: false, working: try DonationWriter.loadConversation(existing, database: database))
        } else {
            let empty = ConversationState.empty
            try database.statement(
                """
                INSERT INTO conversations(account, conversation_identifier, latest_date, c0, c1, c2, c3, content_total,
                    last_date, outgoing_count, incoming_count, engaged_count, is_group)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0)
                """
            ).run([
                .text(account), .text(identifier), .real(-.infinity), .real(empty.channels[0]),
                .real(empty.channels[1]), .real(empty.channels[2]), .real(empty.channels[3]),
                .real(empty.contentTotal), .real(-.infinity),
            ])
            let id = database.lastInsertRowID
            entry = ConversationEntry(
                account: account, conversation: identifier, id: id, learning: try learning(of: account), isNew: true,
                working: .empty)
        }
        entryBytes +=
            ConversationEntry.baseBytes + account.utf8.count + identifier.utf8.count
            + entry.working.record.contentSums.count * ConversationEntry.itemBytes
        if conversations[key] == nil {
            conversations[key] = entry
        } else {
            collidingConversations[ConversationKey(account: account, conversation: identifier)] = entry
        }
        return entry
    }

    /// The snapshot row holding what this intent (without its content types) says of its conversation, created
    /// (with its people) if new.
    private func snapshotID(of entry: ConversationEntry, _ donation: borrowing PreparedDonation) throws -> (
        id: Int64, isGroup: Bool, describes: Bool
    ) {
        // The latest version first: a conversation's next donation usually says what its last one said.
        if let latest = entry.snapshots.last, Self.equal(latest.body, donation.snapshotBody) {
            return (latest.id, latest.isGroup, latest.describes)
        }
        let bodyKey = donation.snapshotKey
        if let known = entry.snapshotsByKey[bodyKey]?.lazy.map({ entry.snapshots[$0] })
            .first(where: { Self.equal($0.body, donation.snapshotBody) })
        {
            return (known.id, known.isGroup, known.describes)
        }
        let intent = donation.interaction.intent
        let body = String(decoding: donation.snapshotBody, as: UTF8.self)
        let result: (id: Int64, isGroup: Bool, describes: Bool)
        if !entry.isNew,
            let existing = try database.statement(
                "SELECT id FROM snapshots WHERE conversation_id = ?1 AND body_key = ?2 AND body = ?3"
            ).scalarInt([.integer(entry.id), .integer(bodyKey), .text(body)])
        {
            result = (existing, intent.isGroup, intent.describesConversation)
        } else {
            try database.statement(
                "INSERT INTO snapshots(conversation_id, body, is_group, body_key) VALUES (?, ?, ?, ?)"
            )
            .run([.integer(entry.id), .text(body), .integer(intent.isGroup ? 1 : 0), .integer(bodyKey)])
            result = (database.lastInsertRowID, intent.isGroup, intent.describesConversation)
            let people = try database.statement(DonationWriter.insertPersonSQL)
            for person in intent.participants {
                for key in person.matchKeys
                where entry.people.insert(Array(key.utf8)).inserted {
                    try people.run([.text(entry.account), .text(key), .integer(entry.id)])
                    entryBytes += key.utf8.count + ConversationEntry.itemBytes
                }
            }
        }
        entry.snapshotsByKey[bodyKey, default: []].append(entry.snapshots.count)
        entry.snapshots.append(
            KnownSnapshot(
                body: donation.snapshotBody, id: result.id, isGroup: result.isGroup, describes: result.describes))
        entryBytes += donation.snapshotBody.count + ConversationEntry.itemBytes
        return result
    }

    /// Byte-wise equality by `memcmp` (`==` on two arrays compares them element by element).
    private static func equal(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        guard first.count == second.count else { return false }
        guard !first.isEmpty else { return true }
        return first.withUnsafeBytes { a in
            // Bodies a preparer shared are one buffer.
            second.withUnsafeBytes { b in
                a.baseAddress == b.baseAddress || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0
            }
        }
    }

    static func loadConversation(_ id: Int64, database: Database) throws -> WorkingConversation {
        let select = try database.statement(
            """
            SELECT c0, c1, c2, c3, last_date, last_outgoing_date, outgoing_count, incoming_count, engaged_count,
                is_group, latest_snapshot_id, latest_date, service_name, content_total, display_date
            FROM conversations WHERE id = ?
            """)
        try select.reset([.integer(id)])
        defer { _ = try? select.reset() }
        guard try select.step() else { return .empty }
        let state = ConversationState(
            channels: SIMD4(select.double(0), select.double(1), select.double(2), select.double(3)),
            contentTotal: select.double(13), lastDate: Timestamp(seconds: select.double(4)),
            lastOutgoingDate: select.isNull(5) ? nil : Timestamp(seconds: select.double(5)),
            outgoingCount: Int(select.int(6)), incomingCount: Int(select.int(7)), engagedCount: Int(select.int(8)),
            lessFeedback: 0, isBlocked: false, isGroup: select.int(9) != 0)
        let latestSnapshot = select.isNull(10) ? nil : select.int(10)
        let service = select.text(12)
        var sums = ContentSums()
        let content = try database.statement("SELECT kind, sum FROM conversation_content WHERE conversation_id = ?")
        try content.reset([.integer(id)])
        while try content.step() { if let kind = content.text(0) { sums[kind] = content.double(1) } }
        return WorkingConversation(
            record: ConversationRecord(state: state, contentSums: sums, serviceName: service),
            latestSnapshotID: latestSnapshot,
            shown: ShownDonation(describedAt: select.isNull(14) ? nil : Timestamp(seconds: select.double(14))),
            storedKinds: sums.keys)
    }
}

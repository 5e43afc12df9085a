import RedisCluster
import SuggestCore

/// One conversation as the store read it before a change: its version, record and indexes. The change is computed
/// from it in Swift and applied by `RedisScripts.apply` only if the version is still this one.
struct StoredConversation {
    var number: Int64
    /// 0 when the conversation has no hash yet.
    var version: Int64
    var record: ConversationRecord
    var people: [String]
    var groups: [String]
    /// The sequence number of its last donation (0 for none).
    var lastSequence: Int64

    var isNew: Bool { version == 0 }
}

/// What a state change writes: the conversation hash's fields and the sorted sets it is in. `writeState` writes
/// through it, into a generic section or into a `Recording`.
protocol StateWriter {
    mutating func hset(_ key: String, _ field: String, _ value: some RedisArgument)
    mutating func zadd(_ key: String, _ score: Double, _ member: Int64)
    mutating func zrem(_ key: String, _ member: Int64)
}

/// Donations recorded in one conversation: a section of `RedisScripts.apply` in its compact form, where the
/// conversation's number is the member of every set and the value of every identifier, and each write is named by
/// its position rather than by an operation.
struct Recording: StateWriter {
    var conversationKey: String
    var expectedVersion: Int64
    var firstSequence: Int64 = 0
    var number: Int64
    var identifiers: [String] = []
    var donationsKey: String
    /// The entries appended to the donations list, one per identifier, in order.
    var entries: [[UInt8]] = []
    /// Fields of the conversation's hash.
    var fields: [(String, [UInt8])] = []
    var snapshotsKey: String
    /// Snapshots set if absent (HSETNX).
    var snapshots: [(String, [UInt8])] = []
    /// The sorted sets the conversation is in, with its score in each.
    var lists: [(String, Double)] = []
    /// The sorted sets it leaves.
    var listsLeft: [String] = []
    /// The sets it joins (people, groups).
    var sets: [String] = []
    var oldestKey: String
    /// Its oldest donation's date (ZADD LT).
    var oldest: Double

    mutating func hset(_ key: String, _ field: String, _ value: some RedisArgument) {
        var bytes: [UInt8] = []
        value.appendRedisBytes(to: &bytes)
        fields.append((field, bytes))
    }

    mutating func zadd(_ key: String, _ score: Double, _ member: Int64) { lists.append((key, score)) }

    mutating func zrem(_ key: String, _ member: Int64) { listsLeft.append(key) }
}

/// One `RedisScripts.apply` call being built: the changes of one or more conversations of one account, each a
/// section with its checks and operations, and the keys they name.
///
/// Operations go to the section begun last (`beginSection`); a section is closed by the next one or by `command`.
struct ScriptBuilder: StateWriter {
    /// KEYS: the account's `ids` hash first, then every key the operations named, in order of first use.
    private(set) var keys: [String]
    private var keyIndex: [String: Int]
    /// ARGV after the count of sections: the sections closed so far.
    private var closed = RedisArgumentList()
    /// The section being built.
    private var section: Section?
    /// How many sections the script has, the open one included.
    private(set) var sectionCount = 0
    /// Whether the script may run on a server at its `maxmemory` (to undo a failed import).
    var allowsOutOfMemory = false

    private struct Section {
        var conversation: Int
        var expectedVersion: Int64
        var firstSequence: Int64 = 0
        var checkedIdentifiers: [String] = []
        var operations = RedisArgumentList()
    }

    init(identifiersKey: String) {
        keys = [identifiersKey]
        keyIndex = [identifiersKey: 1]
    }

    /// How many bytes the script's arguments take so far: what a caller keeps a script's size under.
    var byteCount: Int { closed.byteCount + (section?.operations.byteCount ?? 0) }

    /// Begins the change of one conversation, computed from its version `expectedVersion` (0: no hash yet).
    mutating func beginSection(conversationKey: String, expectedVersion: Int64) {
        closeSection()
        section = Section(conversation: index(conversationKey), expectedVersion: expectedVersion)
        sectionCount += 1
    }

    /// The first sequence number of the donations the open section appends (0 for none).
    var firstSequence: Int64 {
        get { section?.firstSequence ?? 0 }
        set { section?.firstSequence = newValue }
    }

    /// An identifier the open section records, checked to be absent.
    mutating func check(identifier: String) { section?.checkedIdentifiers.append(identifier) }

    private mutating func closeSection() {
        guard let section else { return }
        self.section = nil
        closed.append("G")
        closed.append(4 + section.checkedIdentifiers.count + section.operations.count)
        closed.append(section.conversation)
        closed.append(section.expectedVersion)
        closed.append(section.firstSequence)
        closed.append(section.checkedIdentifiers.count)
        for identifier in section.checkedIdentifiers { closed.append(identifier) }
        closed.append(contentsOf: section.operations)
    }

    /// Adds a section that records donations in one conversation, in the script's compact form (`R`).
    mutating func append(_ recording: Recording) {
        closeSection()
        sectionCount += 1
        var rest = RedisArgumentList()
        rest.append(index(recording.conversationKey))
        rest.append(recording.expectedVersion)
        rest.append(recording.firstSequence)
        rest.append(recording.number)
        rest.append(recording.identifiers.count)
        for identifier in recording.identifiers { rest.append(identifier) }
        rest.append(index(recording.donationsKey))
        for entry in recording.entries { rest.append(entry) }
        rest.append(recording.fields.count)
        for (field, value) in recording.fields {
            rest.append(field)
            rest.append(value)
        }
        rest.append(index(recording.snapshotsKey))
        rest.append(recording.snapshots.count)
        for (key, body) in recording.snapshots {
            rest.append(key)
            rest.append(body)
        }
        rest.append(recording.lists.count)
        for (key, score) in recording.lists {
            rest.append(index(key))
            rest.append(Self.score(score))
        }
        rest.append(recording.listsLeft.count)
        for key in recording.listsLeft { rest.append(index(key)) }
        rest.append(recording.sets.count)
        for key in recording.sets { rest.append(index(key)) }
        rest.append(index(recording.oldestKey))
        rest.append(Self.score(recording.oldest))
        closed.append("R")
        closed.append(rest.count)
        closed.append(contentsOf: rest)
    }

    private mutating func index(_ key: String) -> Int {
        if let known = keyIndex[key] { return known }
        keys.append(key)
        keyIndex[key] = keys.count
        return keys.count
    }

    private mutating func operation(_ code: String, _ key: String) {
        let number = index(key)
        section?.operations.append(code)
        section?.operations.append(number)
    }

    mutating func zadd(_ key: String, _ score: Double, _ member: Int64) {
        operation("Z", key)
        section?.operations.append(Self.score(score))
        section?.operations.append(member)
    }

    mutating func zaddLess(_ key: String, _ score: Double, _ member: Int64) {
        operation("L", key)
        section?.operations.append(Self.score(score))
        section?.operations.append(member)
    }

    mutating func zrem(_ key: String, _ member: Int64) {
        operation("z", key)
        section?.operations.append(member)
    }

    mutating func sadd(_ key: String, _ member: Int64) {
        operation("S", key)
        section?.operations.append(member)
    }

    mutating func srem(_ key: String, _ member: Int64) {
        operation("s", key)
        section?.operations.append(member)
    }

    mutating func hset(_ key: String, _ field: String, _ value: some RedisArgument) {
        operation("H", key)
        section?.operations.append(field)
        section?.operations.append(value)
    }

    mutating func hsetnx(_ key: String, _ field: String, _ value: [UInt8]) {
        operation("N", key)
        section?.operations.append(field)
        section?.operations.append(value)
    }

    mutating func hdel(_ key: String, _ field: String) {
        operation("h", key)
        section?.operations.append(field)
    }

    mutating func delete(_ key: String) {
        operation("D", key)
    }

    mutating func rpush(_ key: String, _ values: [[UInt8]]) {
        guard !values.isEmpty else { return }
        operation("R", key)
        section?.operations.append(values.count)
        for value in values { section?.operations.append(value) }
    }

    /// A score as Redis reads it back exactly: the shortest text that round-trips the `Double`.
    static func score(_ value: Double) -> [UInt8] {
        if value == -.infinity { return Array("-inf".utf8) }
        if value == .infinity { return Array("inf".utf8) }
        return Array(value.description.utf8)
    }

    /// The `EVALSHA` command, every section closed.
    var command: RedisCommand {
        mutating get {
            closeSection()
            var command = RedisCommand(
                script: allowsOutOfMemory ? RedisScripts.applyAllowingOOM : RedisScripts.apply, keys: keys)
            command.append(sectionCount)
            command.append(contentsOf: closed)
            return command
        }
    }
}

extension RedisDonationStore {
    /// What the script answered for one section.
    enum ApplyOutcome: Equatable {
        case applied
        case conflict
        case duplicate
    }

    /// The statuses of an `apply` call, one per section it began, and the failure that stopped it part-way.
    /// - Throws: the store's error for an error reply (the script did not run: out of memory, a refused script).
    static func applyOutcomes(_ reply: RedisValue, sections: Int) throws(StoreError)
        -> (outcomes: [ApplyOutcome], failure: StoreError?)
    {
        if let message = reply.errorMessage { throw refusal(message) }
        guard let items = reply.array, items.count <= sections + 1 else {
            throw StoreError(.failed, "Redis answered a change with \(reply)")
        }
        var outcomes: [ApplyOutcome] = []
        outcomes.reserveCapacity(items.count)
        for item in items {
            switch item.bytes {
            case Array("OK".utf8)?: outcomes.append(.applied)
            case Array("CONFLICT".utf8)?: outcomes.append(.conflict)
            case Array("DUPLICATE".utf8)?: outcomes.append(.duplicate)
            case let bytes? where bytes.first == UInt8(ascii: "!"):
                return (outcomes, refusal(String(decoding: bytes.dropFirst(), as: UTF8.self)))
            default: throw StoreError(.failed, "Redis answered a change with \(reply)")
            }
        }
        guard outcomes.count == sections else { throw StoreError(.failed, "Redis answered a change with \(reply)") }
        return (outcomes, nil)
    }

    /// The store's error for an error reply to a write.
    static func refusal(_ message: String) -> StoreError {
        if message.hasPrefix("OOM") {
            return StoreError(
                .diskFull,
                "Redis is out of memory and refuses writes (\(message.prefix(80))): raise maxmemory, add nodes, or delete data")
        }
        return StoreError(.failed, "Redis refused a change: \(message)")
    }

    /// Reads conversations before a change, in one round trip.
    func readConversations(_ numbers: [Int64], keys: RedisKeys) throws(StoreError) -> [StoredConversation] {
        let replies = try pipeline(
            numbers.map { RedisCommand("HMGET", key: keys.conversation($0), "v", "r", "pk", "gk", "ls") })
        var conversations: [StoredConversation] = []
        conversations.reserveCapacity(numbers.count)
        for (number, reply) in zip(numbers, replies) {
            guard let fields = try reply.checkedArray(), fields.count == 5 else {
                throw StoreError.damaged("a conversation's hash in Redis")
            }
            guard let version = fields[0].string.flatMap(Int64.init), let record = fields[1].bytes else {
                conversations.append(
                    StoredConversation(number: number, version: 0, record: .empty, people: [], groups: [], lastSequence: 0))
                continue
            }
            conversations.append(
                StoredConversation(
                    number: number, version: version, record: try RecordCoding.decodeRecord(record),
                    people: try fields[2].bytes.map(RecordCoding.decodeStrings) ?? [],
                    groups: try fields[3].bytes.map(RecordCoding.decodeStrings) ?? [],
                    lastSequence: fields[4].string.flatMap(Int64.init) ?? 0))
        }
        return conversations
    }

    /// Writes a conversation's new state: its record, and every sorted set and index that depends on it, moving it
    /// out of the lists of a service or content kinds it no longer has.
    func writeState(
        of conversation: StoredConversation, to record: ConversationRecord, keys: RedisKeys, into script: inout some StateWriter
    ) {
        let number = conversation.number
        script.hset(keys.conversation(number), "r", RecordCoding.encode(record))
        let channels = policy.channels.count
        for channel in 0..<channels {
            var lists = [SortedList(channel: channel, scope: .all)]
            if let service = record.serviceName { lists.append(SortedList(channel: channel, scope: .service(service))) }
            for kind in record.contentSums.keys { lists.append(SortedList(channel: channel, scope: .contentKind(kind))) }
            for list in lists {
                if let key = record.key(in: list) { script.zadd(keys.list(list), key, number) }
            }
        }
        if let old = conversation.record.serviceName, record.serviceName?.hasSameBytes(as: old) != true {
            for channel in 0..<channels {
                script.zrem(keys.list(SortedList(channel: channel, scope: .service(old))), number)
            }
        }
        for kind in conversation.record.contentSums.keys where record.contentSums[kind] == nil {
            for channel in 0..<channels {
                script.zrem(keys.list(SortedList(channel: channel, scope: .contentKind(kind))), number)
            }
        }
    }

    /// Removes a conversation and everything that names it (its record, donations, snapshots, lists, indexes), as
    /// when its last donation is deleted.
    func removeConversation(
        _ conversation: StoredConversation, identifier: String, donationIdentifiers: [String], keys: RedisKeys,
        into script: inout ScriptBuilder
    ) {
        let number = conversation.number
        let channels = policy.channels.count
        for channel in 0..<channels {
            script.zrem(keys.list(SortedList(channel: channel, scope: .all)), number)
            if let service = conversation.record.serviceName {
                script.zrem(keys.list(SortedList(channel: channel, scope: .service(service))), number)
            }
            for kind in conversation.record.contentSums.keys {
                script.zrem(keys.list(SortedList(channel: channel, scope: .contentKind(kind))), number)
            }
        }
        for person in conversation.people { script.srem(keys.person(person), number) }
        for group in conversation.groups { script.srem(keys.group(group), number) }
        for donation in donationIdentifiers { script.hdel(keys.identifiers, donation) }
        script.zrem(keys.oldest, number)
        script.hdel(keys.conversationNumbers, identifier)
        script.delete(keys.donations(number))
        script.delete(keys.snapshots(number))
        script.delete(keys.conversation(number))
    }
}

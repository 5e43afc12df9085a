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
    /// The date of its latest donation that describes it (field `dd`; `ShownDonation`), `nil` while none has.
    var describedAt: Timestamp? = nil
    /// Whether its hash holds `dd`: one written before the field has none.
    var hasDescribedAt = false

    /// What `dd` holds: the date, or `n` while no donation has described the conversation.
    static func describedAtField(_ date: Timestamp?) -> [UInt8] {
        date.map { ScriptBuilder.score($0.seconds) } ?? Array("n".utf8)
    }

    var isNew: Bool { version == 0 }
}

/// The operations of one `RedisScripts.apply` call: the keys it names, its checks, and what it writes.
///
/// Operations of one kind on one key are gathered into one command with many elements (`ZADD key s1 m1 s2 m2 ...`),
/// as long as no other operation on that key came between them: operations on different keys commute, so moving
/// one to the key's last group changes nothing, and a round of thousands of donations runs a few commands per key
/// instead of one per element (each a call from Lua into Redis, and a command copied to the replicas and the
/// append-only files).
struct ScriptBuilder {
    private(set) var keys: [String]
    /// Each key's place in `keys`, by its bytes: as `String`s, two canonically equivalent spellings of a name
    /// (`café` composed and decomposed) were one key, and one write put a group, a service or a person under the
    /// other spelling's key (its deletion then found nothing, and left the other's bytes).
    private var keyIndex: [ByteKey: Int] = [:]
    /// Each sorted list's place in `keys`: a round names the same few lists for every conversation it writes.
    private var listIndex: [ListName: Int] = [:]
    /// The operations in order: a kind, a key's index, and its arguments (all of its elements').
    private var operations: [Operation] = []
    /// The place in `operations` of each key's last operation.
    private var lastOperation: [Int: Int] = [:]
    /// The hashes checked before anything is written: each key's index, expected version and first sequence number.
    private var checks: [(key: Int, version: Int64, firstSequence: Int64)] = []
    var checkedIdentifiers: [String] = []
    /// Conversation numbers that must still be mapped: the `cid` key's index, the identifier and the number.
    private var checkedNumbers: [(key: Int, identifier: String, number: Int64)] = []

    private struct Operation {
        var kind: UInt8
        var key: Int
        var arguments = Arguments()
        /// For a kind that takes many elements, how many it has; `nil` for the others.
        var elements: Int?
    }

    /// An operation's arguments end to end in one buffer, with the end of each: thousands of elements are a few
    /// allocations, where an array for each element and each of its arguments was most of the client's work in
    /// building a round.
    struct Arguments {
        private(set) var bytes: [UInt8] = []
        private(set) var ends: [Int] = []

        mutating func append(_ argument: some RedisArgument) {
            argument.appendRedisBytes(to: &bytes)
            ends.append(bytes.count)
        }

        /// Appends each argument to `command`.
        func write(to command: inout RedisCommand) {
            var start = 0
            for end in ends {
                command.append(bytes[start..<end])
                start = end
            }
        }
    }

    /// A sorted list by its channel, the kind of its scope and its name's bytes (`keyIndex` says why bytes).
    private struct ListName: Hashable {
        let channel: Int
        let scope: UInt8
        let name: ByteKey

        init(_ list: SortedList) {
            channel = list.channel
            switch list.scope {
            case .all: (scope, name) = (0, ByteKey(""))
            case .service(let service): (scope, name) = (1, ByteKey(service))
            case .contentKind(let kind): (scope, name) = (2, ByteKey(kind))
            }
        }
    }

    /// A change to the account of `keys`: the identifiers being recorded are checked in its `ids` hash, a change
    /// that runs leaves a new stamp in its `sv` key, and a recording looks at its `lease` first.
    init(_ keys: RedisKeys) {
        self.keys = [keys.identifiers, keys.stateStamp, keys.writeLease]
        keyIndex = [ByteKey(keys.identifiers): 1, ByteKey(keys.stateStamp): 2, ByteKey(keys.writeLease): 3]
    }

    /// How a change treats the account's write lease (`RedisDonationStore.WriteLease`).
    enum Lease {
        /// Runs whoever holds it: deletions, and undoing a failed import, never wait for a recording.
        case ignored
        /// Runs only while nobody holds it.
        case respected
        /// Runs while this token holds it, or nobody does, and gives it back.
        case held(token: [UInt8])
    }

    var lease = Lease.ignored

    /// Checks, before the change, that the hash at `key` still has `version` (0: no hash yet) and, when
    /// `firstSequence` is above 0, that its last donation (`ls`) came before that sequence number; the change gives
    /// it the next version (unless the change deletes it).
    ///
    /// The next version is written as the change's first field of the hash, not incremented by the script after
    /// the change: the fields the change writes to the hash join it in one `HSET`, where an increment was a command
    /// of its own for every conversation a round writes (a seventh of an import's commands, each run again by the
    /// replicas and the append-only files).
    mutating func check(_ key: String, version: Int64, firstSequence: Int64 = 0) {
        checks.append((index(key), version, firstSequence))
        hset(key, "v", Array(String(version + 1).utf8))
    }

    /// Checks, before the change, that the hash at `numbersKey` (`cid`) still maps `identifier` to `number`: for a
    /// conversation the change creates, whose number another client's failed import may have forgotten since it was
    /// given (the change would then write a conversation that no identifier leads to).
    mutating func checkNumber(_ numbersKey: String, identifier: String, number: Int64) {
        checkedNumbers.append((index(numbersKey), identifier, number))
    }

    private mutating func index(_ key: String) -> Int {
        let byBytes = ByteKey(key)
        if let known = keyIndex[byBytes] { return known }
        keys.append(key)
        keyIndex[byBytes] = keys.count
        return keys.count
    }

    /// The place in `keys` of a sorted list of the account of `keys`, its name built once a change.
    private mutating func index(_ list: SortedList, of keys: RedisKeys) -> Int {
        let name = ListName(list)
        if let known = listIndex[name] { return known }
        let index = index(keys.list(list))
        listIndex[name] = index
        return index
    }

    /// Adds one element of a kind that takes many: to the key's last operation when it is of that kind.
    private mutating func add(_ kind: Unicode.Scalar, _ key: Int, _ element: (inout Arguments) -> Void) {
        let kind = UInt8(ascii: kind)
        if let last = lastOperation[key], operations[last].kind == kind, let count = operations[last].elements {
            element(&operations[last].arguments)
            operations[last].elements = count + 1
            return
        }
        lastOperation[key] = operations.count
        var operation = Operation(kind: kind, key: key, elements: 1)
        element(&operation.arguments)
        operations.append(operation)
    }

    /// Adds an operation of a kind that takes one element.
    private mutating func single(
        _ kind: Unicode.Scalar, _ key: String, _ arguments: (inout Arguments) -> Void = { _ in }
    ) {
        let key = index(key)
        lastOperation[key] = operations.count
        var operation = Operation(kind: UInt8(ascii: kind), key: key)
        arguments(&operation.arguments)
        operations.append(operation)
    }

    mutating func zadd(_ list: SortedList, of keys: RedisKeys, _ score: Double, _ member: Int64) {
        add("Z", index(list, of: keys)) {
            $0.append(score)
            $0.append(member)
        }
    }

    mutating func zadd(_ key: String, _ score: Double, _ member: Int64) {
        add("Z", index(key)) {
            $0.append(score)
            $0.append(member)
        }
    }

    mutating func zaddLess(_ key: String, _ score: Double, _ member: Int64) {
        add("L", index(key)) {
            $0.append(score)
            $0.append(member)
        }
    }

    mutating func zrem(_ list: SortedList, of keys: RedisKeys, _ member: Int64) {
        add("z", index(list, of: keys)) { $0.append(member) }
    }

    mutating func zrem(_ key: String, _ member: Int64) {
        add("z", index(key)) { $0.append(member) }
    }

    mutating func sadd(_ key: String, _ member: Int64) {
        add("S", index(key)) { $0.append(member) }
    }

    mutating func srem(_ key: String, _ member: Int64) {
        add("s", index(key)) { $0.append(member) }
    }

    mutating func hset(_ key: String, _ field: String, _ value: [UInt8]) {
        add("H", index(key)) {
            $0.append(field)
            $0.append(value)
        }
    }

    mutating func hsetnx(_ key: String, _ field: String, _ value: [UInt8]) {
        single("N", key) {
            $0.append(field)
            $0.append(value)
        }
    }

    mutating func hdel(_ key: String, _ field: String) {
        add("h", index(key)) { $0.append(field) }
    }

    mutating func delete(_ key: String) {
        single("D", key)
    }

    /// Increments the version of a hash the change invalidates without checking it: a fold of the account's
    /// learned weights that read the donations before this change then fails its check and reads them again.
    mutating func bumpVersion(_ key: String) {
        single("V", key)
    }

    mutating func rpush(_ key: String, _ values: [[UInt8]]) {
        let key = index(key)
        for value in values { add("R", key) { $0.append(value) } }
    }

    /// A score as Redis reads it back exactly: the shortest text that round-trips the `Double`.
    static func score(_ value: Double) -> [UInt8] {
        if value == -.infinity { return Array("-inf".utf8) }
        if value == .infinity { return Array("inf".utf8) }
        return Array(value.description.utf8)
    }

    /// Whether the script may run on a server at its `maxmemory` (to undo a failed import).
    var allowsOutOfMemory = false

    /// The `EVALSHA` command.
    var command: RedisCommand {
        var command = RedisCommand(script: allowsOutOfMemory ? RedisScripts.applyAllowingOOM : RedisScripts.apply, keys: keys)
        switch lease {
        case .ignored: command.append("")
        case .respected: command.append("-")
        case .held(let token): command.append(token)
        }
        command.append(checks.count)
        for check in checks {
            command.append(check.key)
            command.append(check.version)
            command.append(check.firstSequence)
        }
        command.append(checkedIdentifiers.count)
        for identifier in checkedIdentifiers { command.append(identifier) }
        command.append(checkedNumbers.count)
        for check in checkedNumbers {
            command.append(check.key)
            command.append(check.identifier)
            command.append(check.number)
        }
        // The stamp first: a script that stops half-way (an error from Redis) has changed the account all the same.
        command.append("T")
        command.append("2")
        command.append(StateStamp.next())
        for operation in operations {
            command.append([operation.kind])
            command.append(operation.key)
            if let elements = operation.elements { command.append(elements) }
            operation.arguments.write(to: &command)
        }
        return command
    }
}

extension RedisDonationStore {
    /// What the script answered.
    enum ApplyOutcome: Equatable {
        case applied
        case conflict
        case duplicate
        /// Another writer holds the account's write lease.
        case leased
    }

    static func applyOutcome(_ reply: RedisValue) throws(StoreError) -> ApplyOutcome {
        if let message = reply.errorMessage { throw refusal(message) }
        switch reply.string {
        case "OK": return .applied
        case "CONFLICT": return .conflict
        case "DUPLICATE": return .duplicate
        case "LEASED": return .leased
        default: throw StoreError(.failed, "Redis answered a change with \(reply)")
        }
    }

    /// The store's error for an error reply to a write.
    static func refusal(_ message: String) -> StoreError {
        if message.hasPrefix("OOM") {
            return StoreError(
                .diskFull,
                "Redis is out of memory and refuses writes (\(message.prefix(80))): raise maxmemory, add nodes, or delete data")
        }
        if let denied = permissionDenied(message) { return denied }
        return StoreError(.failed, "Redis refused a change: \(message)")
    }

    /// The store's error for a command the Redis user may not run (its ACL), with what to do; `nil` for another
    /// error.
    static func permissionDenied(_ message: String) -> StoreError? {
        guard message.hasPrefix("NOPERM") || message.contains("can't run this command") else { return nil }
        return StoreError(
            .misconfigured,
            "the Redis user may not run a command suggest needs (\(message.prefix(120))): give it the permissions "
                + "in docs/redis.md, \"A user of its own\"")
    }

    /// Reads conversations before a change, in one round trip.
    func readConversations(_ numbers: [Int64], keys: RedisKeys) throws(StoreError) -> [StoredConversation] {
        let replies = try pipeline(
            numbers.map { RedisCommand("HMGET", key: keys.conversation($0), "v", "r", "pk", "gk", "ls", "dd") })
        var conversations: [StoredConversation] = []
        conversations.reserveCapacity(numbers.count)
        for (number, reply) in zip(numbers, replies) {
            guard let fields = try reply.checkedArray(), fields.count == 6 else {
                throw StoreError.damaged("a conversation's hash in Redis")
            }
            guard let version = fields[0].string.flatMap(Int64.init), let record = fields[1].bytes else {
                conversations.append(
                    StoredConversation(number: number, version: 0, record: .empty, people: [], groups: [], lastSequence: 0))
                continue
            }
            let decoded = try RecordCoding.decodeRecord(record)
            conversations.append(
                StoredConversation(
                    number: number, version: version, record: decoded,
                    people: try fields[2].bytes.map(RecordCoding.decodeStrings) ?? [],
                    groups: try fields[3].bytes.map(RecordCoding.decodeStrings) ?? [],
                    lastSequence: fields[4].string.flatMap(Int64.init) ?? 0,
                    // A hash written before `dd` showed its latest donation: taken as described then, which keeps a
                    // late older donation from replacing it (maintenance's rebuild folds it exactly).
                    describedAt: fields[5].isNull
                        ? decoded.state.lastDate : fields[5].string.flatMap(Double.init).map(Timestamp.init(seconds:)),
                    hasDescribedAt: !fields[5].isNull))
        }
        return conversations
    }

    /// Writes a conversation's new state: its record, and every sorted set and index that depends on it, moving it
    /// out of the lists of a service or content kinds it no longer has.
    func writeState(
        of conversation: StoredConversation, to record: ConversationRecord, keys: RedisKeys, into script: inout ScriptBuilder
    ) {
        let number = conversation.number
        script.hset(keys.conversation(number), "r", RecordCoding.encode(record))
        let channels = policy.channels.count
        func add(_ list: SortedList) {
            if let key = record.key(in: list) { script.zadd(list, of: keys, key, number) }
        }
        for channel in 0..<channels {
            add(SortedList(channel: channel, scope: .all))
            if let service = record.serviceName { add(SortedList(channel: channel, scope: .service(service))) }
            for kind in record.contentSums.keys { add(SortedList(channel: channel, scope: .contentKind(kind))) }
        }
        if let old = conversation.record.serviceName, record.serviceName?.hasSameBytes(as: old) != true {
            for channel in 0..<channels {
                script.zrem(SortedList(channel: channel, scope: .service(old)), of: keys, number)
            }
        }
        for kind in conversation.record.contentSums.keys where record.contentSums[kind] == nil {
            for channel in 0..<channels {
                script.zrem(SortedList(channel: channel, scope: .contentKind(kind)), of: keys, number)
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
            script.zrem(SortedList(channel: channel, scope: .all), of: keys, number)
            if let service = conversation.record.serviceName {
                script.zrem(SortedList(channel: channel, scope: .service(service)), of: keys, number)
            }
            for kind in conversation.record.contentSums.keys {
                script.zrem(SortedList(channel: channel, scope: .contentKind(kind)), of: keys, number)
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

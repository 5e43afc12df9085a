import CSystem
import RedisCluster
import SuggestCore

extension RedisDonationStore {
    public func record(_ donation: Interaction, now: Timestamp) throws -> DonationOutcome {
        switch try DonationAdmission.decide(
            donation, now: now, oldestKept: try retention().oldestKept(at: now), roundsToExportPrecision: true)
        {
        case .expired: return .expired
        case .record(let interaction): return try writeDonations([interaction])[0]
        }
    }

    /// Records a batch: every donation is read and checked first (an invalid one, unless skipped, stops the batch
    /// before anything is written), then they are written a chunk at a time, each conversation's part of a chunk by
    /// one script.
    ///
    /// Redis has no transaction across a batch's scripts: a batch is all or nothing for invalid input (nothing is
    /// written before every donation is checked), and when the store fails part-way (a full server, a node lost for
    /// longer than the client's retries) or the caller interrupts it, what the batch had recorded is deleted again.
    /// Other clients may have seen those donations meanwhile; and if the undoing fails too, the error says so:
    /// importing the same donations again then completes the batch (a donation's identifier makes it a no-op the
    /// second time).
    public func importDonations(
        _ options: ImportOptions, progress: (ImportProgress) -> Void, interruption: () throws -> Void,
        next: () throws -> (line: Int, donation: Result<Interaction, InputError>)?
    ) throws -> ImportReport {
        var report = ImportReport()
        var accepted: [Interaction] = []
        let oldestKept = try retention().oldestKept(at: options.now)
        while let (line, parsed) = try next() {
            report.read += 1
            if report.read & 255 == 0 { try interruption() }
            if report.read % options.progressInterval == 0 {
                progress(ImportProgress(lines: report.read, bytesRead: 0, totalBytes: nil))
            }
            switch try Self.admit(parsed, line: line, options: options, oldestKept: oldestKept, into: &report) {
            case .some(let interaction): accepted.append(interaction)
            case .none: break
            }
        }
        try undoingOnFailure { written in
            try write(accepted, into: &report, written: &written, interruption: interruption)
        }
        return report
    }

    /// JSON Lines in two passes over the input: the first reads and checks every line (an invalid line stops the
    /// import before anything is written); the second records them, a chunk at a time. The valid donations wait in
    /// memory while they fit in one chunk, as most imports do; beyond that they wait in a temporary file, so that an
    /// import of any size takes the memory of one chunk.
    public func importJSONLines(
        from lines: some JSONLineSource, options: ImportOptions, progress: (ImportProgress) -> Void,
        interruption: () throws -> Void
    ) throws -> ImportReport {
        var report = ImportReport()
        let oldestKept = try retention().oldestKept(at: options.now)
        var held: [Interaction] = []
        var spool: Spool?
        while let (line, parsed) = try lines.nextDonation(defaultAccount: options.defaultAccount) {
            report.read += 1
            if report.read & 255 == 0 { try interruption() }
            if report.read % options.progressInterval == 0 {
                progress(ImportProgress(lines: report.read, bytesRead: lines.bytesRead, totalBytes: lines.totalBytes))
            }
            guard let interaction = try Self.admit(parsed, line: line, options: options, oldestKept: oldestKept, into: &report)
            else { continue }
            if spool == nil && held.count < Self.chunkSize {
                held.append(interaction)
                continue
            }
            let file = try spool ?? Spool()
            if spool == nil {
                spool = file
                for waiting in held { try file.append(waiting) }
                held = []
            }
            try file.append(interaction)
        }
        try spool?.rewind()
        try undoingOnFailure { written in
            guard let spool else {
                try write(held, into: &report, written: &written, interruption: interruption)
                return
            }
            var chunk: [Interaction] = []
            while let interaction = try spool.next(defaultAccount: options.defaultAccount) {
                chunk.append(interaction)
                if chunk.count == Self.chunkSize {
                    try write(chunk, into: &report, written: &written, interruption: interruption)
                    chunk.removeAll(keepingCapacity: true)
                }
            }
            try write(chunk, into: &report, written: &written, interruption: interruption)
        }
        return report
    }

    /// Donations written per round of scripts.
    static let chunkSize = 100_000

    /// Checks one line: the required account, the future-date rule and retention.
    /// - Returns: the donation to record, or `nil` when it is counted as expired or (with `skipInvalid`) rejected.
    static func admit(
        _ parsed: Result<Interaction, InputError>, line: Int, options: ImportOptions, oldestKept: Timestamp?,
        into report: inout ImportReport
    ) throws(InputError) -> Interaction? {
        do throws(InputError) {
            let interaction = try parsed.get()
            if let required = options.requiredAccount, !interaction.account.hasSameBytes(as: required) {
                throw InputError(field: "account", message: "'\(interaction.account.prefix(60))' differs from \(required)")
            }
            switch try DonationAdmission.decide(interaction, now: options.now, oldestKept: oldestKept) {
            case .expired:
                report.expired += 1
                return nil
            case .record(let admitted):
                return admitted
            }
        } catch {
            guard options.skipInvalid else { throw error.at(line: line) }
            report.rejected.append(error.at(line: line))
            return nil
        }
    }

    /// Writes checked donations, a chunk at a time, counting what was recorded and what was already there, and
    /// noting what was recorded (to undo it if a later chunk fails).
    private func write(
        _ donations: [Interaction], into report: inout ImportReport, written: inout ImportLedger,
        interruption: () throws -> Void
    ) throws {
        var start = 0
        while start < donations.count {
            try interruption()
            let end = min(start + Self.chunkSize, donations.count)
            let chunk = donations[start..<end]
            for outcome in try writeDonations(Array(chunk), ledger: &written) {
                switch outcome {
                case .recorded: report.recorded += 1
                case .duplicate: report.duplicates += 1
                case .expired: report.expired += 1
                }
            }
            start = end
        }
    }

    /// What an import has recorded so far, by account.
    struct ImportLedger {
        private(set) var identifiers: [[UInt8]: [String]] = [:]
        /// The conversations changed, by account: a change stopped part-way may have written donations that its
        /// identifiers do not lead to yet.
        private(set) var numbers: [[UInt8]: Set<Int64>] = [:]

        mutating func note(account: String, identifier: String) {
            identifiers[Array(account.utf8), default: []].append(identifier)
        }

        mutating func note(account: String, number: Int64) {
            numbers[Array(account.utf8), default: []].insert(number)
        }
    }

    /// Runs an import's writes; when they fail (or are interrupted) part-way, deletes what they had recorded, so that
    /// the import leaves nothing, then throws.
    private func undoingOnFailure(_ body: (inout ImportLedger) throws -> Void) throws {
        var written = ImportLedger()
        do {
            try body(&written)
        } catch {
            let undone = undo(written)
            guard let store = error as? StoreError, !undone else { throw error }
            throw StoreError(
                store.kind, store.message + "; the donations this import had recorded stayed, import the same file again to "
                    + "complete it")
        }
    }

    /// Deletes the donations an import recorded, conversation by conversation.
    /// - Returns: whether every one was deleted.
    private func undo(_ ledger: ImportLedger) -> Bool {
        var complete = true
        for (account, identifiers) in ledger.identifiers {
            let keys = RedisKeys(account: String(decoding: account, as: UTF8.self))
            let doomed = Set(identifiers.map { Array($0.utf8) })
            var numbers = ledger.numbers[account] ?? []
            var start = 0
            while start < identifiers.count {
                var lookup = RedisCommand("HMGET", key: keys.identifiers)
                for identifier in identifiers[start..<min(start + 1000, identifiers.count)] { lookup.append(identifier) }
                start += 1000
                guard let reply = try? send(lookup).checkedArray() else { return false }
                for value in reply { if let number = value.string.flatMap(Int64.init) { numbers.insert(number) } }
            }
            for number in numbers.sorted() {
                let rewritten = try? rewrite(
                    number, keys: keys, dropping: { doomed.contains(Array($0.identifier.utf8)) }, allowingOutOfMemory: true)
                if rewritten == nil { complete = false }
            }
            if (try? forgetNumbersWithoutConversations(keys)) == nil { complete = false }
        }
        return complete
    }

    /// Removes the numbers given to conversations that never got a hash (their writes failed): no conversation
    /// identifier of a failed import stays behind.
    private func forgetNumbersWithoutConversations(_ keys: RedisKeys) throws(StoreError) {
        let pairs = try send(RedisCommand("HGETALL", key: keys.conversationNumbers)).checkedArray() ?? []
        var identifiers: [[UInt8]] = []
        var numbers: [Int64] = []
        for index in stride(from: 0, to: pairs.count - 1, by: 2) {
            if let identifier = pairs[index].bytes, let number = pairs[index + 1].string.flatMap(Int64.init) {
                identifiers.append(identifier)
                numbers.append(number)
            }
        }
        let exists = try pipeline(numbers.map { RedisCommand("EXISTS", key: keys.conversation($0)) })
        let orphans = zip(identifiers, exists).filter { $0.1.integer == 0 }.map(\.0)
        guard !orphans.isEmpty else { return }
        var forget = RedisCommand("HDEL", key: keys.conversationNumbers)
        for identifier in orphans { forget.append(identifier) }
        _ = try write([forget])
    }

    /// Records donations (of any accounts), each conversation's part by one script, retrying a conversation another
    /// client changed meanwhile.
    /// - Parameter ledger: notes every donation recorded, also when a later script fails (so that it can be undone).
    /// - Returns: each donation's outcome, in order.
    func writeDonations(_ donations: [Interaction]) throws(StoreError) -> [DonationOutcome] {
        var ledger = ImportLedger()
        return try writeDonations(donations, ledger: &ledger)
    }

    func writeDonations(_ donations: [Interaction], ledger: inout ImportLedger) throws(StoreError) -> [DonationOutcome] {
        var outcomes = [DonationOutcome](repeating: .expired, count: donations.count)
        var byAccount: [[UInt8]: [Int]] = [:]
        var accountOrder: [[UInt8]] = []
        for (index, donation) in donations.enumerated() {
            let key = Array(donation.account.utf8)
            if byAccount[key] == nil { accountOrder.append(key) }
            byAccount[key, default: []].append(index)
        }
        var random = SystemRandomNumberGenerator()
        var named = donations
        for index in named.indices where named[index].identifier == nil {
            named[index].identifier = Self.generatedIdentifier(&random)
        }
        for account in accountOrder {
            let indices = byAccount[account] ?? []
            let keys = RedisKeys(account: String(decoding: account, as: UTF8.self))
            for (offset, outcome) in try writeDonations(indices.map { named[$0] }, keys: keys, ledger: &ledger).enumerated() {
                outcomes[indices[offset]] = outcome
            }
        }
        return outcomes
    }

    /// Records one account's donations, in rounds of three round trips: the conversations' numbers and the known
    /// identifiers (one pipeline), the conversations' states, then every conversation's change, computed here and
    /// sent as `apply` scripts of up to `sectionsPerScript` conversations each, all in one pipeline that ends with
    /// `WAIT` when the masters have replicas. A conversation another client changed meanwhile goes to the next round.
    private func writeDonations(_ donations: [Interaction], keys: RedisKeys, ledger: inout ImportLedger)
        throws(StoreError) -> [DonationOutcome]
    {
        var outcomes = [DonationOutcome?](repeating: nil, count: donations.count)
        // Within the batch, the first donation of an identifier is the one; later ones are duplicates.
        var firstOfIdentifier: Set<[UInt8]> = []
        var groups: [[Int]] = []
        var groupOf: [[UInt8]: Int] = [:]
        for (index, donation) in donations.enumerated() {
            guard firstOfIdentifier.insert(Array((donation.identifier ?? "").utf8)).inserted else {
                outcomes[index] = .duplicate(identifier: donation.identifier ?? "")
                continue
            }
            let conversation = Array(donation.conversationIdentifier.utf8)
            if let group = groupOf[conversation] {
                groups[group].append(index)
            } else {
                groupOf[conversation] = groups.count
                groups.append([index])
            }
        }
        guard !groups.isEmpty else { return outcomes.map { $0 ?? .duplicate(identifier: "") } }
        var registered = registeredAccounts.contains(Array(keys.account.utf8))
        var pending = groups
        var rounds = 0
        var sequenceOf = [Int64](repeating: 0, count: donations.count)
        while !pending.isEmpty {
            rounds += 1
            guard rounds <= 50 else {
                throw StoreError(.busy, "the account's conversations kept changing under this write; retry in a moment")
            }
            let total = pending.reduce(0) { $0 + $1.count }
            var numbers = RedisCommand(script: RedisScripts.numbers, keys: [keys.conversationNumbers, keys.meta])
            numbers.append(total)
            for group in pending { numbers.append(donations[group[0]].conversationIdentifier) }
            var known = RedisCommand("HMGET", key: keys.identifiers)
            for group in pending { for index in group { known.append(donations[index].identifier ?? "") } }
            let first = try pipeline([numbers, known])
            guard let reserved = try first[0].checkedArray(), reserved.count == pending.count + 1,
                let last = reserved[0].integer
            else { throw StoreError.damaged("a reply of Redis to a reservation of numbers") }
            guard let existing = try first[1].checkedArray(), existing.count == total else {
                throw StoreError.damaged("a reply of Redis to a read of identifiers")
            }
            // A counter that was 0 is an account with no donations in Redis: new, or deleted since this store
            // registered it.
            if rounds == 1 && last == Int64(total) { registered = false }
            let conversationNumbers = reserved.dropFirst().map { $0.integer ?? 0 }
            let stored = try readConversations(Array(conversationNumbers), keys: keys)
            // Sequence numbers in the order of the batch (the export's order), whatever the grouping.
            for (offset, index) in pending.flatMap({ $0 }).sorted().enumerated() {
                sequenceOf[index] = last - Int64(total) + 1 + Int64(offset)
            }
            var position = 0
            // Scripts go out a few at a time while the next are built; each pipeline's sections, per script, with
            // each section's conversation number and the donations it records.
            let sender = PipelineSender(client: client, replicas: replicasToWait)
            var sectionsOf: [[[(number: Int64, recorded: [Int])]]] = []
            var commands: [RedisCommand] = []
            var scriptSections: [[(number: Int64, recorded: [Int])]] = []
            var script = ScriptBuilder(identifiersKey: keys.identifiers)
            var sections: [(number: Int64, recorded: [Int])] = []
            func closeScript() {
                guard script.sectionCount > 0 else { return }
                commands.append(script.command)
                scriptSections.append(sections)
                script = ScriptBuilder(identifiersKey: keys.identifiers)
                sections = []
            }
            func sendPipeline() {
                guard !commands.isEmpty else { return }
                sender.send(commands)
                sectionsOf.append(scriptSections)
                commands = []
                scriptSections = []
            }
            for (group, conversation) in zip(pending, stored) {
                var recorded: [Int] = []
                for index in group {
                    if existing[position].isNull {
                        recorded.append(index)
                    } else {
                        outcomes[index] = .duplicate(identifier: donations[index].identifier ?? "")
                    }
                    position += 1
                }
                guard !recorded.isEmpty else { continue }
                if script.sectionCount >= Self.sectionsPerScript || script.byteCount >= Self.bytesPerScript {
                    closeScript()
                    if commands.count >= Self.scriptsPerPipeline { sendPipeline() }
                }
                change(
                    conversation, recording: recorded.map { (donations[$0], sequenceOf[$0]) },
                    identifier: donations[group[0]].conversationIdentifier, keys: keys, into: &script)
                sections.append((conversation.number, recorded))
            }
            closeScript()
            let registering = !registered && (!commands.isEmpty || !sectionsOf.isEmpty)
            if registering {
                // The account's name joins the list of accounts with its first donations, as durably.
                commands.append(RedisCommand("SADD", key: RedisKeys.accounts, keys.account))
            }
            sendPipeline()
            guard !sectionsOf.isEmpty else { break }
            // Every reply is read before an error is thrown, so that the ledger holds every change that ran.
            var refusal: StoreError?
            var confirmed = true
            var retry: [[Int]] = []
            for (number, (outcome, pipelineSections)) in zip(sender.finish(), sectionsOf).enumerated() {
                let replies: [RedisValue]
                switch outcome {
                case .success(let answer):
                    replies = answer.replies
                    if !answer.confirmed { confirmed = false }
                case .failure(let error):
                    // The pipeline's scripts may have run, in part: the undo of an import looks at them all.
                    refusal = refusal ?? Self.translate(error)
                    for section in pipelineSections.joined() {
                        ledger.note(account: keys.account, number: section.number)
                        for index in section.recorded {
                            ledger.note(account: keys.account, identifier: donations[index].identifier ?? "")
                        }
                    }
                    continue
                }
                for (reply, sections) in zip(replies, pipelineSections) {
                    let statuses: [ApplyOutcome]
                    do {
                        let answer = try Self.applyOutcomes(reply, sections: sections.count)
                        statuses = answer.outcomes
                        if let failure = answer.failure { refusal = refusal ?? failure }
                    } catch {
                        refusal = refusal ?? error
                        continue
                    }
                    for (status, section) in zip(statuses, sections) {
                        switch status {
                        case .applied:
                            // Noted before anything is thrown: a change the script began may be written in part.
                            ledger.note(account: keys.account, number: section.number)
                            for index in section.recorded {
                                let identifier = donations[index].identifier ?? ""
                                outcomes[index] = .recorded(identifier: identifier)
                                ledger.note(account: keys.account, identifier: identifier)
                            }
                        case .conflict, .duplicate:
                            // Another client changed the conversation: read it again, with new sequence numbers.
                            for index in section.recorded { outcomes[index] = nil }
                            retry.append(section.recorded)
                        }
                    }
                }
                if registering, number == sectionsOf.count - 1, replies.count == pipelineSections.count + 1,
                    let message = replies.last?.errorMessage
                {
                    refusal = refusal ?? Self.refusal(message)
                }
            }
            if let refusal { throw refusal }
            guard confirmed else { throw Self.unreplicated }
            if registering {
                registered = true
                registeredAccounts.insert(Array(keys.account.utf8))
            }
            pending = retry
        }
        return outcomes.map { $0 ?? .duplicate(identifier: "") }
    }

    /// Conversations changed by one `apply` call: a few hundred make a call of a few milliseconds on the server,
    /// short enough that other clients of the node hardly wait, and long enough that each sorted set gets one ZADD
    /// for all of them.
    static let sectionsPerScript = 256
    /// The most argument bytes one `apply` call is given (a conversation with thousands of donations in a chunk
    /// closes its script early).
    static let bytesPerScript = 1 << 20
    /// Scripts per pipeline: the first pipeline goes out once this many are built.
    static let scriptsPerPipeline = 4

    /// Adds one conversation's change to `script`: the donations appended to its list (with their sequence
    /// numbers), their identifiers, snapshots, people and groups, and its new state in every sorted set.
    private func change(
        _ conversation: StoredConversation, recording donations: [(donation: Interaction, sequence: Int64)],
        identifier conversationIdentifier: String, keys: RedisKeys, into script: inout ScriptBuilder
    ) {
        let number = conversation.number
        var change = Recording(
            conversationKey: keys.conversation(number), expectedVersion: conversation.version,
            firstSequence: donations[0].sequence, number: number, donationsKey: keys.donations(number),
            snapshotsKey: keys.snapshots(number), oldestKey: keys.oldest, oldest: .infinity)
        change.identifiers.reserveCapacity(donations.count)
        change.entries.reserveCapacity(donations.count)
        var record = conversation.record
        var snapshots: [String: [UInt8]] = [:]
        var latest: [UInt8]?
        var people = conversation.people
        var peopleSeen = Set(people.map { Array($0.utf8) })
        var groupsOfConversation = conversation.groups
        for (donation, sequence) in donations {
            let identifier = donation.identifier ?? ""
            let body = Self.snapshotBody(of: donation.intent)
            let snapshot = Self.snapshotKey(body)
            if record.apply(
                date: donation.date, direction: donation.direction, isEngagedSuggestion: donation.isEngagedSuggestion,
                isGroup: donation.intent.isGroup, contentKinds: types.contentKinds(of: donation.intent.contentTypes),
                serviceName: donation.intent.serviceName, policy: policy)
            {
                latest = body
            }
            change.entries.append(
                RecordCoding.encode(
                    RecordCoding.Entry(
                        sequence: sequence, identifier: identifier, groupIdentifier: donation.groupIdentifier,
                        date: donation.date.seconds, direction: donation.direction, engaged: donation.isEngagedSuggestion,
                        contentTypes: donation.intent.contentTypes, snapshot: snapshot)))
            change.identifiers.append(identifier)
            snapshots[snapshot] = body
            for person in donation.intent.recipients {
                for key in person.matchKeys where peopleSeen.insert(Array(key.utf8)).inserted {
                    people.append(key)
                    change.sets.append(keys.person(key))
                }
            }
            if let groupIdentifier = donation.groupIdentifier,
                !groupsOfConversation.contains(where: { $0.hasSameBytes(as: groupIdentifier) })
            {
                groupsOfConversation.append(groupIdentifier)
                change.sets.append(keys.group(groupIdentifier))
            }
            change.oldest = min(change.oldest, donation.date.seconds)
        }
        let hash = change.conversationKey
        change.hset(hash, "id", conversationIdentifier)
        change.hset(hash, "ls", donations[donations.count - 1].sequence)
        if let latest { change.hset(hash, "i", latest) }
        if people.count != conversation.people.count { change.hset(hash, "pk", RecordCoding.encode(strings: people)) }
        if groupsOfConversation.count != conversation.groups.count {
            change.hset(hash, "gk", RecordCoding.encode(strings: groupsOfConversation))
        }
        change.snapshots = snapshots.sorted(by: { $0.key < $1.key })
        writeState(of: conversation, to: record, keys: keys, into: &change)
        script.append(change)
    }

    /// The intent without its content types, as JSON: what a snapshot holds.
    static func snapshotBody(of intent: SendMessageIntent) -> [UInt8] {
        var metadata = intent
        metadata.contentTypes = []
        var writer = JSONWriter()
        metadata.write(to: &writer)
        return writer.bytes
    }

    /// A snapshot's key in its conversation's `sn` hash: 128 bits of two FNV-1a hashes of its body (two bodies of one
    /// conversation that share both are as likely as a collision of random 128-bit values).
    static func snapshotKey(_ body: [UInt8]) -> String {
        var first = StableHash()
        var second = StableHash()
        body.withUnsafeBufferPointer { bytes in
            first.combine(utf8: bytes)
            [UInt8(0x5A)].withUnsafeBufferPointer { second.combine(utf8: $0) }
            second.combine(utf8: bytes)
        }
        func hex(_ value: UInt64) -> String {
            let text = String(value, radix: 16)
            return String(repeating: "0", count: 16 - text.count) + text
        }
        return hex(first.value) + hex(second.value)
    }

    /// A random identifier in UUID form, for a donation that comes without one.
    static func generatedIdentifier(_ random: inout SystemRandomNumberGenerator) -> String {
        let high = random.next() as UInt64
        let low = random.next() as UInt64
        func hex(_ value: UInt64) -> [Character] {
            let text = String(value, radix: 16, uppercase: true)
            return Array(String(repeating: "0", count: 16 - text.count) + text)
        }
        let characters = hex(high) + hex(low)
        return String(characters[0..<8]) + "-" + String(characters[8..<12]) + "-" + String(characters[12..<16]) + "-"
            + String(characters[16..<20]) + "-" + String(characters[20..<32])
    }

    /// The intent a snapshot holds.
    static func decodeIntent(_ bytes: [UInt8]) throws(StoreError) -> SendMessageIntent {
        do {
            return try bytes.withUnsafeBufferPointer { buffer throws(InputError) in
                try SendMessageIntent(jsonBytes: buffer, path: "intent")
            }
        } catch {
            throw StoreError.damaged("a snapshot in Redis (\(error))")
        }
    }

    /// A preference as the `pref` hash holds it: `BLOCKED,LESS`.
    static func preference(_ text: String) -> (blocked: Bool, less: Int) {
        let parts = text.split(separator: ",")
        return (parts.first == "1", parts.count > 1 ? Int(parts[1]) ?? 0 : 0)
    }
}

/// A temporary file of donations, written once and read back in order: the valid donations of an import between
/// its two passes. Removed when the value goes away.
///
/// Each line is the date's bits (16 hexadecimal digits), a space, and the donation's JSON: JSON dates have
/// microseconds, and a donation is recorded with the date it was read with, to the bit, as the embedded store does.
final class Spool {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var reading: LineStream?

    init() throws(StoreError) {
        var template = Array("/tmp/suggest-import-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw StoreError(.failed, "cannot create a temporary file for the import: \(String(cString: strerror(system_errno())))")
        }
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Writes a donation as one JSON line.
    func append(_ interaction: Interaction) throws(StoreError) {
        let bits = String(interaction.date.seconds.bitPattern, radix: 16)
        buffer += Array(String(repeating: "0", count: 16 - bits.count).utf8) + Array(bits.utf8) + [0x20]
        var writer = JSONWriter()
        interaction.write(to: &writer)
        buffer += writer.bytes
        buffer.append(0x0A)
        if buffer.count >= 1 << 20 { try flush() }
    }

    private func flush() throws(StoreError) {
        var offset = 0
        while offset < buffer.count {
            let written = buffer.withUnsafeBytes { CSystem.write(descriptor, $0.baseAddress! + offset, buffer.count - offset) }
            if written < 0 && system_errno() == EINTR { continue }
            guard written > 0 else {
                throw StoreError(
                    .diskFull, "cannot write the import's temporary file: \(String(cString: strerror(system_errno())))")
            }
            offset += written
        }
        buffer.removeAll(keepingCapacity: true)
    }

    func rewind() throws(StoreError) {
        try flush()
        guard lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw StoreError(.failed, "cannot read back the import's temporary file")
        }
        reading = LineStream(descriptor: descriptor, closesDescriptor: false, carriageReturns: .keep)
    }

    /// The next donation, or `nil` after the last.
    func next(defaultAccount: String) throws -> Interaction? {
        let line: [UInt8]
        do {
            guard let next = try reading?.nextLine() else { return nil }
            line = Array(next)
        } catch {
            throw StoreError(.failed, "cannot read back the import's temporary file: \(error.reason)")
        }
        guard line.count > 17, line[16] == 0x20,
            let bits = UInt64(String(decoding: line[0..<16], as: UTF8.self), radix: 16)
        else { throw StoreError(.failed, "the import's temporary file is damaged") }
        var interaction = try line[17...].withUnsafeBufferPointer { buffer throws(InputError) in
            try Interaction(jsonBytes: buffer, defaultAccount: defaultAccount)
        }
        interaction.date = Timestamp(seconds: Double(bitPattern: bits))
        return interaction
    }
}

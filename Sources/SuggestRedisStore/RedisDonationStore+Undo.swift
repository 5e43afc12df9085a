import CSystem
import RedisCluster
import SuggestCore

extension RedisDonationStore {
    /// What an import has recorded so far, by account, and the conversations it asked numbers for in each account
    /// (which a failed import must take back even when it recorded nothing there).
    struct ImportLedger {
        private(set) var identifiers: [[UInt8]: [String]] = [:]
        /// Byte for byte, as the store tells conversations apart: a `Set<String>` held one of two canonically
        /// equivalent identifiers ("é" and "e\u{301}"), and the other's number outlived a failed import.
        private(set) var numberedConversations: [[UInt8]: Set<ByteKey>] = [:]
        /// Whether a round's script got no reply (a connection lost, a time limit): it may have run, or, cut off by
        /// the time limit, may still run after an undo.
        var lostReply = false

        mutating func note(account: String, identifier: String) {
            identifiers[Array(account.utf8), default: []].append(identifier)
        }

        /// The identifiers this write made for donations that came without one: no other client can have them.
        var generated: Set<String> = []

        /// A round's script that got no reply: its donations may have been recorded. Those whose identifiers this
        /// write made are noted as if they had been, so that an undo takes back those it finds: left, they would
        /// stay while a server answered "retry later" for them (a connection reset before the reply), and a retry
        /// would record them twice. A donation that came with its identifier is left (another client may have
        /// recorded the same one meanwhile, and been told so): a retry records it once.
        mutating func noteUnanswered(_ round: RecordingRound, _ donations: [Interaction]) {
            for index in round.recorded {
                guard let identifier = donations[index].identifier, generated.contains(identifier) else { continue }
                note(account: round.after.account, identifier: identifier)
            }
            lostReply = true
        }

        mutating func numbered(account: String, conversations: some Sequence<String>) {
            let key = Array(account.utf8)
            if identifiers[key] == nil { identifiers[key] = [] }
            numberedConversations[key, default: []].formUnion(conversations.lazy.map(ByteKey.init))
        }
    }

    /// Runs an import's writes; when they fail (or are interrupted) part-way, deletes what they had recorded, so that
    /// the import leaves nothing, then throws.
    /// The undoing is tried again for a while when it fails: a master lost in the middle of an import is replaced
    /// by its replica within seconds, after which the undo can reach the account again.
    /// - Parameter leftover: what the error adds when the undoing fails too: what may stay, and what to do.
    /// - Parameter undone: what the error adds when the undoing succeeded (for an import: that nothing of it was
    ///   kept, which a lost connection's own words, "may or may not have run", left in doubt).
    /// - Parameter lostReply: what it adds instead when the last write got no reply (it may have run, unnoted); by
    ///   default, an import's words.
    func undoingOnFailure(
        leftover: String, undone said: String? = nil, lostReply: String? = nil,
        _ body: (inout ImportLedger) throws -> Void
    ) throws {
        var written = ImportLedger()
        do {
            try body(&written)
        } catch {
            undoing = true
            defer { undoing = false }
            var undone = undo(written)
            let deadline = ContinuousClock.now + .seconds(15)
            while !undone && ContinuousClock.now < deadline {
                var pause = timespec(tv_sec: 1, tv_nsec: 0)
                _ = nanosleep(&pause, nil)
                undone = undo(written)
            }
            guard !undone else {
                guard let said, var store = (error as? StoreError) ?? (error as? RedisError).map({ Self.translate($0) })
                else {
                    throw error
                }
                // What became of the write is known now, and said below: "retry it only if running it twice is
                // harmless", then "it was taken back: retry it", left the reader to choose.
                let advice = ": " + RedisError.mayHaveRunAdvice
                if store.message.hasSuffix(advice) { store.message.removeLast(advice.count) }
                guard !written.lostReply else {
                    var unknown = StoreError(
                        store.kind,
                        store.message + "; "
                            + (lostReply
                                ?? "what it had recorded was undone, its last write's too if it had run, but "
                                + "that write got no reply and may still be recorded ('suggest export' shows it; "
                                + "importing the same file again records the donations with identifiers once)"))
                    unknown.mayHaveBeenRecorded = true
                    throw unknown
                }
                throw StoreError(store.kind, store.message + "; " + said)
            }
            let store =
                (error as? StoreError) ?? (error as? RedisError).map({ Self.translate($0) })
                ?? StoreError(.failed, "\(error)")
            var left = StoreError(store.kind, store.message + "; " + leftover)
            left.mayHaveBeenRecorded = true
            throw left
        }
    }

    /// Deletes the donations an import recorded, conversation by conversation.
    /// - Returns: whether every one was deleted.
    private func undo(_ ledger: ImportLedger) -> Bool {
        var complete = true
        for (account, identifiers) in ledger.identifiers {
            let keys = RedisKeys(account: String(decoding: account, as: UTF8.self))
            let doomed = Set(identifiers.map { Array($0.utf8) })
            guard let found = try? numbers(in: keys.identifiers, of: identifiers) else { return false }
            for number in Set(found.compactMap { $0 }).sorted() {
                let rewritten = try? rewrite(
                    number, keys: keys, dropping: { doomed.contains(Array($0.identifier.utf8)) }, allowingOutOfMemory: true,
                    keepingSuggestLess: true)
                if rewritten == nil { complete = false }
            }
            let numbered = (ledger.numberedConversations[account] ?? []).map(\.string)
            if (try? forgetNumbersWithoutConversations(among: numbered, keys)) == nil { complete = false }
            // The weights learned from what was undone: folded again now if the server lets it, else marked (by the
            // rewrites) for the next maintenance step. Nothing recorded, nothing to fold: a refused donation (a full
            // node, a share to a conversation gone) must not cost a read of the account's whole history.
            if !identifiers.isEmpty { _ = try? refoldWeights(keys) }
            // An account the import made, left with nothing: its name goes too (from the list of accounts, its
            // counters and stamp), as after a deletion of the whole account.
            if complete, (try? send(RedisCommand("HLEN", key: keys.conversationNumbers)))?.integer == 0 {
                if (try? forgetAccountIfEmpty(keys)) == nil { complete = false }
            }
        }
        return complete
    }

    /// Removes the numbers given to `conversations` that never got a hash (their writes failed): no conversation
    /// identifier of a failed import, or of an account deleted whole, stays behind. Only the conversations given are
    /// looked at: taking an import back costs what the import did, not the account's size. A number is forgotten
    /// only by a script that finds it still mapped and still without a hash (`RedisScripts.forgetNumbers`), so a
    /// conversation written meanwhile keeps its number; a client that reserved a number a moment ago and writes its
    /// conversation after it was forgotten is refused by its write's check (`ScriptBuilder.checkNumber`) and asks
    /// for a number again.
    func forgetNumbersWithoutConversations(among conversations: some Collection<String>, _ keys: RedisKeys)
        throws(StoreError)
    {
        let orphans = try numberedConversations(Array(conversations), keys).filter { !$0.hasHash }
        var start = 0
        while start < orphans.count {
            let slice = orphans[start..<min(start + 256, orphans.count)]
            start += slice.count
            var forget = RedisCommand(
                script: RedisScripts.forgetNumbers,
                keys: [keys.conversationNumbers] + slice.map { keys.conversation($0.number) })
            for orphan in slice {
                forget.append(orphan.identifier)
                forget.append(String(orphan.number))
            }
            _ = try write([forget])
        }
    }

    /// The conversations among `identifiers` that have a number, each with it and whether its hash exists (a
    /// number without a hash: a write that failed after the number was given, or a conversation deleted since).
    func numberedConversations(_ identifiers: [String], _ keys: RedisKeys) throws(StoreError)
        -> [(identifier: String, number: Int64, hasHash: Bool)]
    {
        let numbered = zip(identifiers, try numbers(in: keys.conversationNumbers, of: identifiers)).compactMap {
            identifier, number in number.map { (identifier: identifier, number: $0) }
        }
        let exists = try pipeline(numbered.map { RedisCommand("EXISTS", key: keys.conversation($0.number)) })
        return zip(numbered, exists).map { ($0.identifier, $0.number, $1.integer == 1) }
    }

    /// The numbers the hash at `key` holds for `fields`, in their order (`nil` for a field it does not have): HMGET,
    /// a thousand fields a command.
    func numbers(in key: String, of fields: [String]) throws(StoreError) -> [Int64?] {
        var numbers: [Int64?] = []
        numbers.reserveCapacity(fields.count)
        var start = 0
        while start < fields.count {
            let slice = fields[start..<min(start + 1000, fields.count)]
            start += slice.count
            var lookup = RedisCommand("HMGET", key: key)
            for field in slice { lookup.append(field) }
            guard let reply = try send(lookup).checkedArray(), reply.count == slice.count else {
                throw StoreError.damaged("a reply of Redis to HMGET")
            }
            numbers += reply.map { $0.string.flatMap(Int64.init) }
        }
        return numbers
    }
}

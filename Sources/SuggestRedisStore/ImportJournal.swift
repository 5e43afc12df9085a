import RedisCluster
import SuggestCore

/// What an import under way has recorded, kept on the server beside each account it writes to, so that an import
/// that never finishes is still all or nothing.
///
/// Redis has no transaction across an import's rounds, and the importing process undoes what it recorded when it
/// fails or is interrupted. A process that cannot (killed, interrupted a second time while undoing, its machine
/// lost) left half an import, and importing the file again then recorded the donations without identifiers twice.
/// Now each round first renews the import's lease and lists the conversations it will ask numbers for, and the
/// round's own script checks the lease and lists the identifiers it records, atomically with recording them (a
/// duplicate, recorded before by someone else, is never listed, so undoing never takes it). When the import
/// finishes its journal goes; when the lease runs out without that (60 s, by Redis's clock), the upkeep of a later
/// command on the account takes the lease back and undoes what the journal lists (`recoverAbandonedImports`).
///
/// A deletion of the whole account takes every lease back first: an import running meanwhile then fails at its
/// next round, or at its end, and undoes itself, rather than finish on top of the deletion.
struct ImportJournal {
    /// The import's id, in its keys (`RedisKeys.importLease`, `importJournal`).
    let id: String
    /// For each account the import has written to, the version it left its lease at.
    private var versions: [[UInt8]: Int64] = [:]

    /// How long a lease lasts without a round renewing it: far longer than a round takes, a failover included.
    static let leaseMilliseconds = 60_000

    init() {
        var random = SystemRandomNumberGenerator()
        id = String(random.next() as UInt64, radix: 16)
    }

    /// The version of the account's lease as this import left it, if it has one there.
    func version(of account: String) -> Int64? { versions[Array(account.utf8)] }

    /// Notes that a script of this import raised the account's lease by one version.
    mutating func advance(_ account: String) { versions[Array(account.utf8), default: 0] += 1 }

    /// The accounts the import has a lease in.
    var accounts: [String] { versions.keys.map { String(decoding: $0, as: UTF8.self) } }

    /// The error of an import whose lease was taken back while it ran.
    static let lost = StoreError(
        .failed,
        "the account was deleted while this import ran (or the import was taken for abandoned after a minute "
            + "without a word from it); what it had recorded was undone")

    /// The journal's entry for a donation the import recorded, and for a conversation it asked a number for.
    static func recorded(_ identifier: String) -> [UInt8] { Array("d".utf8) + Array(identifier.utf8) }
    static func numbered(_ conversation: String) -> [UInt8] { Array("c".utf8) + Array(conversation.utf8) }
}

extension RedisDonationStore {
    /// Renews the import's lease in each account of `chunk` (making it in an account new to the import) and lists
    /// the conversations the chunk will ask numbers for, before the chunk is written.
    /// - Throws: `ImportJournal.lost` when an account's lease was taken back.
    func journal(_ chunk: ArraySlice<Interaction>, in journal: inout ImportJournal) throws(StoreError) {
        var conversations: [[UInt8]: Set<String>] = [:]
        var order: [String] = []
        for donation in chunk {
            let key = Array(donation.account.utf8)
            if conversations[key] == nil { order.append(donation.account) }
            conversations[key, default: []].insert(donation.conversationIdentifier)
        }
        let commands = order.map { account in
            let keys = RedisKeys(account: account)
            var renew = RedisCommand(
                script: RedisScripts.journalImport,
                keys: [keys.imports, keys.importLease(journal.id), keys.importJournal(journal.id)])
            renew.append(journal.id)
            renew.append(String(journal.version(of: account) ?? 0))
            renew.append(ImportJournal.leaseMilliseconds)
            for conversation in conversations[Array(account.utf8)] ?? [] {
                renew.append(ImportJournal.numbered(conversation))
            }
            return renew
        }
        let replies = try write(commands)
        for (account, reply) in zip(order, replies) {
            guard try Self.integer(reply) == 1 else { throw ImportJournal.lost }
            journal.advance(account)
        }
    }

    /// Forgets the journal of an import that finished.
    /// - Throws: `ImportJournal.lost` when an account's lease was taken back meanwhile: the caller undoes the
    ///   import, as a deletion of the account ran beside it.
    func finish(_ journal: ImportJournal) throws(StoreError) {
        let accounts = journal.accounts
        let replies = try write(
            accounts.map { account in
                forgetting(journal.id, in: RedisKeys(account: account), version: String(journal.version(of: account) ?? 0))
            })
        for reply in replies where try Self.integer(reply) != 1 { throw ImportJournal.lost }
    }

    /// Forgets the journal of an import whose recordings were undone (or deleted), whoever holds its lease now.
    func forget(_ journal: ImportJournal) {
        _ = try? write(journal.accounts.map { forgetting(journal.id, in: RedisKeys(account: $0), version: "any") })
    }

    private func forgetting(_ id: String, in keys: RedisKeys, version: String) -> RedisCommand {
        var forget = RedisCommand(
            script: RedisScripts.forgetImport, keys: [keys.imports, keys.importLease(id), keys.importJournal(id)])
        forget.append(id)
        forget.append(version)
        return forget
    }

    /// Whether the lease of the import is still at the version it left it in `account` (a round's script that
    /// found it otherwise answered `CONFLICT`, which is then no reason to read the account again).
    func holdsLease(_ journal: ImportJournal, in keys: RedisKeys) throws(StoreError) -> Bool {
        let reply = try send(RedisCommand("HGET", key: keys.importLease(journal.id), "v"))
        if let message = reply.errorMessage { throw Self.refusal(message) }
        return reply.string == journal.version(of: keys.account).map { String($0) }
    }

    /// Undoes the imports of `accounts` whose lease ran out (their process gone without a word), or all of them
    /// (`all`, for a deletion of the whole account, which deletes what they recorded itself), and forgets their
    /// journals.
    /// - Returns: whether every abandoned import was undone (one that could not be stays for the next upkeep).
    @discardableResult
    func recoverAbandonedImports(accounts: [String], all: Bool = false) throws(StoreError) -> Bool {
        var complete = true
        var start = 0
        while start < accounts.count {
            let slice = Array(accounts[start..<min(start + 1000, accounts.count)])
            start += slice.count
            let counts = try pipeline(slice.map { RedisCommand("SCARD", key: RedisKeys(account: $0).imports) })
            for (account, count) in zip(slice, counts) where try (Self.integer(count) ?? 0) > 0 {
                let keys = RedisKeys(account: account)
                let ids = (try send(RedisCommand("SMEMBERS", key: keys.imports)).checkedArray() ?? []).compactMap(\.string)
                for id in ids {
                    guard try claim(id, in: keys, all: all) else { continue }
                    // A deletion of the whole account deletes what the import recorded itself.
                    var undone = all
                    if !undone { undone = try undoJournal(id, in: keys) }
                    if undone {
                        _ = try Self.integer(write([forgetting(id, in: keys, version: "any")])[0])
                    } else {
                        complete = false
                    }
                }
            }
        }
        return complete
    }

    private func claim(_ id: String, in keys: RedisKeys, all: Bool) throws(StoreError) -> Bool {
        var claim = RedisCommand(script: RedisScripts.claimImport, keys: [keys.importLease(id)])
        claim.append(all ? "all" : "expired")
        return try Self.integer(write([claim])[0]) == 1
    }

    /// An integer reply, or the store's error for an error reply (a script's error, a command the user may not run).
    private static func integer(_ reply: RedisValue) throws(StoreError) -> Int64? {
        if let message = reply.errorMessage { throw refusal(message) }
        return reply.integer
    }

    /// Undoes what one abandoned import's journal lists.
    private func undoJournal(_ id: String, in keys: RedisKeys) throws(StoreError) -> Bool {
        var ledger = ImportLedger()
        var first = 0
        let page = 10_000
        while true {
            let entries = try send(RedisCommand("LRANGE", key: keys.importJournal(id), first, first + page - 1))
                .checkedArray() ?? []
            for entry in entries {
                guard let bytes = entry.bytes, let kind = bytes.first else { continue }
                let name = String(decoding: bytes.dropFirst(), as: UTF8.self)
                if kind == UInt8(ascii: "d") {
                    ledger.note(account: keys.account, identifier: name)
                } else {
                    ledger.numbered(account: keys.account, conversations: [name])
                }
            }
            guard entries.count == page else { break }
            first += page
        }
        return undo(ledger)
    }
}

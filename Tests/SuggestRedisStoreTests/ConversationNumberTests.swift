import RedisCluster
import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestRedisStore

/// A conversation's number is given before its hash is written (`RedisScripts.numbers`, then `apply`), and an
/// import's undo forgets the numbers of conversations without a hash. Another client's number, given a moment before
/// the undo looked, must not end up leading nowhere: its conversation written without an identifier that leads to
/// it (found later under a second number, its history split in two), nor a written conversation's number forgotten.
@Suite(.serialized) struct ConversationNumberTests {
    static let account = "numbers"

    /// What another client does first: asks for the conversation's number.
    static func reserve(_ conversation: String, keys: RedisKeys, on store: RedisDonationStore) throws -> Int64 {
        var numbers = RedisCommand(script: RedisScripts.numbers, keys: [keys.conversationNumbers, keys.meta])
        numbers.append(1)
        numbers.append(conversation)
        let reply = try store.send(numbers).checkedArray() ?? []
        return try #require(reply.count == 2 ? reply[1].integer : nil)
    }

    /// What it does next: writes the new conversation's hash under that number, as the store's write does.
    static func create(
        _ conversation: String, number: Int64, keys: RedisKeys, on store: RedisDonationStore
    ) throws -> RedisDonationStore.ApplyOutcome {
        var script = ScriptBuilder(keys)
        let hash = keys.conversation(number)
        script.check(hash, version: 0)
        script.checkNumber(keys.conversationNumbers, identifier: conversation, number: number)
        script.hset(hash, "id", Array(conversation.utf8))
        return try RedisDonationStore.applyOutcome(store.send(script.command))
    }

    static func mapped(_ conversation: String, keys: RedisKeys, on store: RedisDonationStore) throws -> String? {
        try store.send(RedisCommand("HGET", key: keys.conversationNumbers, conversation)).string
    }

    static func exists(_ number: Int64, keys: RedisKeys, on store: RedisDonationStore) throws -> Bool {
        try store.send(RedisCommand("EXISTS", key: keys.conversation(number))).integer == 1
    }

    /// Runs `body` with a store on a cluster of its own, and the keys of the test's account.
    static func onACluster(_ body: (RedisDonationStore, RedisKeys) throws -> Void) throws {
        let cluster = try LocalRedisCluster(masters: 3, replicasPerMaster: 1)
        defer { cluster.stop() }
        try body(try RedisDonationStore.open(url: cluster.url), RedisKeys(account: account))
    }

    @Test func aNumberForgottenBeforeItsConversationIsWrittenRefusesTheWrite() throws {
        try Self.onACluster { store, keys in
            // Another client's reservation, and then an undo's look: a number without a hash, which it forgets.
            let number = try Self.reserve("late", keys: keys, on: store)
            try store.forgetNumbersWithoutConversations(among: ["late"], keys)
            #expect(try Self.mapped("late", keys: keys, on: store) == nil)
            // The other client's write under the forgotten number is refused, and writes nothing.
            #expect(try Self.create("late", number: number, keys: keys, on: store) == .conflict)
            #expect(try !Self.exists(number, keys: keys, on: store))
            // Asked again, it gets a number that leads to the conversation it writes.
            let again = try Self.reserve("late", keys: keys, on: store)
            #expect(again != number)
            #expect(try Self.create("late", number: again, keys: keys, on: store) == .applied)
            #expect(try Self.mapped("late", keys: keys, on: store) == String(again))
        }
    }

    /// The store tells "é" and "e\u{301}" apart (two conversations, two numbers): so must what an undo forgets.
    @Test func anImportsLedgerKeepsCanonicallyEquivalentConversationsApart() {
        var ledger = RedisDonationStore.ImportLedger()
        ledger.numbered(account: Self.account, conversations: ["\u{e9}", "e\u{301}", "\u{e9}"])
        #expect(ledger.numberedConversations[Array(Self.account.utf8)]?.count == 2)
    }

    @Test func aConversationWrittenBeforeTheUndoForgetsKeepsItsNumber() throws {
        try Self.onACluster { store, keys in
            let written = try Self.reserve("written", keys: keys, on: store)
            #expect(try Self.create("written", number: written, keys: keys, on: store) == .applied)
            let orphan = try Self.reserve("orphan", keys: keys, on: store)
            // Another import's reservation, not this undo's to look at: it stays.
            let others = try Self.reserve("others", keys: keys, on: store)
            try store.forgetNumbersWithoutConversations(among: ["written", "orphan"], keys)
            #expect(try Self.mapped("written", keys: keys, on: store) == String(written))
            #expect(try Self.mapped("orphan", keys: keys, on: store) == nil)
            #expect(try !Self.exists(orphan, keys: keys, on: store))
            #expect(try Self.mapped("others", keys: keys, on: store) == String(others))
        }
    }
}

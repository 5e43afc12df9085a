import RedisCluster
import SuggestTestSupport
import Testing

/// Slots moved under a client that still has the old layout: `MOVED` after a move, `ASK` and `TRYAGAIN` during one.
/// Each test moves a slot of its own (a hash tag unique to the run) on a cluster kept for these tests.
@Suite("MOVED, ASK and TRYAGAIN")
struct RedirectionTests {
    @Test("MOVED after a slot moved: the command follows it and the client's map is updated")
    func moved() throws {
        let cluster = try migrationCluster()
        let client = try makeClient(cluster)
        let tag = uniquePrefix("moved")
        let keys = (0..<20).map { "{\(tag)}:\($0)" }
        let slot = RedisHashSlot.of(tag)
        #expect(
            try client.pipeline(keys.map { RedisCommand("SET", key: $0, $0) }).allSatisfy { $0 == .simpleString("OK") })
        let source = try cluster.owner(ofSlot: slot).node
        let target = try #require(try cluster.masters().map(\.node).first { $0 != source })
        #expect(try client.master(forSlot: slot)?.endpoint.port == source.port)

        try cluster.moveSlot(slot, to: target)
        // The client was told nothing: its map still says `source`, so the next command meets MOVED.
        #expect(try client.master(forSlot: slot)?.endpoint.port == source.port)
        let other = "\(tag)-elsewhere"
        let replies = try client.pipeline(
            keys.map { RedisCommand("GET", key: $0) } + [RedisCommand("SET", key: other, 1)])
        #expect(Array(replies.prefix(20)) == keys.map { .bulk($0) })
        #expect(replies.last == .simpleString("OK"))
        #expect(try client.master(forSlot: slot)?.endpoint.port == target.port)
        #expect(try cluster.cli(target, "GET", keys[0]) == keys[0])

        // And back, with a write first this time.
        try cluster.moveSlot(slot, to: source)
        #expect(try client.send(RedisCommand("SET", key: keys[1], "again")) == .simpleString("OK"))
        #expect(try client.master(forSlot: slot)?.endpoint.port == source.port)
        #expect(try cluster.cli(source, "GET", keys[1]) == "again")
    }

    @Test("ASK while a slot is migrating: ASKING on the target for moved keys, the map left alone")
    func ask() throws {
        let cluster = try migrationCluster()
        let client = try makeClient(cluster) { $0.retryTimeout = .seconds(20) }
        let tag = uniquePrefix("ask")
        let keys = (0..<10).map { "{\(tag)}:\($0)" }
        let slot = RedisHashSlot.of(tag)
        _ = try client.pipeline(keys.map { RedisCommand("SET", key: $0, "v-\($0)") })
        let source = try cluster.owner(ofSlot: slot).node
        let target = try #require(try cluster.masters().map(\.node).first { $0 != source })

        try cluster.beginMigration(slot: slot, from: source, to: target)
        try cluster.migrate(keys: Array(keys.prefix(5)), from: source, to: target)
        #expect(try cluster.cli(target, "CLUSTER", "COUNTKEYSINSLOT", String(slot)) == "5")
        // Half the keys on each side: the pipeline reads them all, the moved ones through ASK.
        let replies = try client.pipeline(keys.map { RedisCommand("GET", key: $0) })
        #expect(replies == keys.map { .bulk("v-\($0)") })
        // A new key goes to the target (the source does not have it and says ASK).
        let fresh = "{\(tag)}:new"
        #expect(try client.send(RedisCommand("SET", key: fresh, "n")) == .simpleString("OK"))
        #expect(try cluster.cli(target, "CLUSTER", "COUNTKEYSINSLOT", String(slot)) == "6")
        #expect(try cluster.cli(source, "CLUSTER", "COUNTKEYSINSLOT", String(slot)) == "5")
        // ASK does not change the map: the slot is still the source's until the migration ends.
        #expect(try client.master(forSlot: slot)?.endpoint.port == source.port)

        // A command over keys on both sides meets TRYAGAIN until the migration ends; it then succeeds.
        let split = RedisCommand("MGET", key: keys[0], keys[9])
        let pending = BackgroundCall { try client.send(split) }
        sleepSeconds(0.3)
        try cluster.finishMigration(slot: slot, from: source, to: target)
        #expect(try pending.join().get() == .array([.bulk("v-\(keys[0])"), .bulk("v-\(keys[9])")]))
        #expect(try client.send(RedisCommand("GET", key: keys[9])) == .bulk("v-\(keys[9])"))
        #expect(try client.master(forSlot: slot)?.endpoint.port == target.port)
    }

    @Test("TRYAGAIN past the retry time gives its own error")
    func tryAgainRunsOut() throws {
        let cluster = try migrationCluster()
        let client = try makeClient(cluster) { $0.retryTimeout = .milliseconds(300) }
        let tag = uniquePrefix("tryagain")
        let keys = ["{\(tag)}:a", "{\(tag)}:b"]
        let slot = RedisHashSlot.of(tag)
        _ = try client.pipeline(keys.map { RedisCommand("SET", key: $0, 1) })
        let source = try cluster.owner(ofSlot: slot).node
        let target = try #require(try cluster.masters().map(\.node).first { $0 != source })
        try cluster.beginMigration(slot: slot, from: source, to: target)
        defer { try? cluster.finishMigration(slot: slot, from: source, to: target) }
        try cluster.migrate(keys: [keys[0]], from: source, to: target)
        let started = monotonicSeconds()
        expectError {
            try client.send(RedisCommand("MGET", key: keys[0], keys[1]))
        } where: { error in
            guard case .server(_, let message) = error as? RedisError else { return false }
            return message.hasPrefix("TRYAGAIN")
        }
        let waited = monotonicSeconds() - started
        #expect(waited >= 0.25 && waited < 3, "waited \(waited) s")
    }
}

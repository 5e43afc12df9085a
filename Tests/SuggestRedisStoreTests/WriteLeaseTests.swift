import RedisCluster
import SuggestCore
import SuggestTestSupport
import Testing

@testable import SuggestRedisStore

/// The account's write lease step by step (`WriteLease`, `Contention`), on a real cluster: what the conformance
/// tests only reach through races between writers.
@Suite(.serialized) struct WriteLeaseTests {
    static let keys = RedisKeys(account: "lease")

    /// A store on the suite's cluster, the lease key gone.
    static func store() throws -> RedisDonationStore {
        let store = try RedisDonationStore.open(url: try LocalRedisCluster.shared("write-lease").url)
        _ = try store.send(RedisCommand("DEL", key: keys.writeLease))
        return store
    }

    static func millisecondsLeft(_ store: RedisDonationStore) throws -> Int {
        Int(try #require(try store.send(RedisCommand("PTTL", key: keys.writeLease)).integer))
    }

    /// A lease key set by hand, with no expiry: a writer that would take the lease gives it the lease's length, so
    /// that it lapses, and waits for it as for another writer's.
    @Test func takingALeaseWithoutAnExpiryGivesItOne() throws {
        let store = try Self.store()
        _ = try store.send(RedisCommand("SET", key: Self.keys.writeLease, "set-by-hand"))
        #expect(try Self.millisecondsLeft(store) == -1)
        let left = try store.take(RedisDonationStore.WriteLease(), Self.keys)
        #expect(left == .milliseconds(RedisDonationStore.WriteLease.milliseconds))
        let expiry = try Self.millisecondsLeft(store)
        #expect(expiry > 0 && expiry <= RedisDonationStore.WriteLease.milliseconds)
        #expect(try store.send(RedisCommand("GET", key: Self.keys.writeLease)).string == "set-by-hand")
    }

    /// Taking the lease again renews it; another writer's is not taken, and its time left is told.
    @Test func aLeaseIsRenewedByItsHolderAndRefusedToOthers() throws {
        let store = try Self.store()
        let lease = RedisDonationStore.WriteLease()
        #expect(try store.take(lease, Self.keys) == nil)
        let other = try #require(try store.take(RedisDonationStore.WriteLease(), Self.keys))
        #expect(other > .zero && other <= RedisDonationStore.WriteLease.duration)
        #expect(try store.take(lease, Self.keys) == nil)
        store.giveBack(lease, Self.keys)
        #expect(try Self.millisecondsLeft(store) == -2)
    }

    /// A write that holds the lease renews it between its steps once a third of it has passed; when it lapsed
    /// and another writer took it meanwhile, the write stops its try, counted as lost, and no longer holds it.
    @Test func aHolderRenewsBetweenStepsAndStopsWhenAnotherTookItsLease() throws {
        let store = try Self.store()
        var contention = RedisDonationStore.Contention(Self.keys, conflictsBeforeLease: 0, as: .recording)
        #expect(try contention.mayTry(store))
        #expect(contention.holdsLease)
        // Shortened by hand, so that a renewal shows: past a third of the lease, the holder renews it.
        _ = try store.send(RedisCommand("PEXPIRE", key: Self.keys.writeLease, 1_500))
        sleepSeconds(1.1)
        #expect(try contention.keepsLease(store))
        #expect(try Self.millisecondsLeft(store) > 1_500, "renewed to the lease's whole length")
        // Another writer holds the lease now, as after this one's lapsed (under a read longer than it).
        _ = try store.send(RedisCommand("SET", key: Self.keys.writeLease, "another-writer", "PX", 10_000))
        sleepSeconds(1.1)
        let conflicts = contention.conflicts
        #expect(try !contention.keepsLease(store))
        #expect(!contention.holdsLease)
        #expect(contention.conflicts == conflicts + 1)
        #expect(try store.send(RedisCommand("GET", key: Self.keys.writeLease)).string == "another-writer")
    }
}

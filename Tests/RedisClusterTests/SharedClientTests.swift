import RedisCluster
import SuggestTestSupport
import Synchronization
import Testing

/// One client shared by many threads, as a server's workers will share it.
@Suite("Many threads, one client")
struct SharedClientTests {
    @Test(
        "8 threads × 1000 pipelines: every reply is its own command's",
        arguments: [8, 2])
    func pipelinesOnThreads(connectionsPerNode: Int) throws {
        let cluster = try sharedCluster()
        // With 2 connections per node, 8 threads wait for each other's: the pool's waiting and its lock order.
        let client = try makeClient(cluster) { $0.connectionsPerNode = connectionsPerNode }
        let prefix = uniquePrefix("threads-\(connectionsPerNode)")
        let checked = Atomic<Int>(0)
        let failures = onThreads(8) { thread in
            var generator = SeededRandom(seed: UInt64(0xC0C0 + thread))
            for round in 0..<1000 {
                // Five writes and five reads of the thread's own keys, spread over every master.
                let keys = (0..<5).map { _ in "\(prefix):\(thread):\(Int.random(in: 0..<40, using: &generator))" }
                var commands = keys.enumerated().map { RedisCommand("SET", key: $0.element, "\(round)-\($0.offset)") }
                commands += keys.map { RedisCommand("GET", key: $0) }
                let replies = try client.pipeline(commands)
                // The last write of a key in this pipeline is what its reads return.
                for (index, key) in keys.enumerated() {
                    let last = keys.lastIndex(of: key) ?? index
                    guard replies[index] == .simpleString("OK"), replies[5 + index] == .bulk("\(round)-\(last)") else {
                        throw HarnessError("thread \(thread) round \(round): \(key) -> \(replies)")
                    }
                }
                checked.add(1, ordering: .relaxed)
            }
        }
        #expect(failures.compactMap { $0 }.isEmpty, "\(failures.compactMap { $0 }.prefix(3))")
        #expect(checked.load(ordering: .relaxed) == 8000)
    }

    @Test("single commands from 16 threads, and a refresh in the middle of them")
    func sendsOnThreads() throws {
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        let prefix = uniquePrefix("sends")
        let failures = onThreads(16) { thread in
            for round in 0..<200 {
                let key = "\(prefix):\(thread)"
                guard try client.send(RedisCommand("INCR", key: key)) == .integer(Int64(round + 1)) else {
                    throw HarnessError("thread \(thread): INCR out of step at \(round)")
                }
                if thread == 0 && round == 100 { try client.refreshTopology() }
            }
        }
        #expect(failures.compactMap { $0 }.isEmpty, "\(failures.compactMap { $0 }.prefix(3))")
    }
}

import Dispatch
import RedisCluster
import SuggestTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A master killed with SIGKILL under a client: its replica is promoted and the client goes on. Each test kills a
/// node, so each has a cluster of its own (with a password, so that logging in to a promoted replica is tested too).
@Suite("Failover")
struct FailoverTests {
    @Test("SIGKILL a master: reads and writes go on once its replica is promoted, nothing WAIT confirmed is lost")
    func killedMaster() throws {
        let cluster = try LocalRedisCluster(masters: 3, replicasPerMaster: 1, password: "fail-over-pw")
        defer { cluster.stop() }
        let client = try makeClient(cluster) { $0.retryTimeout = .seconds(30) }
        let prefix = uniquePrefix("failover")
        let keys = (0..<200).map { "\(prefix):\($0)" }
        let written = try client.pipeline(
            keys.map { RedisCommand("SET", key: $0, "v-\($0)") }, waitingForReplicas: 1, timeout: .seconds(2))
        #expect(written.replies.allSatisfy { $0 == .simpleString("OK") })
        #expect(written.replicas == 1)

        let slot = RedisHashSlot.of(keys[0])
        let victim = try cluster.owner(ofSlot: slot).node
        let heir = try cluster.replica(of: victim)
        let victimKeys = keys.filter { victimSlots(cluster, victim).contains(RedisHashSlot.of($0)) }
        #expect(!victimKeys.isEmpty)

        cluster.kill(victim)
        let started = monotonicSeconds()
        // The first command after the kill: the dead master refuses connections; the client keeps asking for the
        // layout until the replica serves the slot, then sends the command there. Nothing had been written to
        // the dead node, so even a write (INCR) is sent again safely and runs exactly once.
        let counter = "{\(victimKeys[0])}:n"
        #expect(RedisHashSlot.of(counter) == RedisHashSlot.of(victimKeys[0]))
        #expect(try client.send(RedisCommand("INCR", key: counter)) == .integer(1))
        let tookOver = monotonicSeconds() - started
        #expect(try client.master(forSlot: RedisHashSlot.of(victimKeys[0]))?.endpoint.port == heir.port)
        // cluster-node-timeout is 2 s: the replica cannot take over before the master is deemed failed.
        #expect(tookOver > 1.5 && tookOver < 30, "took \(tookOver) s")

        let replies = try client.pipeline(keys.map { RedisCommand("GET", key: $0) })
        #expect(replies == keys.map { .bulk("v-\($0)") })
        try cluster.waitForPromotion(of: heir)
        #expect(try cluster.cli(heir, "GET", victimKeys[0]) == "v-\(victimKeys[0])")
        #expect(try client.nodes().filter { $0.role == .master }.map(\.endpoint.port).contains(heir.port))
    }

    @Test("a WAIT a live master answers short is told from one ended by an error, or whose master was lost")
    func waitCutShortByALostMaster() throws {
        let cluster = try LocalRedisCluster(masters: 3, replicasPerMaster: 1)
        defer { cluster.stop() }
        let client = try makeClient(cluster)
        let key = uniquePrefix("waitlost") + ":k"
        let master = try cluster.owner(ofSlot: RedisHashSlot.of(key)).node
        let replica = try cluster.replica(of: master)
        kill(replica.pid, SIGSTOP)
        defer { kill(replica.pid, SIGCONT) }
        // The replica stalled, the master alive: WAIT answers 0 at its timeout.
        let short = try client.pipeline(
            [RedisCommand("SET", key: key, "a")], waitingForReplicas: 1, timeout: .milliseconds(300))
        #expect(short.replies == [.simpleString("OK")] && short.replicas == 0 && short.waitsAnswered)
        // A WAIT ended by an error (`CLIENT UNBLOCK … ERROR`, as an operator or a failover may) said nothing of the
        // replicas either: not an answer.
        let unblocked = Mutex<RedisClusterClient.ReplicatedReplies?>(nil)
        let failures = onThreads(2) { thread in
            guard thread == 1 else {
                let replies = try client.pipeline(
                    [RedisCommand("SET", key: key, "u")], waitingForReplicas: 1, timeout: .seconds(10))
                unblocked.withLock { $0 = replies }
                return
            }
            let deadline = monotonicSeconds() + 8
            while monotonicSeconds() < deadline {
                sleepSeconds(0.1)
                // Blocked in WAIT now (`flags=b`): an idle connection whose last command was a WAIT is listed too.
                let waiting = try cluster.cli(master, "CLIENT", "LIST").split(separator: "\n")
                    .first { $0.contains(" cmd=wait ") && $0.contains(" flags=b ") }
                guard let id = waiting?.split(separator: " ").first(where: { $0.hasPrefix("id=") })?.dropFirst(3)
                else { continue }
                // 1 when it was still blocked; 0 when its WAIT answered meanwhile.
                if try cluster.cli(master, "CLIENT", "UNBLOCK", String(id), "ERROR").contains("1") { return }
            }
            throw HarnessError("no client waited on the master")
        }
        #expect(failures.compactMap { $0 }.isEmpty, "\(failures)")
        let cut = try #require(unblocked.withLock { $0 })
        #expect(cut.replies == [.simpleString("OK")] && cut.replicas == 0 && !cut.waitsAnswered)
        // The master killed while it waits: its writes may be gone with it, which a count of 0 did not say (a
        // caller then checked the masters again, and could take the promoted replica for a master alone).
        let pid = master.pid
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.5) { _ = kill(pid, SIGKILL) }
        let lost = try client.pipeline(
            [RedisCommand("SET", key: key, "b")], waitingForReplicas: 1, timeout: .seconds(5))
        #expect(lost.replies == [.simpleString("OK")] && lost.replicas == 0 && !lost.waitsAnswered)
    }

    @Test("a master killed while four threads read: every read succeeds with the right replies")
    func killedUnderLoad() throws {
        let cluster = try LocalRedisCluster(masters: 3, replicasPerMaster: 1)
        defer { cluster.stop() }
        let client = try makeClient(cluster) { $0.retryTimeout = .seconds(30) }
        let prefix = uniquePrefix("underload")
        let keys = (0..<60).map { "\(prefix):\($0)" }
        _ = try client.pipeline(
            keys.map { RedisCommand("SET", key: $0, $0) }, waitingForReplicas: 1, timeout: .seconds(2))
        let victim = try cluster.owner(ofSlot: RedisHashSlot.of(keys[0])).node
        let heir = try cluster.replica(of: victim)

        let killAt = monotonicSeconds() + 0.3
        let rounds = Mutex([Int](repeating: 0, count: 4))
        let failures = onThreads(5) { thread in
            if thread == 4 {
                sleepSeconds(killAt - monotonicSeconds())
                cluster.kill(victim)
                return
            }
            var round = 0
            // Every reader goes on past the kill, so each crosses the failover at least once.
            while monotonicSeconds() < killAt + 1 || round < 20 {
                round += 1
                // Reads only: each may be sent again after a broken connection, so none may fail.
                let replies = try client.pipeline(keys.map { RedisCommand("GET", key: $0) })
                guard replies == keys.map({ .bulk($0) }) else {
                    throw HarnessError("thread \(thread), round \(round): wrong replies \(replies.prefix(3))")
                }
            }
            rounds.withLock { $0[thread] = round }
        }
        #expect(failures.compactMap { $0 }.isEmpty, "\(failures)")
        #expect(rounds.withLock { $0 }.allSatisfy { $0 >= 20 })
        #expect(try client.master(forSlot: RedisHashSlot.of(keys[0]))?.endpoint.port == heir.port)
    }

    /// The slots `node` serves, as the cluster says.
    private func victimSlots(_ cluster: LocalRedisCluster, _ node: LocalRedisCluster.Node) -> Set<Int> {
        let lines = (try? cluster.masters()) ?? []
        let ranges = lines.first { $0.node == node }?.line.slots ?? []
        return Set(ranges.flatMap { Array($0) })
    }
}

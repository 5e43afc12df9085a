import RedisCluster
import SuggestTestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Commands and pipelines on a cluster")
struct ClusterClientTests {
    @Test("the layout has every slot, 3 masters and 3 replicas, as CLUSTER NODES says")
    func layout() throws {
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        let nodes = try client.nodes()
        let masters = nodes.filter { $0.role == .master }
        #expect(masters.count == 3)
        #expect(nodes.filter { $0.role == .replica }.count == 3)
        #expect(try client.isCluster())
        let covered = masters.flatMap(\.slots).reduce(0) { $0 + $1.count }
        #expect(covered == 16384)
        for (node, line) in try cluster.masters() {
            let known = try #require(masters.first { $0.endpoint.port == node.port })
            #expect(known.id == line.id)
            #expect(known.slots == line.slots)
        }
        for replica in nodes where replica.role == .replica {
            #expect(masters.contains { $0.id == replica.masterID })
        }
    }

    /// A fresh or replaced node listed first, cluster-enabled but not joined, answered `CLUSTER SLOTS` with no slot,
    /// and its empty layout hid the cluster behind it: "the Redis Cluster is down (no master serves slot ...)"
    /// (found by a probe). The next seeds are asked.
    @Test("a seed that serves no slot does not hide the cluster behind it")
    func aSeedServingNoSlot() throws {
        let cluster = try sharedCluster()
        let lone = try LocalRedisCluster(
            standaloneWithPassword: nil, settings: ["cluster-enabled yes", "cluster-config-file nodes.conf"])
        defer { lone.stop() }
        let client = try RedisClusterClient(
            configuration: try RedisClusterConfiguration(url: "redis://\(lone.seeds),\(cluster.seeds)"))
        let key = uniquePrefix("unjoined-seed") + ":k"
        _ = try client.send(RedisCommand("SET", key: key, "v"))
        #expect(try client.send(RedisCommand("GET", key: key)) == .bulk("v"))
        #expect(try client.nodes().filter { $0.role == .master }.count == 3)
    }

    /// hiredis makes its sockets without close-on-exec: every program a client's process started (a test running
    /// `suggest`, an app running a helper) inherited its open connections, and counted them against its own limit
    /// on files (found when a low-limit test failed in CI).
    @Test("a client's connections are not handed to the programs its process starts")
    func connectionsAreCloseOnExec() throws {
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        let prefix = uniquePrefix("close-on-exec")
        for index in 0..<16 { _ = try client.send(RedisCommand("GET", key: "\(prefix):\(index)")) }
        let connections = socketDescriptors(connectedTo: Set(cluster.nodes.map(\.port)))
        #expect(!connections.isEmpty)
        for (descriptor, inode) in connections {
            // Another test's socket may be listed between its connect and its flag; a defect is lasting. (And
            // another test may have closed it and had its number reused since it was listed.)
            var flags = fcntl(descriptor, F_GETFD)
            if flags >= 0 && flags & FD_CLOEXEC == 0 {
                sleepSeconds(0.5)
                flags = fcntl(descriptor, F_GETFD)
            }
            guard socketInode(descriptor) == inode else { continue }
            #expect(flags >= 0 && flags & FD_CLOEXEC != 0, "socket \(descriptor) would be inherited")
        }
    }

    @Test("replies of every kind, and binary values round-trip")
    func replies() throws {
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        let prefix = uniquePrefix("replies")
        #expect(try client.send(RedisCommand("PING")) == .simpleString("PONG"))
        #expect(try client.send(RedisCommand("GET", key: "\(prefix):missing")) == .null)
        #expect(try client.send(RedisCommand("INCR", key: "\(prefix):counter")) == .integer(1))
        #expect(try client.send(RedisCommand("INCRBY", key: "\(prefix):counter", 41)) == .integer(42))
        _ = try client.send(RedisCommand("RPUSH", key: "\(prefix):list", "a", "b", "c"))
        #expect(
            try client.send(RedisCommand("LRANGE", key: "\(prefix):list", 0, -1))
                == .array([.bulk("a"), .bulk("b"), .bulk("c")]))
        let nested = try client.eval(
            RedisScript("return {1, {2, 'x'}, redis.status_reply('fine')}"), keys: ["\(prefix):any"])
        #expect(nested == .array([.integer(1), .array([.integer(2), .bulk("x")]), .simpleString("fine")]))

        let binary = (0...255).map { UInt8($0) } + [13, 10, 0]
        let key: [UInt8] = Array("\(prefix):bin:".utf8) + [0, 255, 13, 10]
        #expect(try client.send(RedisCommand("SET", key: key, binary)) == .simpleString("OK"))
        #expect(try client.send(RedisCommand("GET", key: key)) == .bulkString(binary))
        #expect(try client.send(RedisCommand("STRLEN", key: key)) == .integer(259))

        // A refused command throws from `send` and is a value in a pipeline, next to the others' replies.
        expectError {
            try client.send(RedisCommand("LPUSH", key: "\(prefix):counter", "x"))
        } where: { error in
            guard case .server(_, let message) = error as? RedisError else { return false }
            return message.hasPrefix("WRONGTYPE")
        }
        let mixed = try client.pipeline([
            RedisCommand("LPUSH", key: "\(prefix):counter", "x"), RedisCommand("GET", key: "\(prefix):counter"),
        ])
        #expect(mixed[0].errorMessage?.hasPrefix("WRONGTYPE") == true)
        #expect(mixed[1] == .bulk("42"))
        #expect(throws: RedisError.self) { try mixed[0].checked() }
    }

    @Test("a pipeline over every master: replies in order, data on the node that owns it")
    func pipelineAcrossMasters() throws {
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        let prefix = uniquePrefix("spread")
        let keys = (0..<300).map { "\(prefix):\($0)" }
        let sets = try client.pipeline(keys.map { RedisCommand("SET", key: $0, "value-\($0)") })
        #expect(sets.allSatisfy { $0 == .simpleString("OK") })
        // Reads interleaved with writes: each reply is the one of its own command.
        var commands: [RedisCommand] = []
        for key in keys {
            commands.append(RedisCommand("GET", key: key))
            commands.append(RedisCommand("APPEND", key: key, "!"))
        }
        let replies = try client.pipeline(commands)
        #expect(replies.count == 600)
        for (index, key) in keys.enumerated() {
            #expect(replies[2 * index] == .bulk("value-\(key)"))
            #expect(replies[2 * index + 1] == .integer(Int64("value-\(key)!".utf8.count)))
        }
        // The keys fell on all three masters, and each is where CLUSTER NODES says its slot is, as redis-cli reads it.
        let masters = try cluster.masters()
        func owner(_ key: String) throws -> LocalRedisCluster.Node {
            let slot = RedisHashSlot.of(key)
            return try #require(masters.first { $0.line.slots.contains { $0.contains(slot) } }).node
        }
        #expect(try Set(keys.map { try owner($0).port }).count == 3)
        for key in keys.prefix(12) {
            #expect(try cluster.cli(owner(key), "GET", key) == "value-\(key)!")
        }
        #expect(try client.pipeline([]) == [])
    }

    @Test("WAIT after a pipeline reports the replica that has its writes")
    func waitForReplicas() throws {
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        let prefix = uniquePrefix("wait")
        let written = try client.pipeline(
            (0..<30).map { RedisCommand("SET", key: "\(prefix):\($0)", $0) }, waitingForReplicas: 1,
            timeout: .seconds(2))
        #expect(written.replies.allSatisfy { $0 == .simpleString("OK") })
        #expect(written.replicas == 1)
        // Asking for more replicas than there are: WAIT gives up at its timeout with the one it has.
        let more = try client.pipeline(
            [RedisCommand("SET", key: "\(prefix):x", 1)], waitingForReplicas: 2, timeout: .milliseconds(100))
        #expect(more.replicas == 1)
    }

    @Test("every master and every node: settings each node holds on its own")
    func everyNode() throws {
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        let all = try client.sendToEveryNode(RedisCommand("CONFIG", "GET", "appendonly"))
        #expect(all.count == 6)
        for reply in all { #expect(try reply.result.get() == .array([.bulk("appendonly"), .bulk("yes")])) }
        let persistence = try client.sendToEveryMaster(RedisCommand("INFO", "persistence"))
        #expect(persistence.count == 3)
        for reply in persistence { #expect(try reply.result.get().string?.contains("aof_enabled:1") == true) }
        let roles = try client.sendToEveryNode(RedisCommand("ROLE"))
        let named = try roles.map { try $0.result.get().array?.first?.string ?? "" }
        #expect(named.sorted() == ["master", "master", "master", "slave", "slave", "slave"])
        for reply in roles {
            let role = try reply.result.get().array?.first?.string
            #expect(role == (reply.node.role == .master ? "master" : "slave"))
        }
        let master = try #require(client.nodes().first)
        #expect(
            try client.send(RedisCommand("CONFIG", "GET", "appendfsync"), to: master.endpoint)
                == .array([.bulk("appendfsync"), .bulk("always")]))
    }

    @Test("SCRIPT FLUSH on every master does not surface: the script is loaded again")
    func scriptFlush() throws {
        let cluster = try sharedCluster()
        let client = try makeClient(cluster)
        let prefix = uniquePrefix("script")
        let script = RedisScript("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[1])")
        let key = "\(prefix):k"
        #expect(try client.eval(script, keys: [key], arguments: "one") == .bulk("one"))
        let owner = try #require(try client.master(forSlot: RedisHashSlot.of(key)))
        let exists = RedisCommand("SCRIPT", "EXISTS", script.sha1)
        #expect(try client.send(exists, to: owner.endpoint) == .array([.integer(1)]))

        for reply in try client.sendToEveryMaster(RedisCommand("SCRIPT", "FLUSH")) { _ = try reply.result.get() }
        #expect(try client.send(exists, to: owner.endpoint) == .array([.integer(0)]))
        #expect(try client.eval(script, keys: [key], arguments: "two") == .bulk("two"))
        #expect(try client.send(exists, to: owner.endpoint) == .array([.integer(1)]))

        // In a pipeline over every master, after another flush.
        for reply in try client.sendToEveryMaster(RedisCommand("SCRIPT", "FLUSH")) { _ = try reply.result.get() }
        let keys = (0..<30).map { "\(prefix):p\($0)" }
        let replies = try client.pipeline(keys.map { RedisCommand(script: script, keys: [$0], arguments: $0) })
        #expect(replies == keys.map { .bulk($0) })
        // A script that fails says what Redis said.
        expectError {
            try client.eval(RedisScript("return redis.call('NOSUCHCOMMAND')"), keys: [key])
        } where: { error in
            guard case .server(_, let message) = error as? RedisError else { return false }
            return message.contains("Unknown Redis command")
        }
    }

    @Test("a keyless script runs on a master")
    func keylessScript() throws {
        let client = try makeClient(try sharedCluster())
        #expect(try client.eval(RedisScript("return ARGV[1] .. ARGV[2]"), arguments: "a", 7) == .bulk("a7"))
    }
}

/// This process's TCP sockets whose far end is one of `ports` on this machine, as descriptors with their inodes
/// (from `/proc/self/fd` and `/proc/net/tcp`, `tcp6`).
private func socketDescriptors(connectedTo ports: Set<Int>) -> [(descriptor: Int32, inode: String)] {
    var farPorts: [String: Int] = [:]
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        guard let bytes = try? readFile(table) else { continue }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n").dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count > 9, let port = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
            else { continue }
            farPorts[String(fields[9])] = port
        }
    }
    return directoryEntries("/proc/self/fd").compactMap { name in
        guard let descriptor = Int32(name), let inode = socketInode(descriptor),
            let port = farPorts[inode], ports.contains(port)
        else { return nil }
        return (descriptor, inode)
    }
}

/// The inode of the socket open as `descriptor`, or nil if it is not a socket.
private func socketInode(_ descriptor: Int32) -> String? {
    var target = [CChar](repeating: 0, count: 128)
    let count = readlink("/proc/self/fd/\(descriptor)", &target, target.count - 1)
    guard count > 0 else { return nil }
    let text = String(decoding: target[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard text.hasPrefix("socket:["), text.hasSuffix("]") else { return nil }
    return String(text.dropFirst(8).dropLast())
}
